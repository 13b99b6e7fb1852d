package evidence

import (
	"fmt"
	"math"

	"github.com/memdoctor/memdoctor/agent/breakdown"
	"github.com/memdoctor/memdoctor/agent/bytesize"
)

// finish turns a session's builders into the canonical series, each quantity from its best
// source, and completes the pacer's figures and the splits of memory.
func (b *sessionBuild) finish() {
	ev := b.ev
	b.pair.finish(b)
	for q := range quantities {
		d := &quantities[q]
		*d.series(ev) = b.m[q].pick(d)
	}
	b.finishPacer(true)
	p := &ev.Pacer
	if p.GOMemLimit == 0 { // no runtime reading gave it (MemStats has none): the environment's
		switch n, set, err := bytesize.GoMemLimit(ev.Target.GOMEMLIMIT); {
		case err != nil:
			ev.Notes = append(ev.Notes, fmt.Sprintf("the target's %v (a Go program does not start with it)", err))
		case set && n > 0 && n < math.MaxInt64:
			p.GOMemLimit = float64(n)
		}
	}
	if ev.Latest != nil {
		p.Outside = float64(ev.Latest.NonGoBytes + ev.Latest.FileBytes)
	}
	// Fill the live heap of the breakdowns from the live series when their Go reading did
	// not carry it (MemStats does not).
	for _, at := range []*breakdown.At{ev.Peak, ev.Latest} {
		ev.fillLive(at)
	}
	for i := range ev.Splits {
		ev.fillLive(&ev.Splits[i])
	}
}

// finishNew completes evidence built with New: the series that gctrace cycles and profiles
// give join those its source set directly, and for each quantity the best source wins, as
// in finish.
func (b *sessionBuild) finishNew() {
	ev := b.ev
	if b.gc.n == 0 && len(ev.Heaps)+len(ev.GoroutineSnaps)+len(ev.LeakSnaps) == 0 {
		return // nothing but what the source set directly
	}
	for q := range quantities { // what the source set directly competes with what follows
		d := &quantities[q]
		if !d.fromGCOrProfiles() {
			continue
		}
		s := d.series(ev)
		for _, p := range s.Points {
			if d.counter {
				b.m[q].addCounter(s.Src, p.T, p.V)
			} else {
				b.m[q].add(s.Src, s.Res.Quantum, p.T, p.V)
			}
		}
	}
	b.profileFallbacks()
	for q := range quantities {
		if d := &quantities[q]; d.fromGCOrProfiles() && b.m[q].any() {
			*d.series(ev) = b.m[q].pick(d)
		}
	}
	b.finishPacer(b.gc.n > 0)
}

// finishPacer fills the pacer's figures that no reading gave: the bytes the GC scans and
// GOMAXPROCS from gctrace, and, when the target's environment stands for its runtime's
// settings (a session's target, or a program whose gctrace was read), GOGC from it: unset
// means 100.
func (b *sessionBuild) finishPacer(gogcFromEnvironment bool) {
	p := &b.ev.Pacer
	if p.ScanBytes == 0 {
		p.ScanBytes = median(b.scans)
	}
	if p.GOMAXPROCS == 0 {
		p.GOMAXPROCS = b.gcProcs
	}
	if p.GOGC == 0 && gogcFromEnvironment {
		p.GOGC = gogcFromEnv(b.ev.Target.GOGC)
	}
}
