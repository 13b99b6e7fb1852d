package memread

import (
	"encoding/binary"
	"fmt"
	"strings"
	"time"

	"github.com/go-delve/delve/pkg/proc"
	"github.com/google/pprof/profile"

	"github.com/memdoctor/memdoctor/process"
)

// goroutineLayout is where the scheduler keeps what runtime.gcount reads.
type goroutineLayout struct {
	gFreeStack, gFreeNoStack, ngsys process.Field // in runtime.schedt
	pGFree                          process.Field // in runtime.p
}

func newGoroutineLayout(bi *proc.BinaryInfo) (*goroutineLayout, error) {
	sched := newFieldSet(bi, "runtime.schedt", "gFree.stack.size", "gFree.noStack.size", "ngsys.value")
	if sched.err != nil {
		return nil, sched.err
	}
	p := newFieldSet(bi, "runtime.p", "gFree.size")
	if p.err != nil {
		return nil, p.err
	}
	return &goroutineLayout{gFreeStack: sched.f["gFree.stack.size"], gFreeNoStack: sched.f["gFree.noStack.size"],
		ngsys: sched.f["ngsys.value"], pGFree: p.f["gFree.size"]}, nil
}

// maxProcs bounds the Ps read from runtime.allp.
const maxProcs = 1 << 16

// Goroutines counts the goroutines as runtime.NumGoroutine does (runtime.gcount without the
// system goroutines): every goroutine ever made, less those dead on the free lists, less the
// runtime's own. The process runs all along; like the runtime's, the count is a sum of
// figures that move independently.
func (r *Reader) Goroutines() (int, error) {
	l := r.gr
	allglen, err := r.mem.Uint64(r.sym[symAllglen].Addr)
	if err != nil {
		return 0, fmt.Errorf("runtime.allglen: %w", err)
	}
	sched := r.sym[symSched].Addr
	var n int64 = int64(allglen)
	for _, f := range []process.Field{l.gFreeStack, l.gFreeNoStack, l.ngsys} {
		v, err := r.mem.Uint32(sched + uint64(f.Off))
		if err != nil {
			return 0, fmt.Errorf("runtime.sched: %w", err)
		}
		n -= int64(int32(v))
	}
	ptr, err := r.mem.Uint64(r.sym[symAllp].Addr)
	if err != nil {
		return 0, fmt.Errorf("runtime.allp: %w", err)
	}
	np, err := r.mem.Uint64(r.sym[symAllp].Addr + 8)
	if err != nil || np > maxProcs {
		return 0, fmt.Errorf("runtime.allp: %d Ps (%v)", np, err)
	}
	if np > 0 {
		raw := make([]byte, 8*np)
		if err := r.mem.Read(raw, ptr); err != nil {
			return 0, fmt.Errorf("runtime.allp: %w", err)
		}
		for i := uint64(0); i < np; i++ {
			pp := binary.LittleEndian.Uint64(raw[i*8:])
			if pp == 0 {
				continue
			}
			v, err := r.mem.Uint32(pp + uint64(l.pGFree.Off))
			if err != nil {
				return 0, fmt.Errorf("runtime.allp[%d]: %w", i, err)
			}
			n -= int64(int32(v))
		}
	}
	if allglen > 1<<31 {
		return 0, fmt.Errorf("runtime.allglen reads %d", allglen)
	}
	return int(max(n, 1)), nil
}

// GoroutineReading says what a goroutine profile reading cost the target.
type GoroutineReading struct {
	Goroutines int           // in the profile
	Stopped    time.Duration // how long the target was stopped
	Skipped    int           // goroutines whose stacks could not be read
}

// maxGoroutineProfile bounds the goroutines a profile lists, and maxDepth each one's frames
// (the runtime's goroutine profile keeps 128 by default).
const (
	maxGoroutineProfile = 1 << 20
	maxDepth            = 128
)

// GoroutineProfile stops the process (every thread), reads every goroutine's stack, lets the
// process run again whatever happens, and returns the goroutine profile /debug/pprof/goroutine
// would serve (goroutine/count, one sample per distinct stack), with how long the target was
// stopped. Stacks are symbolized after the process runs again. Unlike the runtime's, each
// sample says which function's go statement started its goroutines (the g's gopc, what a
// debug=2 traceback prints as "created by"): the label culprit.CreatedByLabel.
func (r *Reader) GoroutineProfile() (*profile.Profile, *GoroutineReading, error) {
	if r.t == nil {
		return nil, nil, ErrDetached
	}
	gr := &GoroutineReading{}
	start := time.Now()
	if err := r.t.Stop(); err != nil {
		return nil, nil, err
	}
	stacks, skipped, err := r.goroutineStacks()
	gr.Stopped = r.t.Resume()
	if err != nil {
		return nil, gr, err
	}
	gr.Skipped = skipped
	p := r.stackProfile(stacks, 1, start)
	gr.Goroutines = len(stacks)
	return p, gr, nil
}

