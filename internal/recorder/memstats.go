package recorder

import (
	"context"
	"errors"
	"time"

	"github.com/memdoctor/memdoctor/collect/scrape"
	"github.com/memdoctor/memdoctor/session"
)

// memStatsDuty is the share of time memdoctor may keep the target busy serving MemStats
// (heap?debug=1): the interval between two reads is at least this many times a read's cost
// (the least bound of the last few reads': pace). heap?debug=1 stops the world briefly and
// prints every heap profile record, so its cost grows with the program: about 2 ms a read on
// a small service (bench/scrapecost), tens of ms on one with many records.
const memStatsDuty = 200

// memStatsState paces the MemStats reads taken between snapshots. Guarded by recorder.mu.
type memStatsState struct {
	last  time.Time     // the last read's start, by a sample or a snapshot
	every time.Duration // the current interval: the sample interval, slowed by the reads' cost
	// ran is how long the target's threads had run (/proc/PID/schedstat) when MemStats was
	// last read, its requests included; -1 when unknown (no /proc, or not read yet).
	ran time.Duration
	// costs are the last reads' costs between snapshots (readCost), the latest at n-1 mod
	// len: each bounds a read's cost from above, and the least of them is the tightest bound.
	costs [4]time.Duration
	n     int
}

// pace notes a read's cost and returns the interval to the next: memStatsDuty times the least
// of the recent reads' costs, from the sample interval up to the snapshot interval. A read
// that came while the target was busy with its own work (a batch, a burst) is charged some of
// that work; paced by it alone, the reads fell to one a snapshot interval on a loaded machine
// until the next read, itself a snapshot interval away (memdoctor run of the lab's
// madvfree-retention beside three other scenarios on two cores: 11 MemStats reads in 65 s,
// 39 paced by the least).
func (st *memStatsState) pace(cost, sample, interval time.Duration) time.Duration {
	st.costs[st.n%len(st.costs)] = cost
	st.n++
	least := cost
	for _, c := range st.costs[:min(st.n, len(st.costs))] {
		least = min(least, c)
	}
	st.every = min(max(memStatsDuty*least, sample), interval)
	return st.every
}

// idleShare is the share of one core below which a target did no work worth a MemStats read
// since the last one: an idle process allocates nothing and runs no GC, so what it last said
// still holds. memdoctor's own requests (an index page a second, about 0.005% of a core) stay
// well below it; a read of MemStats itself costs about 0.2% at one a second on a big heap
// (bench/scrapecost).
const idleShare = 0.01

// idle reports whether a target whose threads have run ran in all did less than idleShare of a
// core's work since the last MemStats read at last: its figures cannot have moved, and a read
// would only cost it. A snapshot reads them anyway, every interval.
func idle(st memStatsState, ran time.Duration, now time.Time) bool {
	return idleSince(st.last, st.ran, now, ran)
}

// idleSince reports whether the target's threads, having run ranThen in all at then and ran
// at now, ran less than idleShare of a core in between; false when either is unknown (-1, a
// zero then) or the run time went back (another process).
func idleSince(then time.Time, ranThen time.Duration, now time.Time, ran time.Duration) bool {
	return !then.IsZero() && ranThen >= 0 && ran >= ranThen && float64(ran-ranThen) < idleShare*float64(now.Sub(then))
}

// stacksState is what the last goroutine profile saw. Guarded by recorder.mu.
type stacksState struct {
	at         time.Time     // when it was taken; zero before the first
	goroutines int           // the goroutine count it found
	ran        time.Duration // the target's run time after that snapshot's requests; -1 unknown
}

// stacksUnchanged reports whether a goroutine profile now would say what the last one said,
// as far as matters: its goroutine count moved by no more than a handful (1%, or 5) and the
// last profile is younger than every (the leak check's period); and either the count is read
// every sample (counted: the index page, the process's memory or the agent), so that a climb
// is seen at once, or the target was idle since (its threads ran less than idleShare of a
// core, memdoctor's own requests included), when the count is only what the last profile
// said. A goroutine profile walks every goroutine's stack: 16 ms of the target's CPU and
// 3.2 MiB allocated at 10,000 goroutines, most of what watching a big service cost it
// (bench/scrapecost). A leak shows as a climb of the count; the stacks are read again as soon
// as it moves.
func stacksUnchanged(st stacksState, goroutines int, counted bool, ran time.Duration, now time.Time, every time.Duration) bool {
	if st.at.IsZero() || now.Sub(st.at) >= every {
		return false
	}
	moved := goroutines - st.goroutines
	return max(moved, -moved) <= max(5, st.goroutines/100) && (counted || idleSince(st.at, st.ran, now, ran))
}

// ranNow is how long the target's threads have run; -1 when /proc cannot say.
func (r *recorder) ranNow(pid int) time.Duration {
	if pid == 0 {
		return -1
	}
	st, err := r.cfg.FS.Sched(pid)
	if err != nil {
		return -1
	}
	return st.Run
}

// readCost bounds from above what a read that took took cost the target: its time, or what
// the target's threads ran meanwhile (schedstat before and after it, ran0 and ran1) when
// less. On a busy machine a read's time is mostly the target's wait for a CPU, which costs it
// nothing: paced by its whole time, the reads fell to one a snapshot interval on a loaded
// machine, and the splits of memory with them. Its time alone when /proc cannot say.
func readCost(took, ran0, ran1 time.Duration) time.Duration {
	if ran0 < 0 || ran1 < ran0 {
		return took
	}
	return min(took, ran1-ran0)
}

// sampleMemStats reads the MemStats block between snapshots, as often as the sample interval
// when the target answers fast and less often when each read costs more (memStatsDuty), up to
// the snapshot interval: with the GC's goal and the heap in use read each second, a leak and
// its trend show within a minute from the pprof endpoint alone, and each /proc reading has a
// Go reading to split memory with. Nothing is read when an agent samples runtime/metrics or
// the figures are read from the target's memory, nor between snapshots while the target is
// idle (its threads ran less than idleShare of a core since the last read): a big idle service
// pays for MemStats once an interval, not each second.
func (r *recorder) sampleMemStats(now time.Time) {
	pid, c := r.target()
	if c == nil || r.memory() != nil { // read from memory every sample instead
		return
	}
	ran := r.ranNow(pid)
	r.mu.Lock()
	every := max(r.memStats.every, r.cfg.Sample)
	due := r.agent == nil && now.Sub(r.memStats.last) >= every && !idle(r.memStats, ran, now)
	if due {
		r.memStats.last, r.memStats.ran = now, ran
	}
	goroutines := r.goroutines
	r.mu.Unlock()
	if !due {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), min(r.cfg.Sample/2, maxIndexTimeout))
	defer cancel()
	var (
		ms   scrape.MemStats
		cost time.Duration // the read's own cost, not its wait for its turn
	)
	err := r.asked(ctx, session.DataFigures, func() (err error) {
		ran0, start := r.ranNow(pid), time.Now()
		ms, err = c.MemStats(ctx)
		cost = readCost(time.Since(start), ran0, r.ranNow(pid))
		return err
	})
	if errors.Is(err, errNotAsked) {
		return // a long request was in flight: a later sample reads them
	}
	r.tries.add(session.AttemptMemStats, err)
	r.mu.Lock()
	r.memStats.pace(cost, r.cfg.Sample, r.cfg.Interval)
	if err == nil {
		r.gcCountRead(uint64(ms.NumGC), ms.HeapAlloc, now)
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
