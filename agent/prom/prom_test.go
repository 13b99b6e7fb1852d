package prom

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/memdoctor/memdoctor/agent"
)

func TestCollector(t *testing.T) {
	runtime.GC() // the test's: so that the live heap (as of the last GC) is known
	a, err := agent.Start(context.Background(), agent.WithSampleInterval(100*time.Millisecond), agent.WithBudget(1<<40))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Stop(context.Background())
	c := NewCollector(a)
	deadline := time.Now().Add(30 * time.Second)
	for a.Stats().Time.IsZero() {
		if time.Now().After(deadline) {
			t.Fatal("no sample")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if problems, err := testutil.CollectAndLint(c); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %+v", err, problems)
	}
	// 10 breakdown classes, rss, 4 rates, pressure, budget, budget used, 3 event counters.
	if n := testutil.CollectAndCount(c); n != 21 {
		t.Errorf("%d metrics, want 21", n)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	want := `
# HELP memdoctor_memory_budget_bytes The memory budget the guard measures against.
# TYPE memdoctor_memory_budget_bytes gauge
memdoctor_memory_budget_bytes 1.099511627776e+12
# HELP memdoctor_pressure_level The guard's memory pressure level: 0 normal, 1 high, 2 critical.
# TYPE memdoctor_pressure_level gauge
memdoctor_pressure_level 0
# HELP memdoctor_trigger_events_total Trigger events since the agent started.
# TYPE memdoctor_trigger_events_total counter
memdoctor_trigger_events_total{trigger="goroutine-growth"} 0
memdoctor_trigger_events_total{trigger="heap-jump"} 0
memdoctor_trigger_events_total{trigger="rss-threshold"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "memdoctor_memory_budget_bytes", "memdoctor_pressure_level", "memdoctor_trigger_events_total"); err != nil {
		t.Error(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			key := mf.GetName()
			for _, l := range m.GetLabel() {
				key += "/" + l.GetValue()
			}
			values[key] = m.GetGauge().GetValue() + m.GetCounter().GetValue()
		}
	}
	st := a.Stats()
	if values["memdoctor_rss_bytes"] <= 0 || values["memdoctor_breakdown_bytes/live_heap"] <= 0 || values["memdoctor_breakdown_bytes/file"] <= 0 {
		t.Errorf("values %v", values)
	}
	var sum float64
	for _, class := range []string{"live_heap", "garbage", "fragmentation", "retained_free", "released_resident", "stacks", "runtime_metadata", "non_go", "file"} {
		sum += values["memdoctor_breakdown_bytes/"+class]
	}
	sum -= values["memdoctor_breakdown_bytes/not_resident"]
	if rss := values["memdoctor_rss_bytes"]; sum != rss {
		t.Errorf("the breakdown classes add up to %.0f, RSS is %.0f", sum, rss)
	}
	if f := values["memdoctor_memory_budget_used_ratio"]; f <= 0 || f >= 1 || st.Pressure.BudgetBytes != 1<<40 {
		t.Errorf("budget used %v", f)
	}
}

func TestCollectorBeforeTheFirstSample(t *testing.T) {
	a, err := agent.Start(context.Background(), agent.WithSampleInterval(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	a.Stop(context.Background()) // may or may not have taken its first sample
	n := testutil.CollectAndCount(NewCollector(a))
	if n != 3 && n != 19 { // event counters only, or everything but the budget
		t.Errorf("%d metrics", n)
	}
}