// gstack is one goroutine's stack, as return PCs per logical frame, and the return PC of
// the go statement that started it (0 when unknown).
type gstack struct {
	pcs  []uint64
	gopc uint64
}

// creator names the function of a go statement's return PC, as a debug=2 traceback's
// "created by" does, inlined calls expanded (the innermost function at the call); "" when
// the pc is in no Go function.
func (r *Reader) creator(gopc uint64) string {
	if gopc == 0 {
		return ""
	}
	return r.syms.frameOf(gopc).name
}

// goroutineStacks lists the user goroutines' stacks, as return PCs per logical frame, while
// the process is stopped. Goroutines that are not running are unwound as the runtime unwinds
// them, from what they saved, through a cache of the stopped process's memory; those running
// on a thread, and any the unwinder cannot finish, are unwound by Delve.
func (r *Reader) goroutineStacks() (stacks []gstack, skipped int, err error) {
	if r.gl == nil {
		return r.delveStacks(nil)
	}
	c := process.NewCache(r.mem, goroutineCacheBytes)
	parked, running, err := r.listGoroutines(c)
	if err != nil {
		return nil, 0, err
	}
	delve := running
	for _, g := range parked {
		if r.systemStart(g.startpc) {
			continue
		}
		pcs, done := r.unwind(c, g)
		if !done || len(pcs) == 0 {
			delve[g.goid] = true
			continue
		}
		stacks = append(stacks, gstack{pcs, g.gopc})
	}
	if len(delve) == 0 {
		return stacks, 0, nil
	}
	more, skipped, err := r.delveStacks(delve)
	return append(stacks, more...), skipped, err
}

// goroutineCacheBytes is the memory a goroutine profile keeps of the stopped process's stacks
// and g structs while it reads them.
const goroutineCacheBytes = 16 << 20

// delveStacks unwinds with Delve the goroutines of ids (all of them when ids is nil): those
// running on a thread are found from the threads, the rest in Delve's list of goroutines.
func (r *Reader) delveStacks(ids map[uint64]bool) (stacks []gstack, skipped int, err error) {
	var gs []*proc.G
	if ids != nil {
		for _, th := range r.t.Delve.ThreadList() {
			var g *proc.G
			if process.Safely(func() (err error) { g, err = proc.GetG(th); return err }) == nil && g != nil && ids[uint64(g.ID)] {
				gs = append(gs, g)
				delete(ids, uint64(g.ID))
			}
		}
	}
	for start := 0; ids == nil || len(ids) > 0; {
		var page []*proc.G
		var next int
		err := process.Safely(func() (err error) {
			page, next, err = proc.GoroutinesInfo(r.t.Delve, start, 10000)
			return err
		})
		if err != nil {
			return nil, 0, fmt.Errorf("listing goroutines: %w", err)
		}
		for _, g := range page {
			if ids == nil || ids[uint64(g.ID)] {
				gs = append(gs, g)
			}
		}
		if next < 0 || next <= start || len(gs) >= maxGoroutineProfile {
			break
		}
		start = next
	}
	for _, g := range gs {
		if g.Unreadable != nil || r.systemStart(g.StartPC) {
			skipped += boolInt(g.Unreadable != nil)
			continue
		}
		frames, err := r.stacktrace(g)
		if err != nil && len(frames) == 0 {
			skipped++
			continue
		}
		var pcs []uint64
		var callee uint8
		for _, fr := range frames {
			if fr.Inlined || fr.SystemStack || fr.Current.PC == 0 {
				continue
			}
			pcs = r.syms.shownPCs(pcs, fr.Current.PC, &callee)
			if len(pcs) >= maxDepth {
				pcs = pcs[:maxDepth]
				break
			}
		}
		if len(pcs) == 0 { // only system-stack frames: nothing the profile would show
			skipped++
			continue
		}
		stacks = append(stacks, gstack{pcs, g.GoPC})
	}
	return stacks, skipped, nil
}

// firstDepth is the depth a stack is first unwound to: most stacks are shorter, and Delve
// allocates room for the depth asked for each time; a stack that fills it is unwound again to
// maxDepth.
const firstDepth = 32

// stacktrace unwinds a goroutine's stack with Delve, while the process is stopped.
func (r *Reader) stacktrace(g *proc.G) ([]proc.Stackframe, error) {
	var frames []proc.Stackframe
	unwind := func(depth int) error {
		return process.Safely(func() (err error) {
			frames, err = proc.GoroutineStacktrace(r.t.Delve, g, depth, 0)
			return err
		})
	}
	err := unwind(firstDepth)
	if err == nil && len(frames) > firstDepth {
		err = unwind(maxDepth)
	}
	return frames, err
}

// systemStart is runtime.isSystemGoroutine, roughly: a goroutine the runtime started for
// itself (its start function is the runtime's, other than runtime.main), which neither
// runtime.NumGoroutine nor the goroutine profile counts.
func (r *Reader) systemStart(startpc uint64) bool {
	name := r.syms.funcForPC(startpc)
	return strings.HasPrefix(name, "runtime.") && name != "runtime.main"
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
