package rule

import (
	"time"

	"github.com/memdoctor/memdoctor/facts"
)

// NonGoCase is resident anonymous memory the Go runtime does not account for.
type NonGoCase struct {
	Median, Peak, Latest, Share float64
	Readings                    int
	// RSS is the latest RSS, when it was read (HasRSS); PID the process's.
	RSS    float64
	HasRSS bool
	PID    int
	// Growth is set when it grows steadily: a leak outside Go.
	Growth *Rise
}

// nonGoMemory reports resident anonymous memory that the Go runtime does not account for:
// cgo/C allocations and syscall.Mmap regions. It is at least RssAnon - LazyFree - (what the
// runtime may have resident), so it is a lower bound.
func nonGoMemory(fs *facts.Facts, th *Thresholds) outcome {
	ngt := &th.NonGo
	if fs.Aligned == 0 {
		return cannot(KindNonGoMemory, WhyNotSplit, 0)
	}
	if fs.NonGo.Empty() && fs.Gaps[facts.GapNonGo] != "" {
		return cannot(KindNonGoMemory, WhyNeverMeasured, 0)
	}
	ng, share := fs.NonGo.Points, fs.NonGoShare.Points
	if len(ng) < 3 {
		return outcome{unjudged: &Unjudged{Kind: KindNonGoMemory, Why: WhyTooFew, WatchMoreSeconds: (3 * time.Second).Seconds(), N: fs.Aligned}}
	}
	med, medShare := facts.Median(facts.Values(ng)), facts.Median(facts.Values(share))
	if med < ngt.MinBytes || medShare < ngt.MinShare {
		return outcome{}
	}
	peak, _ := facts.MaxPoint(ng)
	last := ng[len(ng)-1]
	c := &NonGoCase{Median: med, Peak: peak.V, Latest: last.V, Share: medShare, Readings: len(ng), PID: fs.Target.PID}
	if !fs.RSS.Empty() {
		c.RSS, c.HasRSS = fs.RSS.Last().V, true
	}
	v := Verdict{Kind: KindNonGoMemory, Severity: Warning, Confidence: Confirmed, Start: ng[0].T, End: last.T, Case: c}
	if len(ng) < 5 {
		v.Confidence, v.WatchMoreSeconds = Suspected, 5*fs.NonGo.Res.Step.Seconds()
	}
	if g := judgeGrowth(fs.NonGoFloor, ngt.Growth, 0, &th.Trend); g.conf == Confirmed {
		r := g.rise(&th.Trend)
		c.Growth = &r
	}
	return outcome{verdicts: []Verdict{v}}
}
