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

// Settled judges whether a watch may stop on this diagnosis: a finding confirmed at warning or
// above, with no other finding still suspected that more watching would settle (a suspicion
// that says how much longer to watch); or, over a window of CleanWindow or more, no finding
// at all and nothing pending, neither suspected nor judged yet for want of time. Kinds not
// judged yet do not hold a watch whose problem is confirmed: the report lists them with the
// time each would need.
func (d *Diagnosis) Settled() Settlement {
	for _, f := range d.Findings {
		if f.Confidence == Suspected && f.WatchMoreSeconds > 0 {
			return Settlement{}
		}
	}
	confirmed := 0
	for _, f := range d.Findings {
		if f.Confidence != Suspected && f.Severity.Rank() >= Warning.Rank() {
			confirmed++
		}
	}
	if confirmed > 0 {
		return Settlement{Done: true, Confirmed: confirmed, Why: fmt.Sprintf("settled: %d finding(s) confirmed", confirmed)}
	}
	for _, f := range d.Findings {
		if f.Confidence == Suspected {
			return Settlement{}
		}
	}
	for _, n := range d.NotJudged {
		if n.WatchMoreSeconds > 0 {
			return Settlement{}
		}
	}
	if d.Window.Seconds < CleanWindow.Seconds() {
		return Settlement{}
	}
	return Settlement{Done: true, Why: "settled: nothing left to confirm, no problem found"}
}
