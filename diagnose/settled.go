package diagnose

import (
	"fmt"
	"time"
)

// CleanWindow is the least window a watch that finds no problem covers before it stops: a
// slow leak needs time to show (the diagnosis states the slowest it could have seen).
const CleanWindow = 30 * time.Second

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

// Settled judges whether a watch may stop on this diagnosis. It stops on a problem confirmed at
// warning or above, as soon as no other finding is still suspected with time to settle it (a
// suspicion that says how much longer to watch), when that problem is a cause with its
// culprit named: a leak, a spike, the GC's cost, memory outside Go. A symptom (memory-growth,
// oom-risk) waits for the kinds that could explain it to be judged; a cause whose culprit is
// not named yet (the second goroutine profile has not come) waits up to CleanWindow. Kinds not
// judged yet do not hold a watch whose cause is confirmed: the report lists them with the
// time each would need. Finding no problem, it stops over a window of CleanWindow or more
// with nothing pending, neither suspected nor judged yet for want of time.
func (d *Diagnosis) Settled() Settlement {
	for _, f := range d.Findings {
		if f.Confidence == Suspected && f.WatchMoreSeconds > 0 {
			return Settlement{}
		}
	}
	long := d.Window.Seconds >= CleanWindow.Seconds()
	unjudged := false
	for _, n := range d.NotJudged {
		unjudged = unjudged || n.WatchMoreSeconds > 0
	}
	confirmed, causes, nameless := 0, 0, 0
	for _, f := range d.Findings {
		if f.Confidence == Suspected || f.Severity.Rank() < Warning.Rank() {
			continue
		}
		confirmed++
		switch {
		case f.Kind == KindMemoryGrowth || f.Kind == KindOOMRisk:
		case len(f.Culprits) == 0 && blamesCode(f.Kind) && !long:
			nameless++
		default:
			causes++
		}
	}
	switch {
	case causes > 0, confirmed > 0 && nameless == 0 && !unjudged:
		return Settlement{Done: true, Confirmed: confirmed, Why: fmt.Sprintf("settled: %d finding(s) confirmed", confirmed)}
	case confirmed > 0, unjudged, !long:
		return Settlement{}
	}
	for _, f := range d.Findings {
		if f.Confidence == Suspected {
			return Settlement{}
		}
	}
	return Settlement{Done: true, Why: "settled: nothing left to confirm, no problem found"}
}

// blamesCode reports whether a finding kind names the code that causes it.
func blamesCode(k Kind) bool {
	switch k {
	case KindHeapLeak, KindGoroutineLeak, KindTransientSpike, KindAllocationHotspot, KindCostGrowth:
		return true
	}
	return false
}
