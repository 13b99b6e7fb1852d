package agent

import (
	"fmt"
	"time"
)

// triggerWindow is how far back a trigger looks for its baseline.
const triggerWindow = time.Minute

// gcPoint is the heap at the end of one GC cycle.
type gcPoint struct {
	t     time.Time
	cycle uint64
	live  uint64
	goal  uint64
}

// procPoint is the process at one sample.
type procPoint struct {
	t          time.Time
	rss        uint64
	goroutines int
}

// firing is a trigger that fired.
type firing struct {
	trigger string
	detail  string
	values  map[string]float64
	// spikeStart: the rise began after this time; the "before" profile must not be newer.
	spikeStart time.Time
}

// triggerConfig holds the thresholds.
type triggerConfig struct {
	heapRatio      float64
	heapBytes      uint64
	rssThreshold   uint64 // 0 = off
	goroutineN     int    // 0 = off
	goroutineRatio float64
	cooldown       time.Duration
}

// triggers decides when to capture: a pure state machine fed with GC points and samples,
// bounded in memory (fixed rings). Only the agent's loop calls it.
type triggers struct {
	cfg      triggerConfig
	gcs      [64]gcPoint
	gcN      int // points held
	gcNext   int
	procs    []procPoint // ring, sized for the window at the sample interval
	procN    int
	procNext int
	rssAbove bool
	lastFire map[string]time.Time
}

func newTriggers(cfg triggerConfig, sampleInterval time.Duration) *triggers {
	n := int(triggerWindow/sampleInterval) + 1
	n = min(max(n, 2), 600)
	return &triggers{cfg: cfg, procs: make([]procPoint, n), lastFire: make(map[string]time.Time, 3)}
}

// cool reports whether trigger may fire at t, and records that it does.
func (tr *triggers) cool(trigger string, t time.Time) bool {
	if last, ok := tr.lastFire[trigger]; ok && t.Sub(last) < tr.cfg.cooldown {
		return false
	}
	tr.lastFire[trigger] = t
	return true
}

// onGC takes the heap at the end of a GC and reports a heap jump: the live heap or the goal
// at least heapRatio above the lowest of the window's earlier GCs, and heapBytes more.
func (tr *triggers) onGC(p gcPoint) (firing, bool) {
	defer tr.addGC(p)
	if tr.cfg.heapRatio <= 0 {
		return firing{}, false
	}
	for _, which := range []string{"live", "goal"} {
		v := func(g gcPoint) uint64 {
			if which == "live" {
				return g.live
			}
			return g.goal
		}
		cur := v(p)
		base, ok := tr.gcMin(p.t, v)
		if !ok || cur < base || cur-base < tr.cfg.heapBytes || float64(cur) < float64(base)*(1+tr.cfg.heapRatio) {
			continue
		}
		if !tr.cool(TriggerHeapJump, p.t) {
			return firing{}, false
		}
		return firing{
			trigger: TriggerHeapJump,
			detail: fmt.Sprintf("heap %s rose from %s to %s at GC %d (+%.0f%% within %s)",
				which, fmtBytes(base), fmtBytes(cur), p.cycle, 100*(float64(cur)/float64(max(base, 1))-1), triggerWindow),
			values: map[string]float64{
				"heap_" + which + "_bytes":     float64(cur),
				"baseline_" + which + "_bytes": float64(base),
				"heap_live_bytes":              float64(p.live),
				"heap_goal_bytes":              float64(p.goal),
				"gc_cycle_count":               float64(p.cycle),
			},
			spikeStart: tr.gcRiseStart(p.t, base, cur, v),
		}, true
	}
	return firing{}, false
}

func (tr *triggers) addGC(p gcPoint) {
	tr.gcs[tr.gcNext] = p
	tr.gcNext = (tr.gcNext + 1) % len(tr.gcs)
	tr.gcN = min(tr.gcN+1, len(tr.gcs))
}

// eachGC calls fn with the held GC points within the window before t, oldest first.
func (tr *triggers) eachGC(t time.Time, fn func(gcPoint)) {
	for i := range tr.gcN {
		g := tr.gcs[(tr.gcNext-tr.gcN+i+len(tr.gcs))%len(tr.gcs)]
		if t.Sub(g.t) <= triggerWindow {
			fn(g)
		}
	}
}

