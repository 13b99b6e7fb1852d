package diagnose

import (
	"fmt"
	"time"
)

// CleanWindow is the least window a watch that finds no problem covers before it stops: a
// slow leak needs time to show (the diagnosis states the slowest it could have seen). A watch
// of a process that may still be warming up covers it too before a growth settles it.
const CleanWindow = 30 * time.Second

// WarmUp is how long after its start a process may still be warming up: a cache filling
// toward its bound looks exactly like a heap leak until it levels off, to every statistic of
// the readings (the lab's cache-warmup, 25 s after its start, reads as tcp-reassembly's leak
// does at 20 s: five readings that only rise, the last third's slope 0.58-0.70 of the whole
// against 0.61-1.46 for the lab's leaks), and resident memory rises with it. A growth of memory
// (a heap leak, memory-growth) whose readings begin within WarmUp of the process's start (or of
// a start not known) settles a watch only once the window covers CleanWindow, as every watch
// did before it stopped at the first confirmation. Goroutines are
// not held: their counts settle within seconds of a start (the lab's goroutine leaks are
// confirmed at 15 s from their start, and no control of the lab, the real programs or the
// simulator comes near).
const WarmUp = time.Minute

// Settlement says whether a watch that stops once its verdict is in (watch --until-confirmed)
// may stop on a diagnosis of what it recorded so far.
type Settlement struct {
	// Done: nothing more watching would change is left; Why says so in a line.
	Done bool
	Why  string
	// Confirmed counts the findings confirmed at warning or above. A watch stops on a
	// confirmed problem at once: each confirmation holds the rules' false-alarm rate however
	// often the session is diagnosed (rule.Trend.FalseAlarm).
	Confirmed int
}

// Settled judges whether a watch may stop on this diagnosis of a process started at started
// (zero: not known). Nothing stops it while a leak is suspected with time to settle it (a
// suspicion that says how much longer to watch). A leak confirmed at warning or above with its
// culprit named stops it at once: kinds not judged yet, and suspicions of other kinds, do not
// hold it (the report lists them with the time each would need; a hotspot that waits for ten
// GC cycles when the leak makes the GC rare would hold it for minutes). Any other confirmed
// problem (a spike, the GC's cost, memory outside Go, memory-growth) stops it once nothing is
// pending, suspected or left that more time would judge: a spike found first does not end a
// watch before the leak beneath it could show, nor a hotspot before the cost climbing behind
// it. A leak whose culprit is not named yet (the second goroutine profile has not come, or the
// first culprit holds less than half of the growth) waits until the window covers CleanWindow; a growth of memory (a heap leak, memory-growth) in a
// process that may still be warming up (WarmUp) waits as every watch did before it stopped at
// the first confirmation: for CleanWindow, and for nothing else to be pending, as the warm-up
// meanwhile levels off or not. Finding no problem, it stops over a window of CleanWindow or
// more with nothing pending.
func (d *Diagnosis) Settled(started time.Time) Settlement {
	pendingLeak, pending := false, false // suspected, with time to settle it
	for _, f := range d.Findings {
		if f.Confidence == Suspected && f.WatchMoreSeconds > 0 {
			pending = true
			pendingLeak = pendingLeak || isLeak(f.Kind)
		}
	}
	if pendingLeak {
		return Settlement{}
	}
	long := d.Window.Seconds >= CleanWindow.Seconds()
	young := started.IsZero() || d.Window.Start.Sub(started) < WarmUp
	unjudged := false
	for _, n := range d.NotJudged {
		unjudged = unjudged || n.WatchMoreSeconds > 0
	}
	confirmed, leaks, nameless := 0, 0, 0
	for _, f := range d.Findings {
		if f.Confidence == Suspected || f.Severity.Rank() < Warning.Rank() {
			continue
		}
		confirmed++
		switch {
		case !long && (blamesCode(f.Kind) && !named(f) || young && warmsUp(f.Kind)):
			nameless++
		case isLeak(f.Kind) && !(young && warmsUp(f.Kind)):
			leaks++
		}
	}
	switch {
	// A leak settles the watch at once, whatever else is pending but another leak; another
	// cause only once nothing is left that more time would judge (a spike found first does
	// not end a watch before a leak beneath it could show, nor a hotspot before the cost
	// climbing behind it).
	case leaks > 0, confirmed > 0 && nameless == 0 && !unjudged && !pending:
		return Settlement{Done: true, Confirmed: confirmed, Why: fmt.Sprintf("settled: %d finding(s) confirmed", confirmed)}
	case confirmed > 0, unjudged, pending, !long:
		return Settlement{}
	}
	for _, f := range d.Findings {
		if f.Confidence == Suspected {
			return Settlement{}
		}
	}
	return Settlement{Done: true, Why: "settled: nothing left to confirm, no problem found"}
}

// named reports whether a finding's culprit is named: its first culprit holds well over half of
// what it blames (namedShare). A smaller share is a function beside the cause, or a tie between
// a few samples: the goroutines of a library
// that grew while the heap profiles had not yet sampled what the program's call into it keeps
// (net/http's connections before the call that opened them shows: the lab's http-body-leak,
// from the agent, named the load generator with 5% of the growth at 15 s, its checkStock with
// all of it at 20 s; from memory, two functions with one 512 KiB sample each at 20 s).
func named(f Finding) bool { return len(f.Culprits) > 0 && f.Culprits[0].Share >= namedShare }

// namedShare is the least share of a finding's growth its first culprit holds to be named.
const namedShare = 0.55

// warmsUp reports whether a kind is memory that grows, as a warm-up's does: the live heap, or
// resident memory (a cache filling after a start raises both).
func warmsUp(k Kind) bool { return k == KindHeapLeak || k == KindMemoryGrowth }

// isLeak reports whether a kind is a leak: what a watch is most often for.
func isLeak(k Kind) bool { return k == KindHeapLeak || k == KindGoroutineLeak }

// blamesCode reports whether a finding kind names the code that causes it.
func blamesCode(k Kind) bool {
	switch k {
	case KindHeapLeak, KindGoroutineLeak, KindTransientSpike, KindAllocationHotspot, KindCostGrowth:
		return true
	}
	return false
}

// AwaitsGC says which verdict more readings of the live heap would settle, "" when none: a
// finding suspected, or a kind not judged, whose readings only the target's GC makes (a heap
// leak with too few readings while the heap climbs, a heap leak suspected, a burst no GC was
// seen after). A GC asked of the target now gives one at once (watch --until-confirmed asks
// its pprof for one, within a cost it bounds).
func (d *Diagnosis) AwaitsGC() string {
	for _, f := range d.Findings {
		if f.AwaitsGC {
			return fmt.Sprintf("%s suspected", f.Kind)
		}
	}
	for _, n := range d.NotJudged {
		if n.AwaitsGC {
			return fmt.Sprintf("%s not judged yet", n.Kind)
		}
	}
	return ""
}
