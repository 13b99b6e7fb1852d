package sim

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// WatchShapes are the shapes the watch study watches: the healthy ones (what must never be
// confirmed, however often it is looked at: a steady state, a cache warming up to its bound,
// bursts, a GC under pressure, freed memory kept, memory outside Go) and the leaks it must
// confirm soon (steady ones at a library's rates, and the others).
var WatchShapes = []Shape{Healthy, Warmup, Spikes, GCPressure, Retention, NonGo,
	SteadyHeapLeak, SteadyGoroutineLeak, HeapLeak, GoroutineLeak, LibraryGoroutineLeak}

// watchLeaks are the leaks among WatchShapes; the others are healthy.
var watchLeaks = []Shape{SteadyHeapLeak, SteadyGoroutineLeak, HeapLeak, GoroutineLeak, LibraryGoroutineLeak}

// WatchVantages are the vantage points a watch --until-confirmed records from.
var WatchVantages = []Vantage{Run, WatchPprof, WatchAgent, Profiles}

// Look is one look of a watch at a session: what the diagnosis of its first At said.
type Look struct {
	At    time.Duration
	Found []Finding
	// Settled says the watch would stop here (diagnose.Diagnosis.Settled).
	Settled bool
}

// Watched is one session looked at again and again, as watch --until-confirmed looks at the
// session it records.
type Watched struct {
	Spec  Spec
	Truth Truth
	// Confirmed is the first look that finds every kind the truth requires at warning (0 =
	// none; for a healthy shape, none is wanted); Verdict the first that does so with each
	// kind's culprit among its first three.
	Confirmed, Verdict time.Duration
	// Stop is the first look the watch stops at (0 = none), StopRight whether the verdict
	// there is right.
	Stop      time.Duration
	StopRight bool
	// FalseAlarm is the first look with a kind the truth says is absent at warning (0 =
	// none), FalseKinds what it reported; FalseLeak the first with a leak (heap-leak,
	// goroutine-leak) the truth says is absent, which the sequential test's false-alarm rate
	// is about. StopFalse says the watch stops on a verdict with an absent kind at warning.
	FalseAlarm time.Duration
	FalseKinds []string
	FalseLeak  time.Duration
	StopFalse  bool
}

// WatchLooks judges the looks at one session against its truth.
func WatchLooks(spec Spec, tr Truth, looks []Look) Watched {
	w := Watched{Spec: spec, Truth: tr}
	for _, l := range looks {
		right, falseKinds := tr.judge(l.Found)
		if w.Confirmed == 0 && len(tr.Kinds) > 0 && tr.warned(l.Found) {
			w.Confirmed = l.At
		}
		if w.Verdict == 0 && len(tr.Kinds) > 0 && right {
			w.Verdict = l.At
		}
		if w.FalseAlarm == 0 && len(falseKinds) > 0 {
			w.FalseAlarm, w.FalseKinds = l.At, falseKinds
		}
		if w.FalseLeak == 0 && (slices.Contains(falseKinds, KindHeapLeak) || slices.Contains(falseKinds, KindGoroutineLeak)) {
			w.FalseLeak = l.At
		}
		if w.Stop == 0 && l.Settled {
			w.Stop, w.StopRight, w.StopFalse = l.At, right && len(falseKinds) == 0, len(falseKinds) > 0
		}
	}
	return w
}

// judge says whether a diagnosis finds every kind the truth requires (at warning, or at all
// for the kinds it only suspects) with its culprit among the first three, and which absent
// kinds it reports at warning.
func (t Truth) judge(found []Finding) (right bool, falseKinds []string) {
	right = true
	for _, k := range t.Kinds {
		i := slices.IndexFunc(found, func(f Finding) bool {
			return f.Kind == k && (f.Warning || slices.Contains(t.Suspect, k))
		})
		if i < 0 {
			right = false
			continue
		}
		if want := t.Culprits[k]; want != "" {
			if j := slices.Index(found[i].Culprits, want); j < 0 || j >= 3 {
				right = false
			}
		}
	}
	for _, f := range found {
		if f.Warning && slices.Contains(t.Absent, f.Kind) && !slices.Contains(falseKinds, f.Kind) {
			falseKinds = append(falseKinds, f.Kind)
		}
	}
	return right, falseKinds
}

