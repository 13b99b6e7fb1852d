package recorder

import (
	"context"
	"time"

	"github.com/memdoctor/memdoctor/session"
)

// memStatsDuty is the share of time memdoctor may keep the target busy serving MemStats
// (heap?debug=1): the interval between two reads is at least this many times the last read's
// duration. heap?debug=1 stops the world briefly and prints every heap profile record, so its
// cost grows with the program: about 2 ms a read on a small service (bench/scrapecost),
// tens of ms on one with many records.
const memStatsDuty = 200

// memStatsState paces the MemStats reads taken between snapshots. Guarded by recorder.mu.
type memStatsState struct {
	last  time.Time     // the last read's start, by a sample or a snapshot
	every time.Duration // the current interval: the sample interval, slowed by the reads' cost
}

// sampleMemStats reads the MemStats block between snapshots, as often as the sample interval
// when the target answers fast and less often when each read costs more (memStatsDuty), up to
// the snapshot interval: with the GC's goal and the heap in use read each second, a leak and
// its trend show within a minute from the pprof endpoint alone, and each /proc reading has a
// Go reading to split memory with. Nothing is read when an agent samples runtime/metrics.
func (r *recorder) sampleMemStats(now time.Time) {
	_, c := r.target()
	r.mu.Lock()
	every := max(r.memStats.every, r.cfg.Sample)
	due := c != nil && r.agent == nil && now.Sub(r.memStats.last) >= every
	if due {
		r.memStats.last = now
	}
	goroutines := r.goroutines
	r.mu.Unlock()
	if !due {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), min(r.cfg.Sample/2, maxIndexTimeout))
	defer cancel()
	ms, err := c.MemStats(ctx)
	took := time.Since(now)
	r.tries.add(session.AttemptMemStats, err)
	r.mu.Lock()
	r.memStats.every = min(max(memStatsDuty*took, r.cfg.Sample), r.cfg.Interval)
	if err == nil {
		r.lastGCCycles = uint64(ms.NumGC)
		r.status.HeapBytes = ms.HeapAlloc
	}
	r.mu.Unlock()
	if err != nil {
		r.log.Debug("reading MemStats between snapshots failed", "err", err)
		return
	}
	r.setGoHeap(ms.HeapInuse)
	if err := r.w.AppendSample(session.Sample{Time: time.Now().UTC(), Go: goMemFromMemStats(ms, goroutines)}); err != nil {
		r.writeFailed(err)
	}
}
