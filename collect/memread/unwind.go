package memread

import (
	"encoding/binary"
	"fmt"

	"github.com/go-delve/delve/pkg/proc"

	"github.com/memdoctor/memdoctor/process"
)

// gLayout is what a goroutine profile reads of each runtime.g.
type gLayout struct {
	size                                    int64
	goid, status, hi, pc, sp, lr, syscallsp process.Field
	syscallpc, startpc, gopc                process.Field
	allgs                                   uint64 // runtime.allgs: a slice of *g
	arm64                                   bool   // a link-register machine
}

// Goroutine states (runtime2.go), the same in Go 1.26 and 1.27.
const (
	gRunning = 2
	gDead    = 6
	gScan    = 0x1000
)

func newGLayout(bi *proc.BinaryInfo, allgs uint64, arch string) (*gLayout, error) {
	fs := newFieldSet(bi, "runtime.g", "goid", "atomicstatus.value", "stack.hi", "sched.pc", "sched.sp", "sched.lr",
		"syscallsp", "syscallpc", "startpc", "gopc")
	if fs.err != nil {
		return nil, fs.err
	}
	f := fs.f
	return &gLayout{size: fs.s.Size, goid: f["goid"], status: f["atomicstatus.value"], hi: f["stack.hi"], pc: f["sched.pc"],
		sp: f["sched.sp"], lr: f["sched.lr"], syscallsp: f["syscallsp"], syscallpc: f["syscallpc"], startpc: f["startpc"], gopc: f["gopc"],
		allgs: allgs, arm64: arch == "arm64"}, nil
}

// parkedG is a goroutine that is not running: its stack is where it left it.
type parkedG struct {
	goid, startpc, gopc, pc, sp, lr, hi uint64
}

// listGoroutines reads runtime.allgs while the process is stopped: the goroutines that are not
// running, to unwind from what they saved, and how many are running (on a thread: Delve
// unwinds those from the thread's registers).
func (r *Reader) listGoroutines(m process.Reader) (parked []parkedG, running map[uint64]bool, err error) {
	l := r.gl
	var hdr [16]byte
	if err := m.Read(hdr[:], l.allgs); err != nil {
		return nil, nil, fmt.Errorf("runtime.allgs: %w", err)
	}
	ptr, n := binary.LittleEndian.Uint64(hdr[:]), binary.LittleEndian.Uint64(hdr[8:])
	if n > maxGoroutineProfile {
		return nil, nil, fmt.Errorf("runtime.allgs claims %d goroutines, more than memdoctor reads (%d)", n, maxGoroutineProfile)
	}
	raw := make([]byte, 8*n)
	if err := m.Read(raw, ptr); err != nil {
		return nil, nil, fmt.Errorf("runtime.allgs: %w", err)
	}
	running = map[uint64]bool{}
	gs := &process.Struct{Name: "runtime.g", Size: l.size}
	for i := uint64(0); i < n; i++ {
		ga := binary.LittleEndian.Uint64(raw[i*8:])
		v, err := gs.Read(m, ga)
		if err != nil {
			return nil, nil, fmt.Errorf("goroutine %d of runtime.allgs: %w", i, err)
		}
		switch status := v.U(l.status) &^ gScan; status {
		case gDead:
			continue
		case gRunning:
			running[v.U(l.goid)] = true
			continue
		}
		g := parkedG{goid: v.U(l.goid), startpc: v.U(l.startpc), gopc: v.U(l.gopc), pc: v.U(l.pc), sp: v.U(l.sp), lr: v.U(l.lr), hi: v.U(l.hi)}
		if ssp := v.U(l.syscallsp); ssp != 0 {
			g.pc, g.sp, g.lr = v.U(l.syscallpc), ssp, 0
		}
		parked = append(parked, g)
	}
	return parked, running, nil
}

// unwind is the runtime's unwinder (traceback.go) over a goroutine that is not running: from
// the pc and sp it saved, each frame's size from the function table's pcsp, its caller's
// return PC from the stack (x86) or the saved link register (arm64), until a top frame,
// runtime.goexit, an unknown PC or maxDepth. It returns one PC per logical frame, as
// tracebackPCs records them (inlined calls expanded), and whether it reached the bottom.
func (r *Reader) unwind(m process.Reader, g parkedG) ([]uint64, bool) {
	pc, sp, lr := g.pc, g.sp, g.lr
	word := func(addr uint64) (uint64, bool) {
		if addr < g.sp || addr+8 > g.hi { // a goroutine's frames lie on its own stack
			return 0, false
		}
		var b [8]byte
		if m.Read(b[:], addr) != nil {
			return 0, false
		}
		return binary.LittleEndian.Uint64(b[:]), true
	}
	if pc == 0 { // a nil function call: start in the caller
		var ok bool
		if pc, ok = word(sp); !ok {
			return nil, false
		}
		if !r.gl.arm64 {
			sp += 8
		}
		lr = 0
	}
	var out []uint64
	var callee uint8 // the funcID of the frame inside this one
	trap := false    // the frame was interrupted, not called: its pc is not a return address
	for innermost := true; len(out) < maxDepth; innermost = false {
		f, ok := r.tab.FuncForPC(pc)
		if !ok {
			return out, false
		}
		// tracebackPCs: the call's pc (pc-1) plus one, or the pc of a trapped frame plus one, or
		// of a frame at its function's entry (a goroutine that never ran yet: its saved pc is
		// its start function's entry, under goexit's return address).
		ret := pc
		if trap || pc == f.Entry {
			ret = pc + 1
		}
		out = r.syms.shownPCs(out, ret, &callee)
		if f.Name == "runtime.goexit" || f.Flag&process.FuncFlagTopFrame != 0 {
			return out, true
		}
		if f.Flag&process.FuncFlagSPWrite != 0 && !innermost {
			return out, false
		}
		delta := f.SPDelta(pc)
		if delta < 0 {
			return out, false
		}
		fp := sp + uint64(delta)
		if !r.gl.arm64 {
			fp += 8 // the call pushed the return address
			if lr, ok = word(fp - 8); !ok {
				return out, false
			}
		} else if innermost && sp < fp || lr == 0 {
			if lr, ok = word(sp); !ok {
				return out, false
			}
		}
		if lr == 0 || (lr == pc && fp == sp) {
			return out, lr == 0
		}
		trap = f.Name == "runtime.asyncPreempt"
		pc, sp, lr = lr, fp, 0
	}
	return out[:maxDepth], false
}
