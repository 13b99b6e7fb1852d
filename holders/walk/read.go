package walk

import (
	"context"
	"errors"
	"fmt"
	"github.com/memdoctor/memdoctor/holders"
	"time"

	"github.com/go-delve/delve/pkg/dwarf/godwarf"
	"github.com/go-delve/delve/pkg/proc"
	"github.com/memdoctor/memdoctor/culprit"
	"github.com/memdoctor/memdoctor/process"
	"github.com/memdoctor/memdoctor/snapshot"
)

// Options tunes a reading. The zero value asks for the defaults documented on each field.
type Options struct {
	// Sites are the culprit functions whose sampled objects' holders are wanted: a sample
	// belongs to a site when a frame of its allocation stack is that function (the full
	// name, or its end after a dot or slash). Empty: the TopSites allocation sites holding
	// the most sampled bytes, each named as the diagnosis names culprits.
	Sites []string
	// TopSites is how many sites to report when Sites is empty. Default 5.
	TopSites int
	// Coverage is the share of a culprit's sampled bytes the reported paths must cover.
	// Default 0.9.
	Coverage float64
	// MaxPaths bounds the paths per culprit. Default 10.
	MaxPaths int
	// MaxCuts bounds what to cut per culprit (holders.Cut). Default 3.
	MaxCuts int
	// CutsBytes bounds the memory the cuts take (the dominator tree of the objects that lead
	// to the sampled ones, about 96 bytes an object): past it no cut is worked out, with a
	// note. Default a fifth of the heap read, at least 64 MiB.
	CutsBytes int
	// MaxNamed bounds the objects named while the most readable paths are sought (about a
	// KiB each). Default what an eighth of the heap read holds (at least 64 MiB), at most
	// DefaultMaxNamed.
	MaxNamed int
	// CacheBytes is the memory kept of the target's heap while it is walked. Default 16 MiB
	// for a live process's copy (a miss is a read of the kernel's page cache), 64 MiB for a
	// core.
	CacheBytes int
	// MaxFrames bounds the frames unwound per goroutine; the rest of a deeper stack is
	// scanned word by word. Default 4096.
	MaxFrames int
	// MaxStop refuses, before stopping a live process, a reading estimated to stop it
	// longer (a *snapshot.TooLongError). 0: snapshot.DefaultMaxStop; negative: no bound.
	MaxStop time.Duration
	// TempDir is where the copy of a live process's memory goes (an unlinked file, about
	// the size of its heap in use). Default os.TempDir().
	TempDir string
	// BeforeStop, when set, is told the estimate just before a live process is stopped.
	BeforeStop func(snapshot.Estimate)
	// CopyCore copies a core as a live process is copied and walks the copy (a core is
	// walked as it is otherwise): what shows that a copy holds all that the walk reads.
	CopyCore bool
	// held: the caller holds the live process stopped (tests); direct: walk it there, as
	// before copies were taken, rather than walk a copy of it.
	held, direct bool
	// afterCopy, when set, runs once the snapshot is taken, before the walk (tests).
	afterCopy func()
}

func (o *Options) defaults() {
	if o.TopSites <= 0 {
		o.TopSites = 5
	}
	if o.Coverage <= 0 || o.Coverage > 1 {
		o.Coverage = 0.9
	}
	if o.MaxPaths <= 0 {
		o.MaxPaths = 10
	}
	if o.MaxCuts <= 0 {
		o.MaxCuts = 3
	}
	if o.MaxFrames <= 0 {
		o.MaxFrames = 4096
	}
}

var errCancelled = errors.New("interrupted")

