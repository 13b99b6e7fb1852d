package rule

import (
	"fmt"
	"time"

	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/facts"
	"github.com/memdoctor/memdoctor/internal/dev/proftest"
)

// The rule tests that judge profiles build an evidence in memory, its heap profiles in hand
// (evidence.AddProfile), and its facts with facts.Of: no file is written or read. The rules
// are judged together (Judge), as Diagnose judges them, and what one kind concluded kept.

const mib = 1 << 20

// addHeap adds a periodic heap snapshot taken at at, holding rows (see proftest.Heap).
func addHeap(ev *evidence.Evidence, at time.Time, rows map[string][2]int64) {
	s := evidence.Snapshot{Kind: "heap", T: at, Path: fmt.Sprintf("heap-%d.pb.gz", at.UnixNano())}
	ev.AddProfile(s, proftest.Heap(at, rows))
}

// heapEvidence is n heap snapshots 10 s apart, each holding what rows(i) gives by site, and
// the live heap read from src with each (live(i) bytes); finished.
func heapEvidence(mode string, src evidence.Source, n int, rows func(i int) map[string]int64, live func(i int) float64) *evidence.Evidence {
	ev := evidence.New(mode, evidence.Target{}, evidence.Options{})
	g := evidence.NewGauge(src, 0)
	for i := range n {
		at := t0.Add(time.Duration(i) * 10 * time.Second)
		addHeap(ev, at, proftest.Held(rows(i)))
		g.Add(at, live(i))
	}
	ev.Live = g.Series()
	ev.Finish(evidence.Options{})
	return ev
}

// judged is what the rules concluded about one kind: its verdicts, why it could not judge,
// and its detection limits.
type judged struct {
	verdicts []Verdict
	unjudged *Unjudged
	limits   []DetectionLimit
}

// judgeKind computes the evidence's facts, judges them and keeps what one kind concluded.
func judgeKind(ev *evidence.Evidence, k Kind) judged {
	j := Judge(facts.Of(ev), &Default)
	var o judged
	for _, v := range j.Verdicts {
		if v.Kind == k {
			o.verdicts = append(o.verdicts, v)
		}
	}
	for i := range j.Unjudged {
		if j.Unjudged[i].Kind == k {
			o.unjudged = &j.Unjudged[i]
		}
	}
	for _, l := range j.Limits {
		if l.Kind == k {
			o.limits = append(o.limits, l)
		}
	}
	return o
}

// grew is how much a heap-leak verdict says grew: the live heap, or the site.
func grew(v Verdict) float64 {
	switch c := v.Case.(type) {
	case *HeapLeakCase:
		return c.Rise.Grew
	case *SiteLeakCase:
		return c.Rise.Grew
	}
	return 0
}
