package snapshot

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/memdoctor/memdoctor/process"
	"github.com/memdoctor/memdoctor/units"
)

// DefaultMaxStop is how long a snapshot stops a process at most unless told otherwise. A
// second is what a service's health checks forgive: Kubernetes' probes time out after 1 s
// by default and act only after three failures in a row, load balancers' checks after two
// or more; a client's request waits at most that long more, within the timeouts services
// are given. On the 2 cores measured (bench/holders, docs/performance.md) it covers a 4 GiB
// heap of byte payloads (395 ms) and about 2 GiB of memory that holds pointers (a 1 GiB
// heap of pointer payloads: 419 ms).
const DefaultMaxStop = time.Second

// Options tunes a snapshot. The zero value asks for the defaults.
type Options struct {
	// Dir is where the copy goes: an unlinked file, which needs about as much free space as
	// the heap in use that may hold pointers. Default os.TempDir() ($TMPDIR, else /tmp).
	Dir string
	// MaxStop refuses, before stopping, a snapshot estimated to stop the process longer.
	// 0: DefaultMaxStop; negative: no bound.
	MaxStop time.Duration
	// BeforeStop, when set, is told the estimate just before the process is stopped.
	BeforeStop func(Estimate)
	// CopyCore copies a core as a live process is copied (a core is read as it is
	// otherwise): what proves that a snapshot holds all that a reading needs.
	CopyCore bool
	// Held says the caller holds the process stopped already, and resumes it itself: the
	// snapshot copies it without stopping or resuming it.
	Held bool
}

// Estimate is what a snapshot expects before it stops the process: the bytes it will copy,
// at what rate, and so for how long the process will be stopped.
type Estimate struct {
	PID        int
	Bytes      uint64        // to copy
	Spans      int           // in-use spans (their records are read while stopped)
	Goroutines int           // goroutines (theirs too)
	Rate       float64       // bytes copied per second, measured on this target just before
	Stop       time.Duration // the stop expected
	Dir        string        // where the copy goes
	Free       uint64        // free space there before the copy (0 when unknown)
}

// What a stop costs besides copying, measured by bench/holders: reading each in-use span's
// record and each goroutine's from the copy (a 4 GiB heap's 501,145 spans took 140 to 300 ms
// at load 8), and stopping each thread.
const (
	perSpan       = 300 * time.Nanosecond
	perGoroutine  = 2 * time.Microsecond
	perThread     = 100 * time.Microsecond
	probeBytes    = 32 << 20 // copied to measure the rate,
	probePieces   = 4        // in pieces timed apart
	fixedStopCost = 5 * time.Millisecond
)

// TooLongError is the refusal of a snapshot estimated to stop the process longer than
// allowed.
type TooLongError struct {
	Estimate Estimate
	Max      time.Duration
}

func (e *TooLongError) Error() string {
	return fmt.Sprintf("reading process %d would stop it for about %s (%s to copy at %s/s), longer than the %s allowed",
		e.Estimate.PID, units.Duration(e.Estimate.Stop), units.Bytes(float64(e.Estimate.Bytes)), units.Bytes(e.Estimate.Rate), units.Duration(e.Max))
}

// Allow is a bound that allows the snapshot: the estimate with a margin, rounded up.
func (e *TooLongError) Allow() time.Duration {
	d := e.Estimate.Stop * 3 / 2
	step := 100 * time.Millisecond
	if d > 10*time.Second {
		step = time.Second
	}
	return time.Duration(math.Ceil(float64(d)/float64(step))) * step
}

// Snapshot is a target whose memory does not change while it is read: a core, or a live
// process's copy taken while it was stopped, the process running again meanwhile.
type Snapshot struct {
	Target   *process.Target // read this: its memory is the copy's (or the core's)
	Estimate Estimate
	Prepare  time.Duration // estimating and making room, while the process runs
	Stopped  time.Duration // how long the process was stopped (0 for a core)
	Stop     time.Duration // of which stopping every thread
	Copy     time.Duration // of which copying
	Bytes    int64         // copied
	// NotResident is how much of what was copied was not resident in the process: zeros,
	// never read, so that the copy did not make it resident (process.Copy.NotResident).
	NotResident int64
	// Skipped is what of the stacks could not be read while the process was stopped (sorted,
	// merged): the copy does not hold it. See Missing.
	Skipped []process.Region
	copy    *process.Copy
	held    bool
}

// Missing returns the parts of [lo, hi) that the snapshot skipped (Skipped), in address order:
// none for a core, or a stack copied whole.
func (s *Snapshot) Missing(lo, hi uint64) []process.Region {
	var out []process.Region
	i := sort.Search(len(s.Skipped), func(i int) bool { return s.Skipped[i].Hi > lo })
	for ; i < len(s.Skipped) && s.Skipped[i].Lo < hi; i++ {
		out = append(out, process.Region{Lo: max(lo, s.Skipped[i].Lo), Hi: min(hi, s.Skipped[i].Hi)})
	}
	return out
}

