package promapi

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/memdoctor/memdoctor/diagnose"
)

func pair(t time.Time, v float64) model.SamplePair {
	return model.SamplePair{Timestamp: model.TimeFromUnixNano(t.UnixNano()), Value: model.SampleValue(v)}
}

// add records a reading of q at at, on a 15 s grid from t0.
func (b *build) add(q quantity, at time.Time, v float64) {
	if b.g[q] == nil {
		b.g[q] = &grid{base: t0.UnixMilli(), step: 15000, v: make([]float64, 4001)}
		for i := range b.g[q].v {
			b.g[q].v[i] = math.NaN()
		}
	}
	b.g[q].put(at.UnixMilli(), v)
}

// TestFillTrustsNothing: readings outside the window, negative and non-finite readings,
// series of other targets and a second series for the same target are all left out.
func TestFillTrustsNothing(t *testing.T) {
	l := Labels{"job": "api", "instance": "h:1"}
	b := newBuild(l)
	byFP := map[model.Fingerprint]*build{l.fingerprint(): b}
	m := func(extra ...string) model.Metric {
		mm := model.Metric{"__name__": "process_resident_memory_bytes", "job": "api", "instance": "h:1"}
		for i := 0; i+1 < len(extra); i += 2 {
			mm[model.LabelName(extra[i])] = model.LabelValue(extra[i+1])
		}
		return mm
	}
	start, end := t0, t0.Add(time.Minute)
	mat := model.Matrix{
		nil,
		{Metric: m(), Values: []model.SamplePair{
			pair(t0.Add(-time.Second), 1), pair(t0, 100), pair(t0.Add(15*time.Second), -5), pair(t0.Add(30*time.Second), math.NaN()),
			pair(t0.Add(45*time.Second), math.Inf(1)), pair(t0.Add(time.Minute), 200), pair(t0.Add(2*time.Minute), 300),
		}},
		{Metric: m("instance", "other:1"), Values: []model.SamplePair{pair(t0, 7)}},
		{Metric: m("replica", "b"), Values: []model.SamplePair{pair(t0.Add(10*time.Second), 9)}},
	}
	fill(queryOf(qRSS), mat, byFP, start, end, 15*time.Second)
	s := b.series(qRSS)
	if got := s.Values(); len(got) != 2 || got[0] != 100 || got[1] != 200 {
		t.Errorf("RSS readings %v, want [100 200]", got)
	}
	// GOGC may be negative (off); a setting keeps its changes only.
	gogc := []model.SamplePair{pair(t0, 100), pair(t0.Add(15*time.Second), 100), pair(t0.Add(30*time.Second), -1), pair(t0.Add(45*time.Second), -1)}
	fill(queryOf(qGOGC), model.Matrix{{Metric: m(), Values: gogc}}, byFP, start, end, 15*time.Second)
	if g := b.series(qGOGC); g.Len() != 2 || g.Points[0].V != 100 || g.Last().V != -1 || !g.Last().T.Equal(t0.Add(30*time.Second)) {
		t.Errorf("GOGC 100 then off read as %v", g.Points)
	}
	// go_info: the latest version wins, and its label is not part of the target.
	info := model.Matrix{
		{Metric: m("version", "go1.25.0"), Values: []model.SamplePair{pair(t0, 1)}},
		{Metric: m("version", "go1.26.1"), Values: []model.SamplePair{pair(t0.Add(time.Minute), 1)}},
	}
	fill(queryOf(qInfo), info, byFP, start, end, 15*time.Second)
	if b.version != "go1.26.1" {
		t.Errorf("version %q, want the latest, go1.26.1", b.version)
	}
}

