// Package prom exposes the memdoctor agent's derived figures as a prometheus.Collector: where
// resident memory goes (the breakdown), GC cycles per second, the GC's and the mark assists'
// share of the CPU, the allocation rate, the guard's pressure level and budget, and the
// trigger events. It is a package of its own so that the agent does not depend on the
// Prometheus client.
//
//	reg.MustRegister(prom.NewCollector(a))
//
// The runtime's own figures are the Go collector's (collectors.NewGoCollector); these are
// memdoctor's readings of them.
package prom

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/memdoctor/memdoctor/agent"
	"github.com/memdoctor/memdoctor/agent/breakdown"
)

// Collector collects an agent's figures at scrape time. It is safe for concurrent use.
type Collector struct {
	a *agent.Agent

	breakdown, rss, gcRate, gcCPU, assistCPU, allocRate *prometheus.Desc
	pressure, budget, budgetUsed, events                *prometheus.Desc
}

var _ prometheus.Collector = (*Collector)(nil)

// NewCollector returns a collector of a's figures.
func NewCollector(a *agent.Agent) *Collector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("memdoctor_"+name, help, labels, nil)
	}
	return &Collector{
		a:          a,
		breakdown:  d("breakdown_bytes", "Resident memory by where it goes (memdoctor's breakdown of RSS); class \"not_resident\" is subtracted.", "class"),
		rss:        d("rss_bytes", "Resident set size of the process."),
		gcRate:     d("gc_cycles_per_second", "GC cycles per second over the last minute."),
		gcCPU:      d("gc_cpu_fraction", "Share of the CPU available to Go (GOMAXPROCS x wall time) spent in the GC over the last minute."),
		assistCPU:  d("gc_assist_cpu_fraction", "Share of the CPU available to Go spent in GC mark assists by allocating goroutines over the last minute."),
		allocRate:  d("alloc_bytes_per_second", "Heap allocation rate over the last minute."),
		pressure:   d("pressure_level", "The guard's memory pressure level: 0 normal, 1 high, 2 critical."),
		budget:     d("memory_budget_bytes", "The memory budget the guard measures against."),
		budgetUsed: d("memory_budget_used_ratio", "Resident memory as a fraction of the budget."),
		events:     d("trigger_events_total", "Trigger events since the agent started.", "trigger"),
	}
}

// Describe sends the descriptions of every metric.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.breakdown, c.rss, c.gcRate, c.gcCPU, c.assistCPU, c.allocRate, c.pressure, c.budget, c.budgetUsed, c.events} {
		ch <- d
	}
}

// Collect reads the agent's latest figures. Before its first sample only the event counters
// are sent.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	st := c.a.Stats()
	for _, tr := range []string{agent.TriggerHeapJump, agent.TriggerRSS, agent.TriggerGoroutines} {
		ch <- prometheus.MustNewConstMetric(c.events, prometheus.CounterValue, float64(st.Events[tr]), tr)
	}
	if st.Time.IsZero() {
		return
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for class, v := range classes(&st.Breakdown) {
		gauge(c.breakdown, float64(v), class)
	}
	gauge(c.rss, float64(st.Breakdown.RSSBytes))
	gauge(c.gcRate, st.GCPerSecond)
	gauge(c.gcCPU, st.GCCPUFraction)
	gauge(c.assistCPU, st.GCAssistCPUFraction)
	gauge(c.allocRate, st.AllocBytesPerSecond)
	gauge(c.pressure, float64(st.Pressure.Level))
	if st.Pressure.BudgetBytes > 0 {
		gauge(c.budget, float64(st.Pressure.BudgetBytes))
		gauge(c.budgetUsed, st.Pressure.Fraction)
	}
}

// classes names the breakdown's rows as label values.
func classes(b *breakdown.At) map[string]uint64 {
	return map[string]uint64{
		"live_heap":         b.LiveHeapBytes,
		"garbage":           b.GarbageBytes,
		"fragmentation":     b.FragmentationBytes,
		"retained_free":     b.RetainedFreeBytes,
		"released_resident": b.ReleasedResidentBytes,
		"stacks":            b.StacksBytes,
		"runtime_metadata":  b.RuntimeMetadataBytes,
		"non_go":            b.NonGoBytes,
		"file":              b.FileBytes,
		"not_resident":      b.NotResidentBytes,
	}
}