// warned says whether a diagnosis finds every kind the truth requires at warning (at all for
// the kinds it only suspects), whatever culprits it names.
func (t Truth) warned(found []Finding) bool {
	for _, k := range t.Kinds {
		if !slices.ContainsFunc(found, func(f Finding) bool { return f.Kind == k && (f.Warning || slices.Contains(t.Suspect, k)) }) {
			return false
		}
	}
	return true
}

// WatchMarkdown writes the watch study: by shape and vantage point, the sessions with a false
// leak (heap-leak, goroutine-leak) at some look, with any false warning at some look, and
// whose watch stops on a false warning; for the leaks, the looks the verdict came at and the
// watch stopped at. Then the rates over the healthy shapes, with their 95% upper bounds.
func WatchMarkdown(ws []Watched) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| shape | vantage | sessions | false leak at some look | false warning at some look | stops on a false warning | confirmed at (median, max) | with its culprit at (median, max) | watch stops at (median), right |\n|---|---|---|---|---|---|---|---|---|\n")
	type key struct {
		s Shape
		v Vantage
	}
	groups := map[key][]Watched{}
	for _, w := range ws {
		k := key{w.Spec.Shape, w.Spec.Vantage}
		groups[k] = append(groups[k], w)
	}
	var healthy, leaks, warnings, stops int
	for _, s := range WatchShapes {
		for _, v := range WatchVantages {
			g := groups[key{s, v}]
			if len(g) == 0 {
				continue
			}
			var falseLeak, falseWarn, falseStop, right int
			var confirmed, verdicts, stopped []time.Duration
			for _, w := range g {
				falseLeak += b2i(w.FalseLeak > 0)
				falseWarn += b2i(w.FalseAlarm > 0)
				falseStop += b2i(w.StopFalse)
				if w.Confirmed > 0 {
					confirmed = append(confirmed, w.Confirmed)
				}
				if w.Verdict > 0 {
					verdicts = append(verdicts, w.Verdict)
				}
				if w.Stop > 0 {
					stopped = append(stopped, w.Stop)
					right += b2i(w.StopRight)
				}
			}
			if !slices.Contains(watchLeaks, s) {
				healthy += len(g)
				leaks += falseLeak
				warnings += falseWarn
				stops += falseStop
			}
			conf, verdict := spread(confirmed, len(g)), spread(verdicts, len(g))
			if len(w0(g).Truth.Kinds) == 0 {
				conf, verdict = "–", "–"
			}
			fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %d | %s | %s | %s, %d/%d |\n", s, v, len(g), falseLeak, falseWarn, falseStop, conf, verdict, medianLook(stopped), right, len(g))
		}
	}
	if healthy > 0 {
		rate := func(k int) string {
			return fmt.Sprintf("%d (%.1f%%; 95%% upper bound %.1f%%)", k, 100*float64(k)/float64(healthy), 100*upper95(k, healthy))
		}
		fmt.Fprintf(&b, "\nHealthy shapes (every shape but the leaks), %d sessions: a false leak at some look %s; any false warning at some look %s; the watch stops on a false warning %s.\n",
			healthy, rate(leaks), rate(warnings), rate(stops))
	}
	return b.String()
}

func w0(g []Watched) Watched { return g[0] }

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// spread is "median, max" of the looks a verdict came at, with how many never had it.
func spread(ds []time.Duration, of int) string {
	if len(ds) == 0 {
		return "never"
	}
	slices.Sort(ds)
	s := fmt.Sprintf("%s, %s", ds[len(ds)/2], ds[len(ds)-1])
	if n := of - len(ds); n > 0 {
		s += fmt.Sprintf(" (%d never)", n)
	}
	return s
}

// medianLook is the median of looks, "–" when there are none.
func medianLook(ds []time.Duration) string {
	if len(ds) == 0 {
		return "–"
	}
	slices.Sort(ds)
	return ds[len(ds)/2].String()
}

// upper95 is the 95% upper confidence bound of a rate of k in n (Wilson's score interval).
func upper95(k, n int) float64 {
	const z = 1.96
	p, nf := float64(k)/float64(n), float64(n)
	return (p + z*z/(2*nf) + z*math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf))) / (1 + z*z/nf)
}