// TestRestartKeepsCountersMonotonic: a process restarted in the window starts its counters
// again from zero; the evidence continues them and records the restart.
func TestRestartKeepsCountersMonotonic(t *testing.T) {
	l := Labels{"job": "api", "instance": "h:1"}
	b := newBuild(l)
	restart := t0.Add(5 * time.Minute)
	for at := t0; !at.After(t0.Add(10 * time.Minute)); at = at.Add(15 * time.Second) {
		started, up := t0.Add(-time.Hour), at.Sub(t0.Add(-time.Hour)).Seconds()
		if !at.Before(restart) {
			started, up = restart, at.Sub(restart).Seconds()
		}
		b.add(qStart, at, float64(started.Unix()))
		b.add(qAllocBytes, at, up*1e6) // 1 MB/s
		b.add(qGoroutines, at, 10)
	}
	ev := b.evidence(&Config{})
	if len(ev.Restarts) != 1 || !ev.Restarts[0].Equal(restart) || !ev.Target.Started.Equal(restart) {
		t.Errorf("restarts %v, started %s; want one at %s", ev.Restarts, ev.Target.Started, restart)
	}
	if r := ev.AllocBytes.Rate(); math.Abs(r-1e6) > 0.05e6 {
		t.Errorf("allocation rate across the restart %.0f B/s, want about 1e6", r)
	}
}

// TestGCCPUFractionOfTheLastGC: go_memstats_gc_cpu_fraction is of the CPU available up to
// the last GC's end. A process whose GC did not run in the window (its start-up's GCs took a
// quarter of its first second) spent no GC CPU in it, however high that share.
func TestGCCPUFractionOfTheLastGC(t *testing.T) {
	b := newBuild(Labels{"job": "api", "instance": "h:1"})
	started := t0.Add(-time.Minute)
	for at := t0; !at.After(t0.Add(10 * time.Minute)); at = at.Add(15 * time.Second) {
		b.add(qStart, at, float64(started.Unix()))
		b.add(qGOMAXPROCS, at, 2)
		b.add(qGCCPUFraction, at, 0.25)
		b.add(qLastGC, at, float64(started.Add(time.Second).Unix()))
	}
	ev := b.evidence(&Config{})
	if ev.GCCPU.Len() < 2 || ev.GCCPU.Increase() != 0 {
		t.Errorf("GC CPU over a window without a GC: %d readings, +%.3f s; want 0", ev.GCCPU.Len(), ev.GCCPU.Increase())
	}
}

// series15s is an hour of readings every 15 s.
func series15s(f func(i int, at time.Time) float64) []model.SamplePair {
	var out []model.SamplePair
	for i := range 241 {
		at := t0.Add(time.Duration(i) * 15 * time.Second)
		out = append(out, pair(at, f(i, at)))
	}
	return out
}