// Close lets the target be read live again and removes the copy.
func (s *Snapshot) Close() error {
	if s.copy == nil {
		return nil
	}
	s.Target.ReadCopy(nil)
	return s.copy.Close()
}

// Take makes a snapshot of t. A core is one already. A live process is stopped (every
// thread) only while what a reading of its heap needs is copied: the runtime's records of
// its spans and its other persistent metadata (specials, heap-profile buckets, itabs, the
// finalizer and cleanup queues), the program's data and bss, the memory of the heap's in-use
// spans whose objects may hold pointers, every goroutine's stack and what each thread's
// frames and thread-local variables need. The process then runs again; t reads the copy
// until the snapshot is closed.
//
// What the walk cannot do without (the runtime's tables and records, the globals, the heap's
// spans, which hold the goroutines' and threads' records too) must be copied whole: memory
// there that cannot be read is an error naming it and its mapping. The stacks are copied as
// far as they can be read, and what could not be is Skipped: it costs the paths through it.
// A process that ends while it is stopped (killed) is an error wrapping process.ErrExited.
//
// Before stopping, the copy is estimated from the runtime's own tables (read while the
// process runs) and a copy rate measured on it: a snapshot estimated to stop the process
// longer than opts.MaxStop is refused (*TooLongError), as is a directory without room for
// the copy (*process.NoSpaceError). ix is the executable's DWARF index.
func Take(ctx context.Context, t *process.Target, ix *process.Index, opts Options) (*Snapshot, error) {
	if t.Kind != "process" && !opts.CopyCore {
		return &Snapshot{Target: t}, nil
	}
	start := time.Now()
	l, err := newLayout(t, ix)
	if err != nil {
		return nil, err
	}
	if err := t.ReadRegions(); err != nil {
		return nil, err
	}
	c, err := t.NewCopy(opts.Dir)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			c.Close()
		}
	}()
	est, probe, err := estimate(t, l, c.Executable())
	if err != nil {
		return nil, fmt.Errorf("estimating the copy: %w", err)
	}
	est.Dir, est.Free = c.Dir(), c.Free()
	if err := c.Reserve(reserveFor(est.Bytes)); err != nil {
		return nil, err
	}
	if est.Rate, err = measureRate(ctx, c, probe); err != nil {
		return nil, fmt.Errorf("measuring the copy's rate: %w", err)
	}
	est.Stop = fixedStopCost + time.Duration(float64(est.Bytes)/est.Rate*float64(time.Second)) +
		time.Duration(est.Spans)*perSpan + time.Duration(est.Goroutines)*perGoroutine + time.Duration(len(t.Threads()))*perThread
	bound := opts.MaxStop
	if bound == 0 {
		bound = DefaultMaxStop
	}
	if bound > 0 && est.Stop > bound && t.Kind == "process" && !opts.Held {
		return nil, &TooLongError{Estimate: est, Max: bound}
	}
	if opts.BeforeStop != nil {
		opts.BeforeStop(est)
	}
	s := &Snapshot{Target: t, Estimate: est, copy: c, Prepare: time.Since(start), held: opts.Held}
	if err := s.take(ctx, l); err != nil {
		switch {
		case errors.Is(err, process.ErrExited):
			return nil, fmt.Errorf("copying process %d: %w", t.PID, err)
		case t.Kind == "process" && !opts.Held && ctx.Err() == nil:
			return nil, fmt.Errorf("copying process %d: %w (it runs again)", t.PID, err)
		}
		return nil, err
	}
	ok = true
	return s, nil
}

// estimateRefreshes bounds how many times the estimate reads the running process's memory map
// again.
const estimateRefreshes = 4

// reserveFor is the room made for a copy estimated at n bytes: the process may allocate
// between the estimate and the stop.
func reserveFor(n uint64) int64 { return int64(n + n/8 + 16<<20) }

// estimate plans the copy on the running process: what the plan will copy once it is
// stopped, give or take what it does meanwhile. probe is a part of the heap to measure the
// copy's rate on.
func estimate(t *process.Target, l *layout, data []process.Region) (Estimate, []process.Region, error) {
	// Read while the process runs: what the runtime mapped since its memory map was read is
	// looked for in the map read again, a few times at most.
	p := &planner{l: l, t: t, m: process.NewCache(t.Memory(), 2<<20), refreshes: estimateRefreshes}
	est := Estimate{PID: t.PID}
	fixed, err := p.fixed(data)
	if err != nil {
		return est, nil, err
	}
	table, n, err := p.spanTable()
	if err != nil {
		return est, nil, err
	}
	hs, err := p.inUse(table, n)
	if err != nil {
		return est, nil, err
	}
	spans := hs.scan
	gs, err := p.goroutines()
	if err != nil {
		return est, nil, err
	}
	est.Spans, est.Goroutines = hs.count, len(gs)
	stacks, _ := p.stackRegions(gs)
	est.Bytes = bytesOf(fixed) + bytesOf(spans) + bytesOf(mergeRegions(stacks))
	var probe []process.Region
	heap := append(append([]process.Region(nil), spans...), hs.noscan...)
	for left, rs := uint64(probeBytes), heap; len(rs) > 0 && left > 0; rs = rs[1:] {
		r := rs[0]
		r.Hi = min(r.Hi, r.Lo+left)
		probe = append(probe, r)
		left -= r.Hi - r.Lo
	}
	return est, probe, nil
}

