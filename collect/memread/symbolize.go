package memread

import (
	"encoding/binary"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/memdoctor/memdoctor/process"
)

// frame is one logical frame of a stack, as runtime.CallersFrames gives it for one return
// PC: the logical function at pc-1, its file and line.
type frame struct {
	pc        uint64 // the return PC minus one: what pprof records as the location's address
	name      string
	file      string
	line      int
	startLine int
	entry     uint64 // the physical function's entry; 0 when the pc is in no Go function
	inlined   bool
	funcID    uint8
}

// maxSymbols bounds the symbolizer's cache of frames (one per distinct PC, the PCs of one
// executable's code): past it, the cache starts again.
const maxSymbols = 1 << 18

// symbolizer names PCs from the runtime's function table, caching each.
type symbolizer struct {
	tab     *process.Pclntab
	frames  map[uint64]frame // by return PC
	names   map[uint64]string
	logical map[uint64][]uint64 // a physical frame's return PC -> its logical frames' PCs
}

func newSymbolizer(tab *process.Pclntab) *symbolizer {
	return &symbolizer{tab: tab, frames: map[uint64]frame{}, names: map[uint64]string{}, logical: map[uint64][]uint64{}}
}

// logicalPCs is Pclntab.LogicalPCs, cached: goroutine stacks are unwound with the process
// stopped, and the same call sites recur in every stack.
func (s *symbolizer) logicalPCs(pc uint64) []uint64 {
	if l, ok := s.logical[pc]; ok {
		return l
	}
	if len(s.logical) >= maxSymbols {
		clear(s.logical)
	}
	l := s.tab.LogicalPCs(pc)
	s.logical[pc] = l
	return l
}

// shownPCs appends the logical frames of one physical frame's return PC (logicalPCs) as
// tracebackPCs records them: a compiler-generated wrapper's frame (a go statement's gowrap, a
// method wrapper) is left out, unless it called a panic. callee is the funcID of the frame
// inside the last one appended or left out, updated.
func (s *symbolizer) shownPCs(out []uint64, ret uint64, callee *uint8) []uint64 {
	for _, pc := range s.logicalPCs(ret) {
		id := s.frameOf(pc).funcID
		if id != process.FuncIDWrapper || *callee == process.FuncIDGopanic || *callee == process.FuncIDSigpanic || *callee == process.FuncIDPanicwrap {
			out = append(out, pc)
		}
		*callee = id
	}
	return out
}

// frameOf is runtime.CallersFrames([]uintptr{pc}): the innermost logical frame at pc-1.
func (s *symbolizer) frameOf(pc uint64) frame {
	if f, ok := s.frames[pc]; ok {
		return f
	}
	if len(s.frames) >= maxSymbols {
		clear(s.frames)
	}
	f := frame{pc: pc - 1}
	if fi, ok := s.tab.FuncInfo(pc - 1); ok {
		f.name, f.startLine, f.entry, f.inlined, f.funcID = fi.Name, int(fi.StartLine), fi.Entry, fi.Inlined, fi.FuncID
		f.file, f.line = s.tab.Line(pc - 1)
	}
	s.frames[pc] = f
	return f
}

// funcForPC is the name runtime.FuncForPC(pc).Name() gives: the logical function at pc
// itself, not pc-1 (runtime/pprof uses it to hide the runtime's frames).
func (s *symbolizer) funcForPC(pc uint64) string {
	if n, ok := s.names[pc]; ok {
		return n
	}
	if len(s.names) >= maxSymbols {
		clear(s.names)
	}
	fi, _ := s.tab.FuncInfo(pc)
	s.names[pc] = fi.Name
	return fi.Name
}

// locations builds a profile's locations and functions as runtime/pprof's profileBuilder
// does: one location per physical frame, holding the logical frames inlined into it, innermost
// first.
type locations struct {
	s     *symbolizer
	p     *profile.Profile
	m     *profile.Mapping
	byKey map[string]*profile.Location
	funcs map[string]*profile.Function
}

func newLocations(s *symbolizer, p *profile.Profile, m *profile.Mapping) *locations {
	return &locations{s: s, p: p, m: m, byKey: map[string]*profile.Location{}, funcs: map[string]*profile.Function{}}
}

// heapStack turns a heap-profile bucket's stack into locations, hiding the runtime's own frames
// at its top as writeHeapProto does (unless nothing else would be left).
func (l *locations) heapStack(stk []uint64) []*profile.Location {
	full := stk
	for i, pc := range stk {
		if n := l.s.funcForPC(pc); n != "" && (strings.HasPrefix(n, "runtime.") || strings.HasPrefix(n, "internal/runtime/")) {
			continue
		}
		stk = stk[i:]
		break
	}
	if locs := l.stack(stk); len(locs) > 0 {
		return locs
	}
	return l.stack(full)
}

// stack is appendLocsForStack: consecutive PCs whose frames are inlined into the same
// physical function make one location (pcDeck), runtime.goexit ends the stack.
func (l *locations) stack(stk []uint64) []*profile.Location {
	var out []*profile.Location
	var deck []frame
	flush := func() {
		if len(deck) > 0 {
			out = append(out, l.location(deck))
			deck = deck[:0]
		}
	}
	for _, pc := range stk {
		f := l.s.frameOf(pc)
		if f.name == "runtime.goexit" {
			flush()
			continue
		}
		if n := len(deck); n > 0 {
			last := deck[n-1]
			if !last.inlined || last.entry == 0 || f.entry == 0 || last.entry != f.entry || last.name == f.name {
				flush()
			}
		}
		deck = append(deck, f)
	}
	flush()
	return out
}

// location returns the location of a deck of frames, made once.
func (l *locations) location(deck []frame) *profile.Location {
	kb := make([]byte, 0, 8*len(deck)) // the deck's pcs, 8 bytes each
	for _, f := range deck {
		kb = binary.LittleEndian.AppendUint64(kb, f.pc)
	}
	k := string(kb)
	if loc, ok := l.byKey[k]; ok {
		return loc
	}
	loc := &profile.Location{ID: uint64(len(l.p.Location) + 1), Address: deck[0].pc, Mapping: l.m}
	for _, f := range deck {
		if f.name == "" {
			continue // a pc in no Go function: an address alone
		}
		fn := l.funcs[f.name]
		if fn == nil {
			fn = &profile.Function{ID: uint64(len(l.p.Function) + 1), Name: f.name, SystemName: f.name, Filename: f.file, StartLine: int64(f.startLine)}
			l.funcs[f.name] = fn
			l.p.Function = append(l.p.Function, fn)
		}
		loc.Line = append(loc.Line, profile.Line{Function: fn, Line: int64(f.line)})
	}
	l.byKey[k] = loc
	l.p.Location = append(l.p.Location, loc)
	return loc
}