// TestDiagnosedLikeASession: an hour of 15 s scrapes of a heap whose floor climbs under a
// sawtooth of garbage is a heap leak for the same rules as a session; the same sawtooth on a
// flat floor is not, and what Prometheus cannot show is said as not judged.
func TestDiagnosedLikeASession(t *testing.T) {
	leaky, flat := Labels{"job": "api", "instance": "a:1"}, Labels{"job": "api", "instance": "b:1"}
	builds := map[model.Fingerprint]*build{leaky.fingerprint(): newBuild(leaky), flat.fingerprint(): newBuild(flat)}
	gauge := func(leak float64) func(i int, at time.Time) float64 {
		return func(i int, at time.Time) float64 {
			return 40e6 + leak*float64(i) + float64(i%5)*8e6 // floor, and garbage up to 32 MB
		}
	}
	for _, tc := range []struct {
		l    Labels
		leak float64 // bytes per reading
	}{{leaky, 250e3}, {flat, 0}} {
		mt := func(vs []model.SamplePair) model.Matrix {
			mm := model.Metric{}
			for k, v := range tc.l {
				mm[model.LabelName(k)] = model.LabelValue(v)
			}
			return model.Matrix{{Metric: mm, Values: vs}}
		}
		end := t0.Add(time.Hour)
		fill(queryOf(qHeapInUse), mt(series15s(gauge(tc.leak))), builds, t0, end, 15*time.Second)
		fill(queryOf(qRSS), mt(series15s(func(i int, at time.Time) float64 { return 30e6 + gauge(tc.leak)(i, at) })), builds, t0, end, 15*time.Second)
		fill(queryOf(qHeapFree), mt(series15s(func(i int, at time.Time) float64 { return 5e6 })), builds, t0, end, 15*time.Second)
		fill(queryOf(qRetainedShare), mt(series15s(func(i int, at time.Time) float64 { return 5e6 / (30e6 + gauge(tc.leak)(i, at)) })), builds, t0, end, 15*time.Second)
		fill(queryOf(qGoroutines), mt(series15s(func(i int, at time.Time) float64 { return 50 })), builds, t0, end, 15*time.Second)
		fill(queryOf(qGCCycles), mt(series15s(func(i int, at time.Time) float64 { return float64(i) })), builds, t0, end, 15*time.Second)
		fill(queryOf(qAllocBytes), mt(series15s(func(i int, at time.Time) float64 { return float64(i) * 30e6 })), builds, t0, end, 15*time.Second)
	}
	verdict := func(l Labels) *diagnose.Diagnosis {
		return diagnose.Diagnose(builds[l.fingerprint()].evidence(&Config{}), diagnose.Options{})
	}
	d := verdict(leaky)
	if len(d.Findings) == 0 || d.Findings[0].Kind != diagnose.KindHeapLeak || d.Findings[0].Severity != diagnose.Warning || d.Findings[0].Confidence != diagnose.Confirmed {
		t.Fatalf("leaky heap: findings %+v", d.Findings)
	}
	if g := d.Findings[0].Evidence["growth_bytes_per_minute"]; math.Abs(g-1e6) > 0.2e6 {
		t.Errorf("leak rate %.0f B/min, want about 1 MB/min", g)
	}
	d = verdict(flat)
	for _, f := range d.Findings {
		if f.Severity.Rank() >= diagnose.Warning.Rank() {
			t.Errorf("flat heap: %s %s: %s", f.Severity, f.Kind, f.Title)
		}
	}
	reasons := map[diagnose.Kind]string{}
	for _, nj := range d.NotJudged {
		reasons[nj.Kind] = nj.Reason
	}
	for kind, want := range map[diagnose.Kind]string{
		diagnose.KindNonGoMemory:       gapNonGo,
		diagnose.KindAllocationHotspot: gapProfiles,
		diagnose.KindOOMRisk:           gapBudget,
	} {
		if r := reasons[kind]; r == "" || !strings.Contains(r, want) {
			t.Errorf("%s: not judged because %q, want %q", kind, r, want)
		}
	}
}

// TestLiveFromGoal: the live heap is read back from the goal only where GOGC set it.
func TestLiveFromGoal(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name                                    string
		gogc, limit, nonHeap, goal, inUse, scan float64
		want                                    float64 // -1: not derived
	}{
		{"GOGC=100", 100, -1, 10 * mib, 200 * mib, 180 * mib, -1, 100 * mib},
		{"GOGC=50 with stacks and globals", 50, -1, 10 * mib, 152 * mib, 140 * mib, 4 * mib, 100 * mib},
		{"never above the heap in use", 100, -1, 10 * mib, 200 * mib, 60 * mib, -1, 60 * mib},
		{"a limit far away", 100, 1 << 30, 10 * mib, 200 * mib, 180 * mib, -1, 100 * mib},
		{"a limit that may set the goal", 100, 240 * mib, 30 * mib, 200 * mib, 180 * mib, -1, -1},
		{"GOGC=off", -1, 240 * mib, 30 * mib, 200 * mib, 180 * mib, -1, -1},
		{"GOGC unknown", 0, -1, 10 * mib, 200 * mib, 180 * mib, -1, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBuild(Labels{"job": "a", "instance": "h:1"})
			add := func(q quantity, v float64) {
				if v != -1 && !(q == qGOGC && v == 0) {
					b.add(q, t0, v)
				}
			}
			add(qGOGC, tc.gogc)
			add(qGOMemLimit, tc.limit)
			add(qNonHeap, tc.nonHeap)
			add(qHeapGoal, tc.goal)
			add(qHeapInUse, tc.inUse)
			add(qScan, tc.scan)
			ev := b.evidence(&Config{})
			switch {
			case tc.want < 0 && !ev.Live.Empty():
				t.Errorf("live heap %.0f derived, want none", ev.Live.Last().V)
			case tc.want >= 0 && (ev.Live.Len() != 1 || math.Abs(ev.Live.Last().V-tc.want) > 1):
				t.Errorf("live heap %v, want %.0f", ev.Live.Values(), tc.want)
			}
		})
	}
}