func (tr *triggers) gcMin(t time.Time, v func(gcPoint) uint64) (uint64, bool) {
	var m uint64
	ok := false
	tr.eachGC(t, func(g gcPoint) {
		if !ok || v(g) < m {
			m, ok = v(g), true
		}
	})
	return m, ok
}

// gcRiseStart estimates when a rise from base to cur began: the newest earlier GC whose value
// was still in the lowest quarter of the rise.
func (tr *triggers) gcRiseStart(t time.Time, base, cur uint64, v func(gcPoint) uint64) time.Time {
	limit := base + (cur-base)/4
	var start time.Time
	tr.eachGC(t, func(g gcPoint) {
		if v(g) <= limit {
			start = g.t
		}
	})
	return start
}

// onSample takes one sample's RSS and goroutine count and reports the triggers it fires.
// rss 0 means unknown.
func (tr *triggers) onSample(p procPoint) []firing {
	var out []firing
	if f, ok := tr.checkRSS(p); ok {
		out = append(out, f)
	}
	if f, ok := tr.checkGoroutines(p); ok {
		out = append(out, f)
	}
	tr.procs[tr.procNext] = p
	tr.procNext = (tr.procNext + 1) % len(tr.procs)
	tr.procN = min(tr.procN+1, len(tr.procs))
	return out
}

func (tr *triggers) eachProc(t time.Time, fn func(procPoint)) {
	for i := range tr.procN {
		q := tr.procs[(tr.procNext-tr.procN+i+len(tr.procs))%len(tr.procs)]
		if t.Sub(q.t) <= triggerWindow {
			fn(q)
		}
	}
}

func (tr *triggers) checkRSS(p procPoint) (firing, bool) {
	th := tr.cfg.rssThreshold
	if th == 0 || p.rss == 0 {
		return firing{}, false
	}
	if p.rss < th-th/10 {
		tr.rssAbove = false // re-armed once well below
	}
	if p.rss < th || tr.rssAbove {
		return firing{}, false
	}
	tr.rssAbove = true
	if !tr.cool(TriggerRSS, p.t) {
		return firing{}, false
	}
	var low uint64
	seen := false
	tr.eachProc(p.t, func(q procPoint) {
		if q.rss > 0 && (!seen || q.rss < low) {
			low, seen = q.rss, true
		}
	})
	start := p.t
	if seen && low < p.rss {
		limit := low + (p.rss-low)/4
		tr.eachProc(p.t, func(q procPoint) {
			if q.rss > 0 && q.rss <= limit {
				start = q.t
			}
		})
	}
	return firing{
		trigger: TriggerRSS,
		detail:  fmt.Sprintf("RSS %s rose through the threshold of %s", fmtBytes(p.rss), fmtBytes(th)),
		values: map[string]float64{
			"rss_bytes":           float64(p.rss),
			"rss_threshold_bytes": float64(th),
		},
		spikeStart: start,
	}, true
}

func (tr *triggers) checkGoroutines(p procPoint) (firing, bool) {
	if tr.cfg.goroutineN <= 0 {
		return firing{}, false
	}
	low, seen := 0, false
	tr.eachProc(p.t, func(q procPoint) {
		if !seen || q.goroutines < low {
			low, seen = q.goroutines, true
		}
	})
	if !seen || p.goroutines-low < tr.cfg.goroutineN || float64(p.goroutines) < float64(low)*(1+tr.cfg.goroutineRatio) {
		return firing{}, false
	}
	if !tr.cool(TriggerGoroutines, p.t) {
		return firing{}, false
	}
	limit := low + (p.goroutines-low)/4
	start := p.t
	tr.eachProc(p.t, func(q procPoint) {
		if q.goroutines <= limit {
			start = q.t
		}
	})
	return firing{
		trigger: TriggerGoroutines,
		detail:  fmt.Sprintf("goroutines grew from %d to %d within %s", low, p.goroutines, triggerWindow),
		values: map[string]float64{
			"goroutines_count":          float64(p.goroutines),
			"baseline_goroutines_count": float64(low),
		},
		spikeStart: start,
	}, true
}

// fmtBytes formats a byte count for messages: "12.5 MiB".
func fmtBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}
