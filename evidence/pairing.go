package evidence

import (
	"math"
	"time"

	"github.com/memdoctor/memdoctor/agent/breakdown"
	"github.com/memdoctor/memdoctor/session"
)

// pairing splits resident memory where a Go reading and a /proc reading were taken close
// enough in time, streaming: a Go reading waits for the next /proc reading and is paired
// with the nearer of it and the previous one. An agent's samples carry both at once.
type pairing struct {
	maxSkew time.Duration

	lastProc  procReading
	lastGo    goReading
	pendingGo goReading // a Go reading waiting for the next /proc reading
	latest    struct {
		proc  procReading
		gomem goReading
	}
	// The RSS peak and the Go readings on either side of it.
	peak                  procReading
	peakBefore, peakAfter goReading
	// Without /proc: the Go reading with the most memory resident.
	goPeak goReading
	cgroup *session.Cgroup
	// The splits over time: aligned ones, and the Go side alone for a process whose /proc
	// was never read.
	aligned, goOnly splitKeeper
	sawProc         bool
}

type procReading struct {
	t  time.Time
	p  session.Proc
	ok bool
}

type goReading struct {
	t  time.Time
	g  session.GoMem
	ok bool
}

// sample takes one sample's readings (either may be nil).
func (pr *pairing) sample(b *sessionBuild, t time.Time, p *session.Proc, g *session.GoMem) {
	if g != nil && g.TotalBytes == 0 {
		g = nil // no memory classes in this reading (a counter-only sample)
	}
	switch {
	case p != nil && g != nil:
		pr.resolvePending(b)
		pr.emit(b, t, p, g)
		pr.lastProc = procReading{t, *p, true}
		pr.lastGo = goReading{t, *g, true}
		pr.seePeak(t, p)
		pr.peakBefore, pr.peakAfter = pr.lastGo, pr.lastGo
	case p != nil:
		if pr.pendingGo.ok {
			q := pr.pendingGo
			next := procReading{t, *p, true}
			best := next
			if pr.lastProc.ok && absDur(q.t.Sub(pr.lastProc.t)) < absDur(t.Sub(q.t)) {
				best = pr.lastProc
			}
			if absDur(best.t.Sub(q.t)) <= pr.maxSkew {
				pr.emit(b, best.t, &best.p, &q.g)
			}
			pr.pendingGo.ok = false
		}
		pr.lastProc = procReading{t, *p, true}
		if pr.seePeak(t, p) {
			pr.peakBefore, pr.peakAfter = pr.lastGo, goReading{}
		}
	case g != nil:
		pr.goOnly.add(breakdown.Compute(t, nil, g, 0, ""))
		pr.resolvePending(b)
		pr.lastGo = goReading{t, *g, true}
		pr.pendingGo = pr.lastGo
		if pr.peak.ok && !pr.peakAfter.ok && !t.Before(pr.peak.t) {
			pr.peakAfter = pr.lastGo
		}
		if !pr.goPeak.ok || g.RuntimeResident() > pr.goPeak.g.RuntimeResident() {
			pr.goPeak = pr.lastGo
		}
	}
	if g != nil {
		pr.latest.gomem = goReading{t, *g, true}
	}
	if p != nil {
		pr.latest.proc = procReading{t, *p, true}
		pr.sawProc = true
	}
}

// resolvePending pairs a Go reading that no later /proc reading came for with the last one.
func (pr *pairing) resolvePending(b *sessionBuild) {
	if q := pr.pendingGo; q.ok {
		if pr.lastProc.ok && absDur(q.t.Sub(pr.lastProc.t)) <= pr.maxSkew {
			pr.emit(b, pr.lastProc.t, &pr.lastProc.p, &q.g)
		}
		pr.pendingGo.ok = false
	}
}

func (pr *pairing) seePeak(t time.Time, p *session.Proc) bool {
	if !pr.peak.ok || p.RSSBytes > pr.peak.p.RSSBytes {
		pr.peak = procReading{t, *p, true}
		return true
	}
	return false
}

