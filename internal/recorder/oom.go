package recorder

import (
	"context"
	"fmt"
	"time"

	"github.com/memdoctor/memdoctor/agent/procfs"
	"github.com/memdoctor/memdoctor/agent/sample"
	"github.com/memdoctor/memdoctor/collect/scrape"
	"github.com/memdoctor/memdoctor/session"
	"github.com/memdoctor/memdoctor/units"
)

// When memory comes close to its limit and rises, the next periodic snapshot may come after
// the OOM killer: the recorder takes heap and goroutine profiles at once, labelled
// session.LabelBeforeOOM.
const (
	// oomNear is the share of the limit from which a rising reading calls for profiles.
	oomNear = 0.90
	// oomRearm is the share below which memory counts as away from the limit again: the
	// next climb past oomNear is captured afresh.
	oomRearm = 0.85
	// oomStep is how much of the limit memory must climb past the last capture's reading
	// for another capture: a plateau near the limit takes one, a climb one per step.
	oomStep = 0.01
	// oomMinGap is the least time between two captures.
	oomMinGap = time.Second
)

// oomWatch decides, reading by reading, when memory near its limit calls for profiles.
type oomWatch struct {
	prev     float64   // the previous reading's share of its limit
	captured float64   // the share at the last capture since memory came near (0 = none)
	at       time.Time // when that capture was asked for
}

// limitReading is memory against a limit: resident memory against --memory-budget, or the
// cgroup's working set against its limit.
type limitReading struct {
	what         string // "RSS" or "the cgroup's working set"
	use, limit   uint64
	limitSource  string // "--memory-budget" or "the cgroup limit"
	share        float64
	sharePercent float64
}

// nearest returns the reading closest to its limit among those the sample allows.
func nearest(smp session.Sample, budget uint64) (limitReading, bool) {
	var best limitReading
	consider := func(what string, use, limit uint64, src string) {
		if limit == 0 || use == 0 {
			return
		}
		if s := float64(use) / float64(limit); s > best.share {
			best = limitReading{what: what, use: use, limit: limit, limitSource: src, share: s, sharePercent: 100 * s}
		}
	}
	if smp.Proc != nil {
		consider("RSS", smp.Proc.RSSBytes, budget, "--memory-budget")
	}
	if cg := smp.Cgroup; cg != nil {
		use := cg.WorkingSetBytes
		if use == 0 {
			use = cg.UsageBytes
		}
		consider("the cgroup's working set", use, cg.LimitBytes, "the cgroup limit")
	}
	return best, best.limit > 0
}

// observe takes one reading's share of its limit and reports whether to take profiles now:
// near the limit, rising since the previous reading, a step past the last capture, and not
// within oomMinGap of it.
func (o *oomWatch) observe(now time.Time, share float64) bool {
	rising := share > o.prev
	o.prev = share
	if share < oomRearm {
		o.captured = 0
		return false
	}
	if share < oomNear || !rising || now.Sub(o.at) < oomMinGap {
		return false
	}
	if o.captured > 0 && share < o.captured+oomStep {
		return false
	}
	o.captured, o.at = share, now
	return true
}

// checkLimit asks the profile loop for profiles at once when the sample calls for them.
func (r *recorder) checkLimit(smp session.Sample) {
	lr, ok := nearest(smp, r.cfg.MemoryBudget)
	if !ok || !r.oom.observe(smp.Time, lr.share) {
		return
	}
	r.log.Info(fmt.Sprintf("%s is at %.0f%% of %s (%s of %s) and rising: taking heap and goroutine profiles now, before a possible OOM kill",
		lr.what, lr.sharePercent, lr.limitSource, units.Bytes(float64(lr.use)), units.Bytes(float64(lr.limit))))
	select {
	case r.urgent <- struct{}{}:
	default: // one is already asked for
	}
}

// captureBeforeOOM takes a heap profile, then a goroutine profile, labelled before-oom: the
// heap first, since the process may not live long.
func (r *recorder) captureBeforeOOM(ctx context.Context, c *scrape.Client) {
	now := time.Now()
	var raw []byte
	err := r.asked(ctx, session.AttemptHeap, func() (err error) {
		raw, _, err = c.Heap(ctx)
		return err
	})
	r.tries.add(session.AttemptHeap, err)
	if err != nil {
		r.scrapeFailed("heap (before a possible OOM kill)", err)
		return
	}
	r.storeLabel(session.KindHeap, now, session.LabelBeforeOOM, raw)
	err = r.asked(ctx, session.AttemptGoroutine, func() (err error) {
		raw, _, err = c.Goroutine(ctx)
		return err
	})
	r.tries.add(session.AttemptGoroutine, err)
	if err != nil {
		r.scrapeFailed("goroutine (before a possible OOM kill)", err)
		return
	}
	r.storeLabel(session.KindGoroutine, now, session.LabelBeforeOOM, raw)
}

// cgroupAfterEnd reads the target's cgroup once more after the target ended: its oom_kill
// count says whether the kernel killed it. The reading is appended as a sample of its own.
func (r *recorder) cgroupAfterEnd() {
	r.mu.Lock()
	last, before := r.lastCgroup, r.cgroupKills[r.lastCgroup.Dir]
	r.mu.Unlock()
	if last.Dir == "" {
		return
	}
	cg, err := r.cfg.FS.Reread(last)
	if err != nil {
		r.addNote("the target's memory cgroup (%s) could not be read again after it ended, so whether the kernel OOM-killed it is not known: %v", last.Dir, err)
		return
	}
	rec := sample.FromCgroup(cg)
	if err := r.w.AppendSample(session.Sample{Time: time.Now().UTC(), Cgroup: &rec}); err != nil {
		r.writeFailed(err)
	}
	if cg.OOMKills > before {
		r.addNote("the kernel OOM-killed the target: its memory cgroup's oom_kill count went from %d to %d while it was watched, and it ended", before, cg.OOMKills)
	}
}

// keepCgroup remembers the latest reading of the target's cgroup, to read it again after the
// end, and the OOM-kill count of the first reading of each cgroup directory it was seen in:
// the end's count is compared with it. A reading taken as the kernel kills the target (its
// /proc still there, or a zombie until its parent reaps it) counts the kill already, and a
// reading of another directory between two of the same one (a process moved, or read as it
// exits) must not make the kill's count the baseline (TestOOMKillE2E lost the kernel's note
// so, under run and under watch, in CI runs here).
func (r *recorder) keepCgroup(cg procfs.Cgroup) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, seen := r.cgroupKills[cg.Dir]; !seen && len(r.cgroupKills) < maxCgroupDirs {
		r.cgroupKills[cg.Dir] = cg.OOMKills
	}
	r.lastCgroup = cg
}

// maxCgroupDirs bounds the cgroup directories whose first OOM-kill count is kept: a target
// moves between a few at most.
const maxCgroupDirs = 16
