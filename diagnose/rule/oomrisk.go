package rule

import (
	"time"

	"github.com/memdoctor/memdoctor/facts"
)

// OOMCase is a process that will run out of memory: why, in the order said.
type OOMCase struct {
	Budget       float64
	BudgetSource string
	Peak         float64
	// HighWater is true when the peak is the kernel's high-water mark; Near when it is within
	// OOM.Near of the budget.
	HighWater, Near bool
	// Trend is set when RSS grows toward the budget (Slope bytes/s, Seconds until it is
	// reached); Soon when that is within OOM.Horizon.
	Trend          bool
	Slope, Seconds float64
	Soon           bool
	OOMKills       uint64
	// Outside is the memory outside the Go heap at the last split (non-Go and files), when
	// it leaves room for a GOMEMLIMIT (HasLimit).
	HasLimit bool
	Outside  float64
}

// OOMKillCase is a process the OOM killer ended in the window, and what the last heap
// profile before it held (HasView false when none could be read).
type OOMKillCase struct {
	Kill    *facts.OOMKill
	View    SnapshotView
	HasView bool
}

// oomRisk reports a process that will reach its memory budget or cgroup limit (by trend), or
// whose peak (the kernel's high-water mark included) is already within 10% of it, or whose
// cgroup saw OOM kills; first of all, one the OOM killer ended in the window.
func oomRisk(fs *facts.Facts, th *Thresholds) outcome {
	if k := fs.OOMKill; k != nil {
		c := &OOMKillCase{Kill: k}
		v := Verdict{Kind: KindOOMRisk, Severity: Critical, Confidence: Confirmed, Start: k.At, End: k.At, Case: c}
		if k.Last != nil {
			if view, err := heapView(k.Last, &th.Culprits); err == nil && len(view.Retainers) > 0 {
				c.View, c.HasView = view, true
				v.Culprits, v.Profiles = view.Retainers, []string{k.Last.Snap.Path}
			}
		}
		return outcome{verdicts: []Verdict{v}}
	}
	ot := &th.OOM
	if fs.Budget == 0 {
		return cannot(KindOOMRisk, WhyNoBudget, 0)
	}
	if fs.RSS.Len() < 3 {
		return outcome{unjudged: &Unjudged{Kind: KindOOMRisk, Why: WhyTooFew, N: fs.RSS.Len()}}
	}
	budget := float64(fs.Budget)
	peak := float64(fs.Summary.RSSPeakBytes)
	c := &OOMCase{Budget: budget, BudgetSource: fs.BudgetSource, Peak: peak, HighWater: fs.Summary.RSSPeakSource == "high-water mark"}
	v := Verdict{Kind: KindOOMRisk, Confidence: Confirmed, Start: fs.RSS.First().T, End: fs.RSS.Last().T, Case: c}
	switch {
	case peak >= ot.Critical*budget:
		v.Severity, c.Near = Critical, true
	case peak >= ot.Near*budget:
		v.Severity, c.Near = Warning, true
	}
	if g := judgeGrowth(fs.RSSSettledFloor, ot.Growth, 0, &th.Trend); g.conf != "" {
		if left := budget - g.last; left > 0 {
			secs := left / g.slope
			c.Trend, c.Slope, c.Seconds = true, g.slope, secs
			if d := time.Duration(secs * float64(time.Second)); d < ot.Horizon {
				c.Soon = true
				switch {
				case g.conf == Suspected && v.Severity == "":
					v.Severity, v.Confidence, v.WatchMoreSeconds = Info, Suspected, g.watchMore.Seconds()
				case g.conf == Suspected:
				case d < ot.WakeUp:
					v.Severity = Critical
				case v.Severity == "":
					v.Severity = Warning
				}
			}
		}
	}
	if fs.OOMKills > 0 {
		v.Severity, v.Confidence = Critical, Confirmed
		c.OOMKills = fs.OOMKills
	}
	if v.Severity == "" {
		return outcome{}
	}
	if b := fs.LastSplit; b != nil && b.NonGoBytes+b.FileBytes < uint64(0.5*budget) {
		c.HasLimit, c.Outside = true, float64(b.NonGoBytes+b.FileBytes)
	}
	return outcome{verdicts: []Verdict{v}}
}