// emit adds one split of memory to the derived series.
func (pr *pairing) emit(b *sessionBuild, t time.Time, p *session.Proc, g *session.GoMem) {
	at := breakdown.Compute(t, p, g, 0, "")
	src := sourceOf(g.Source)
	rss := float64(max(at.RSSBytes, 1))
	// Free heap up to the GC goal is headroom the heap grows back into before the next GC;
	// what is kept beyond it, and what was released but is still resident, is retained.
	headroom := float64(0)
	if g.HeapGoalBytes > g.HeapObjectsBytes {
		headroom = float64(g.HeapGoalBytes - g.HeapObjectsBytes)
	}
	retained := math.Max(0, float64(at.RetainedFreeBytes)-headroom) + float64(at.ReleasedResidentBytes)
	b.add(qNonGo, src, t, float64(at.NonGoBytes))
	b.add(qNonGoShare, src, t, float64(at.NonGoBytes)/rss)
	b.add(qRetained, src, t, retained)
	b.add(qRetainedShare, src, t, retained/rss)
	b.add(qReleasedResident, src, t, float64(at.ReleasedResidentBytes))
	b.ev.Aligned++
	pr.aligned.add(at)
}

// finish computes the splits at the RSS peak and at the end.
func (pr *pairing) finish(b *sessionBuild) {
	pr.resolvePending(b)
	ev := b.ev
	switch {
	case ev.Aligned > 0:
		ev.Splits = pr.aligned.splits()
	case !pr.sawProc:
		ev.Splits = pr.goOnly.splits()
	}
	switch {
	case pr.peak.ok:
		at := breakdown.Compute(pr.peak.t, &pr.peak.p, nil, 0, "")
		if g, skew, ok := nearer(pr.peak.t, pr.peakBefore, pr.peakAfter); ok {
			if skew <= pr.maxSkew {
				at = breakdown.Compute(pr.peak.t, &pr.peak.p, &g.g, 0, "")
				at.GoSkewSeconds = skew.Seconds()
			} else {
				ev.PeakSkew = skew
			}
		}
		ev.Peak = &at
	case pr.goPeak.ok: // a remote target: only the Go side is known
		at := breakdown.Compute(pr.goPeak.t, nil, &pr.goPeak.g, 0, "")
		ev.Peak = &at
	}
	switch lp, lg := pr.latest.proc, pr.latest.gomem; {
	case lp.ok && lg.ok && absDur(lp.t.Sub(lg.t)) <= pr.maxSkew:
		at := breakdown.Compute(lp.t, &lp.p, &lg.g, 0, "")
		at.GoSkewSeconds = absDur(lp.t.Sub(lg.t)).Seconds()
		ev.Latest = &at
	case lp.ok:
		at := breakdown.Compute(lp.t, &lp.p, nil, 0, "")
		ev.Latest = &at
	case lg.ok:
		at := breakdown.Compute(lg.t, nil, &lg.g, 0, "")
		ev.Latest = &at
	}
}

// nearer returns the reading closer to t of two, and how far it is.
func nearer(t time.Time, a, b goReading) (goReading, time.Duration, bool) {
	switch {
	case a.ok && b.ok:
		if absDur(a.t.Sub(t)) <= absDur(b.t.Sub(t)) {
			return a, absDur(a.t.Sub(t)), true
		}
		return b, absDur(b.t.Sub(t)), true
	case a.ok:
		return a, absDur(a.t.Sub(t)), true
	case b.ok:
		return b, absDur(b.t.Sub(t)), true
	}
	return goReading{}, 0, false
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// fillLive sets the live heap of a split whose Go reading did not carry it (MemStats does
// not) from the live series, at the split's time.
func (ev *Evidence) fillLive(at *breakdown.At) {
	if at == nil || at.GoSource == "" || at.LiveHeapBytes > 0 || ev.Live.Empty() {
		return
	}
	p, _ := ev.Live.At(at.Time)
	objects := at.LiveHeapBytes + at.GarbageBytes
	live := min(uint64(p.V), objects)
	if objects == 0 {
		live = uint64(p.V)
	}
	at.LiveHeapBytes, at.GarbageBytes = live, objects-min(live, objects)
	at.LiveSource = ev.Live.Src.String()
}