// fixed is what is copied first, read from the process itself: the program's data and bss
// (data), the span table and the runtime's persistent chunks.
func (p *planner) fixed(data []process.Region) ([]process.Region, error) {
	table, _, err := p.spanTable()
	if err != nil {
		return nil, err
	}
	chunks, err := p.chunks()
	if err != nil {
		return nil, err
	}
	return mergeRegions(append(append(chunks, table), data...)), nil
}

// measureRate copies the probe (part of the running process's heap) in a few pieces, timing
// each, and takes the median rate: what the copy will do on this machine as loaded as it is
// now, whatever happened to one piece alone.
func measureRate(ctx context.Context, c *process.Copy, probe []process.Region) (float64, error) {
	var rates []float64
	for _, piece := range splitRegions(probe, probePieces) {
		start := time.Now()
		n, err := c.Probe(ctx, piece)
		if err != nil {
			return 0, err
		}
		if d := time.Since(start); n >= 1<<20 && d > 0 {
			rates = append(rates, float64(n)/d.Seconds())
		}
	}
	if len(rates) == 0 {
		return 1 << 30, nil // too little to measure: a GiB/s, the slowest rate measured
	}
	sort.Float64s(rates)
	return rates[len(rates)/2], nil
}

// splitRegions cuts rs into k pieces of about the same size.
func splitRegions(rs []process.Region, k int) [][]process.Region {
	each := max((bytesOf(rs)+uint64(k)-1)/uint64(k), 1)
	var out [][]process.Region
	var cur []process.Region
	var n uint64
	for _, r := range rs {
		for r.Lo < r.Hi {
			m := min(r.Hi-r.Lo, each-n)
			cur = append(cur, process.Region{Lo: r.Lo, Hi: r.Lo + m})
			r.Lo += m
			if n += m; n == each {
				out, cur, n = append(out, cur), nil, 0
			}
		}
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// take stops the process, copies, lets the copy be what is read, and resumes the process on
// every path.
func (s *Snapshot) take(ctx context.Context, l *layout) (err error) {
	t, c := s.Target, s.copy
	start := time.Now()
	if !s.held {
		if err := t.Stop(); err != nil {
			return err
		}
		defer func() {
			if err != nil {
				t.ReadCopy(nil)
			}
			s.Stopped = t.Resume()
		}()
	}
	s.Stop = time.Since(start)
	c.Urgent = true
	defer func() { c.Urgent = false }()
	return process.Urgently(func() error { return s.copyStopped(ctx, l) })
}

// copyStopped copies what the walk reads from the stopped process, and makes the copy what
// the target reads.
func (s *Snapshot) copyStopped(ctx context.Context, l *layout) error {
	t, c := s.Target, s.copy
	lap := time.Now()
	live := &planner{l: l, t: t, m: process.NewCache(t.Memory(), 1<<20)}
	fixed, err := live.fixed(c.Executable())
	if err != nil {
		return err
	}
	if err := c.Add(ctx, fixed); err != nil {
		return err
	}
	// The rest is planned from the copy: reading it is reading memory memdoctor's kernel
	// holds, with no system call into the stopped process.
	p := &planner{l: l, t: t, m: process.NewCache(process.NewMemory(c), 2<<20)}
	table, n, err := p.spanTable()
	if err != nil {
		return err
	}
	hs, err := p.inUse(table, n)
	if err != nil {
		return err
	}
	spans := hs.scan
	if planned, est := bytesOf(fixed)+bytesOf(spans), s.Estimate.Bytes; planned > max(2*est, est+256<<20) {
		return fmt.Errorf("its heap grew from about %s to %s since the copy was estimated; run again", units.Bytes(float64(est)), units.Bytes(float64(planned)))
	}
	c.Omit(hs.noscan)
	if err := c.Add(ctx, spans); err != nil {
		return err
	}
	gs, err := p.goroutines()
	if err != nil {
		return err
	}
	sys, err := p.systemStacks()
	if err != nil {
		return err
	}
	// The stacks are copied as far as they can be read: memory the process's map says cannot
	// be read, or says can and cannot (a guard region made with madvise, a device's pages
	// next to a C thread's stack), costs the paths through it, not the reading.
	stacks, unreadable := p.stackRegions(gs)
	if err := c.AddReadable(ctx, append(stacks, p.threadRegions(gs, sys)...)); err != nil {
		return err
	}
	s.Skipped = mergeRegions(append(unreadable, c.Skipped()...))
	if ctx.Err() != nil {
		return ctx.Err()
	}
	s.Copy, s.Bytes, s.NotResident = time.Since(lap), c.Bytes(), c.NotResident()

	t.ReadCopy(c)
	return nil
}