// Read walks the target's heap from the GC roots, finds the sampled objects of each culprit
// site and names the reference paths that keep them alive. A live process is stopped only
// while what the walk needs is copied (see package snapshot), and runs again, whatever
// happens, before the copy is walked; a core is walked as it is.
func Read(ctx context.Context, t *process.Target, opts Options) (res *holders.Result, err error) {
	opts.defaults()
	start := time.Now()
	res = &holders.Result{Schema: holders.Schema, Target: targetOf(t)}
	// What the executable says is read while the process runs.
	ix, err := process.BuildIndex(t.Delve.BinInfo())
	if err != nil {
		return nil, err
	}
	r, err := loadRuntime(t, ix)
	if err != nil {
		return nil, err
	}
	mdAddr, err := r.global("runtime.firstmoduledata")
	if err != nil {
		return nil, err
	}
	md, err := r.moduledata.Read(r.mem, mdAddr)
	if err != nil {
		return nil, err
	}
	tab, err := process.ReadPclntab(r.mem, process.TablesOf(md), t.Arch)
	if err != nil {
		return nil, err
	}
	res.Timing.Prepare = ms(time.Since(start))

	snap := &snapshot.Snapshot{Target: t}
	if !opts.direct {
		snap, err = snapshot.Take(ctx, t, ix, snapshot.Options{Dir: opts.TempDir, MaxStop: opts.MaxStop, BeforeStop: opts.BeforeStop,
			CopyCore: opts.CopyCore, Held: opts.held})
		if err != nil {
			if ctx.Err() != nil {
				return nil, errCancelled
			}
			return nil, err
		}
		defer snap.Close()
	}
	if opts.CacheBytes <= 0 {
		opts.CacheBytes = 64 << 20
		if snap.Bytes > 0 {
			opts.CacheBytes = 16 << 20
		}
	}
	if opts.afterCopy != nil {
		opts.afterCopy()
	}
	if snap.Stopped > 0 {
		res.Stopped, res.StoppedSeconds = ms(snap.Stopped), snap.Stopped.Seconds()
	}
	res.Timing.Prepare += ms(snap.Prepare)
	res.Timing.Stop, res.Timing.Copy, res.Copied = ms(snap.Stop), ms(snap.Copy), uint64(snap.Bytes)
	res.NotResident = uint64(snap.NotResident)
	res.EstimatedStop = ms(snap.Estimate.Stop)
	for _, s := range snap.Skipped {
		res.SkippedRanges++
		res.SkippedBytes += s.Hi - s.Lo
	}
	if n := res.SkippedSaid(); n != "" {
		res.Notes = append(res.Notes, n)
	}
	w := &reading{t: t, r: r, ix: ix, tab: tab, md: md, opts: opts, ctx: ctx, res: res, missing: snap.Missing}
	a, err := w.read()
	if err != nil {
		return nil, err
	}
	// What to cut is worked out on the graph, with the process running again.
	lap := time.Now()
	notes := len(a.notes)
	err = a.cuts(res.Culprits)
	a.g.free()
	if err != nil {
		return nil, err
	}
	res.Notes = append(res.Notes, a.notes[notes:]...)
	res.Timing.Cuts = ms(time.Since(lap))
	return res, nil
}

// reading is one Read's state while the target (its snapshot) is read.
type reading struct {
	t    *process.Target
	r    *rt
	ix   *process.Index
	tab  *process.Pclntab
	md   process.Value
	opts Options
	ctx  context.Context
	res  *holders.Result
	// missing returns what the snapshot could not copy of a range.
	missing func(lo, hi uint64) []process.Region
}

func (w *reading) cancelled() bool { return w.ctx.Err() != nil }

func (w *reading) read() (a *aggregator, err error) {
	lap := time.Now()
	cache := process.NewCache(w.r.mem, w.opts.CacheBytes)
	h, err := readHeap(w.r, cache)
	if err != nil {
		return nil, err
	}
	rs := &rootSet{h: h}
	if err := rs.globals(); err != nil {
		return nil, fmt.Errorf("the package variables: %w", err)
	}
	if err := rs.specials(); err != nil {
		return nil, err
	}
	if err := rs.queues(); err != nil {
		return nil, err
	}
	gs, err := readGoroutines(w.r)
	if err != nil {
		return nil, fmt.Errorf("the goroutines: %w", err)
	}
	st := &stackRoots{rs: rs, t: w.t, tab: w.tab, gs: gs, maxFrames: w.opts.MaxFrames, rodata: w.md.Word("rodata", 0), missing: w.missing}
	if err := st.scan(); err != nil {
		return nil, fmt.Errorf("the goroutines' stacks: %w", err)
	}
	if err := rs.registers(w.t); err != nil {
		return nil, err
	}
	if w.cancelled() {
		return nil, errCancelled
	}
	w.res.Timing.Roots = ms(time.Since(lap))
	lap = time.Now()
	g, err := bfs(h, rs.roots, w.cancelled)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			g.free()
		}
	}()
	w.res.Timing.Walk = ms(time.Since(lap))
	lap = time.Now()
	samples, err := readSamples(h)
	if err != nil {
		return nil, err
	}
	buckets, err := readBuckets(w.r, w.tab, samples)
	if err != nil {
		return nil, err
	}
	w.res.Heap = holders.HeapSummary{Spans: len(h.spans), Slots: int(h.slots), Objects: g.reached(), Bytes: g.bytes,
		Roots: len(rs.roots), Goroutines: len(gs), Samples: len(samples), SampleRate: w.r.memProfileRate}
	if h.unreadable > 0 {
		w.res.Notes = append(w.res.Notes, fmt.Sprintf("%d spans of the heap claim memory that cannot be read (a truncated core?): their objects are left out", h.unreadable))
	}
	w.res.Notes = append(w.res.Notes, rs.notes...)
	w.res.Notes = append(w.res.Notes, g.notes...)
	n := &namer{h: h, g: g, ix: w.ix, tab: w.tab, t: w.t, st: st, types: w.md.Word("types", 0),
		direct: uint64(w.ix.Const("internal/abi.TFlagDirectIface", 1<<5)), dgs: st.dgs,
		locals: map[int][]*proc.Variable{}, rtCache: map[uint64]godwarf.Type{}, memo: map[uint32]*named{},
		named: map[string]godwarf.Type{}, roots: map[int]rootCache{}, segments: rs.segments}
	a = &aggregator{g: g, n: n, opts: w.opts, rate: w.r.memProfileRate, mainModule: w.t.Module}
	a.group(samples, buckets)
	if err := a.choose(); err != nil {
		return nil, err
	}
	w.res.Culprits = a.culprits()
	w.res.Notes = append(w.res.Notes, a.notes...)
	if w.r.memProfileRate == 0 {
		w.res.Notes = append(w.res.Notes, "the program samples no allocations (runtime.MemProfileRate is 0: it links no profiling): there are no sampled objects to find holders for")
	}
	w.res.Timing.Name = ms(time.Since(lap))
	return a, nil
}

// registers adds the general registers of every stopped thread, scanned word by word: a
// running goroutine may hold a pointer only in a register.
func (rs *rootSet) registers(t *process.Target) error {
	for _, th := range t.Delve.ThreadList() {
		regs, err := th.Registers()
		if err != nil {
			continue
		}
		slice, err := regs.Slice(false)
		if err != nil {
			continue
		}
		for _, reg := range slice {
			if reg.Reg != nil {
				rs.add(rootRegister, 0, reg.Reg.Uint64Val, int32(th.ThreadID()))
			}
		}
	}
	return nil
}

func targetOf(t *process.Target) holders.Target {
	return holders.Target{Kind: t.Kind, PID: t.PID, Exe: t.Exe, Core: t.Core, GoVersion: t.GoVersion, Arch: t.Arch, Module: t.Module}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// siteOf names the culprit site of an allocation stack, as the diagnosis names culprits.
func siteOf(stack []string, module string) string {
	return culprit.AttributeNames(stack, culprit.Options{MainModule: module}).Function
}
