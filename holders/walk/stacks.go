package walk

import (
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/go-delve/delve/pkg/proc"
	"github.com/memdoctor/memdoctor/process"
)

// goroutine is one goroutine whose stack is a root.
type goroutine struct {
	addr   uint64 // its g
	id     int64
	status uint64
	lo, hi uint64
	wait   string
}

// frame is one physical frame of a goroutine's stack that holds roots: what naming them needs.
type frame struct {
	g            int // index in stackRoots.gs
	depth        int // index in Delve's stack trace of the goroutine
	fn           string
	pc, sp, cfa  uint64
	conservative bool // scanned word by word: the runtime had no precise map for it here
}

// stackRoots reads every goroutine's stack as the GC does: each frame's live pointer slots
// from the function's stack maps at its pc, the stack objects (address-taken locals) those
// reach, and conservatively the frames the runtime scans conservatively (an asynchronously
// preempted one and its caller) and the innermost frame of a goroutine running when stopped.
type stackRoots struct {
	rs        *rootSet
	t         *process.Target
	tab       *process.Pclntab
	gs        []goroutine
	frames    []frame
	maxFrames int
	rodata    uint64 // moduledata.rodata: stack objects' pointer masks are offsets from it
	dgs       map[int64]*proc.G
	objects   map[int][]stackObject // per frame, its live stack objects
	// missing returns what of a range the snapshot could not copy (nil: all was).
	missing func(lo, hi uint64) []process.Region
}

// maxGoroutines bounds the goroutines a reading lists (their g pointers fill one read).
const maxGoroutines = process.MaxRead / 8

const (
	gStatusDead        = 6
	argsSizeUnknown    = -0x80000000
	funcIDAsyncPreempt = 19 // abi.FuncID_asyncPreempt
)

// readGoroutines reads runtime.allgs: stack bounds, status and wait reason of each goroutine.
func readGoroutines(r *rt) ([]goroutine, error) {
	addr, err := r.global("runtime.allgs")
	if err != nil {
		return nil, err
	}
	ptr, err := r.mem.Uint64(addr)
	if err != nil {
		return nil, err
	}
	n, err := r.mem.Uint64(addr + 8)
	if err != nil {
		return nil, err
	}
	if n > maxGoroutines {
		return nil, fmt.Errorf("runtime.allgs claims %d goroutines, more than memdoctor reads (%d)", n, maxGoroutines)
	}
	if g, ok := r.ix.Global("runtime.allglen"); ok {
		if glen, err := r.mem.Uint64(g.Addr); err == nil && glen > n {
			return nil, fmt.Errorf("runtime.allglen (%d) and runtime.allgs (%d) disagree: the runtime's goroutine list is corrupt", glen, n)
		}
	}
	reasons := waitReasons(r)
	raw := make([]byte, 8*n)
	if err := r.mem.Read(raw, ptr); err != nil {
		return nil, fmt.Errorf("runtime.allgs: %w", err)
	}
	var gs []goroutine
	for i := uint64(0); i < n; i++ {
		ga := binary.LittleEndian.Uint64(raw[i*8:])
		v, err := r.g.Read(r.cache, ga)
		if err != nil {
			return nil, fmt.Errorf("goroutine %d of runtime.allgs: %w", i, err)
		}
		g := goroutine{addr: ga, id: int64(v.U(r.gID)), status: v.U(r.gStatus) &^ 0x1000, lo: v.U(r.gLo), hi: v.U(r.gHi)}
		if g.status == gStatusDead || g.hi <= g.lo || g.hi-g.lo > 1<<30 {
			continue
		}
		if w := v.U(r.gWait); w < uint64(len(reasons)) {
			g.wait = reasons[w]
		}
		gs = append(gs, g)
	}
	sort.Slice(gs, func(i, j int) bool { return gs[i].id < gs[j].id })
	return gs, nil
}

// waitReasons reads runtime.waitReasonStrings.
func waitReasons(r *rt) []string {
	g, ok := r.ix.Global("runtime.waitReasonStrings")
	if !ok || g.Size == 0 || g.Size > 1<<16 {
		return nil
	}
	raw := make([]byte, g.Size)
	if r.mem.Read(raw, g.Addr) != nil {
		return nil
	}
	out := make([]string, g.Size/16)
	for i := range out {
		p, n := binary.LittleEndian.Uint64(raw[i*16:]), binary.LittleEndian.Uint64(raw[i*16+8:])
		if n > 0 && n < 128 {
			b := make([]byte, n)
			if r.mem.Read(b, p) == nil {
				out[i] = string(b)
			}
		}
	}
	return out
}

// scan walks every goroutine's frames.
func (s *stackRoots) scan() error {
	var dgs []*proc.G
	for start := 0; ; {
		var page []*proc.G
		var next int
		err := process.Safely(func() (err error) {
			page, next, err = proc.GoroutinesInfo(s.t.Delve, start, 10000)
			return err
		})
		if err != nil {
			return fmt.Errorf("listing goroutines: %w", err)
		}
		dgs = append(dgs, page...)
		if next < 0 || next <= start || len(dgs) > len(s.gs)+10000 {
			break
		}
		start = next
	}
	byID := make(map[int64]*proc.G, len(dgs))
	for _, g := range dgs {
		byID[g.ID] = g
	}
	s.dgs = byID
	for gi, g := range s.gs {
		dg := byID[g.id]
		if dg == nil {
			// Delve could not read it: scan its whole stack conservatively.
			s.rs.notes = append(s.rs.notes, fmt.Sprintf("goroutine %d: its frames could not be read; its stack was scanned word by word", g.id))
			if err := s.conservativeRange(gi, -1, g.lo, g.hi); err != nil {
				return err
			}
			continue
		}
		if err := s.goroutine(gi, dg); err != nil {
			return err
		}
	}
	return nil
}

type stackObject struct {
	addr, size uint64
	mask       []byte // one bit per word of the object's first ptrBytes
	frame      int
	live       bool
}

func (s *stackRoots) goroutine(gi int, dg *proc.G) error {
	g := s.gs[gi]
	var frames []proc.Stackframe
	err := process.Safely(func() (err error) {
		frames, err = proc.GoroutineStacktrace(s.t.Delve, dg, s.maxFrames, 0)
		return err
	})
	if err != nil && len(frames) == 0 {
		s.rs.notes = append(s.rs.notes, fmt.Sprintf("goroutine %d: %v; its stack was scanned word by word", g.id, err))
		return s.conservativeRange(gi, -1, g.lo, g.hi)
	}
	running := dg.Thread != nil
	conservative := false
	var objs []stackObject
	var pending []uint64 // pointers into this stack, to resolve against stack objects
	last := g.lo
	for depth, fr := range frames {
		if fr.Inlined || fr.SystemStack {
			continue
		}
		sp, cfa, pc := fr.Regs.SP(), uint64(fr.Regs.CFA), fr.Current.PC
		if sp < g.lo || cfa > g.hi || cfa <= sp {
			continue // not on this goroutine's stack (a system stack's frame)
		}
		last = cfa
		f, ok := s.tab.FuncForPC(pc)
		fi := len(s.frames)
		s.frames = append(s.frames, frame{g: gi, depth: depth, fn: funcName(fr, f), pc: pc, sp: sp, cfa: cfa})
		innermost := allInlined(frames[:depth])
		// A frame part of which could not be copied (see missing) is scanned word by word
		// around what is missing.
		holed := s.missing != nil && len(s.missing(sp, cfa)) > 0
		if !ok || conservative || holed || (innermost && running) || f.FuncID == funcIDAsyncPreempt {
			s.frames[fi].conservative = true
			if err := s.conservativeRange(gi, fi, sp, cfa); err != nil {
				return err
			}
			conservative = ok && f.FuncID == funcIDAsyncPreempt
			continue
		}
		conservative = false
		stack, err := s.precise(gi, fi, f, pc, sp, cfa, &objs)
		if err != nil {
			return err
		}
		pending = append(pending, stack...)
	}
	if len(frames) >= s.maxFrames && last < g.hi {
		// A deeper stack than memdoctor unwinds: nothing below is missed, it is scanned word by word.
		s.rs.notes = append(s.rs.notes, fmt.Sprintf("goroutine %d: deeper than %d frames; the rest of its stack was scanned word by word", g.id, s.maxFrames))
		if err := s.conservativeRange(gi, -1, last, g.hi); err != nil {
			return err
		}
	}
	return s.stackObjects(objs, pending)
}

func allInlined(fs []proc.Stackframe) bool {
	for _, f := range fs {
		if !f.Inlined {
			return false
		}
	}
	return true
}

func funcName(fr proc.Stackframe, f *process.Func) string {
	if fr.Current.Fn != nil {
		return fr.Current.Fn.Name
	}
	if f != nil {
		return f.Name
	}
	return "?"
}

// conservativeRange scans [lo, hi) of a goroutine's stack word by word, but for what the
// snapshot could not copy of it (missing: none was read; the reading's note counts it).
func (s *stackRoots) conservativeRange(gi, fi int, lo, hi uint64) error {
	var holes []process.Region
	if s.missing != nil {
		holes = s.missing(lo, hi)
	}
	for _, h := range append(holes, process.Region{Lo: hi, Hi: hi}) {
		if h.Lo > lo {
			if err := s.rs.scanConservative(rootStack, lo, h.Lo-lo, int32(fi)); err != nil {
				return err
			}
		}
		lo = max(lo, h.Hi)
	}
	return nil
}

// precise adds the live pointer slots of one frame by its stack maps, and records its stack
// objects; it returns the slots' values that point into the goroutine's own stack.
func (s *stackRoots) precise(gi, fi int, f *process.Func, pc, sp, cfa uint64, objs *[]stackObject) ([]uint64, error) {
	g := s.gs[gi]
	mem := s.rs.h.r.mem
	targetpc := pc
	var idx int32 = -1
	if targetpc != f.Entry {
		targetpc--
		idx = f.PCData(process.PCDataStackMap, targetpc)
	}
	if idx < 0 {
		idx = 0
	}
	// The frame's layout, as the runtime's unwinder computes it (amd64 and arm64 both keep a
	// frame pointer below the return address or link register).
	varp := cfa
	minFrame := uint64(0)
	if s.t.Arch == "amd64" {
		varp -= 8 // the return address
	} else {
		minFrame = 8
	}
	if varp > sp {
		varp -= 8 // the saved frame pointer
	}
	argp := cfa + minFrame
	var inStack []uint64
	scan := func(base uint64, bm bitvec) error {
		if bm.n == 0 {
			return nil
		}
		buf := make([]byte, bm.n*8)
		if err := mem.Read(buf, base); err != nil {
			return err
		}
		for w := uint64(0); w < bm.n; w++ {
			if bm.bits[w/8]&(1<<(w%8)) == 0 {
				continue
			}
			val := binary.LittleEndian.Uint64(buf[w*8:])
			if val >= g.lo && val < g.hi {
				inStack = append(inStack, val)
				continue
			}
			s.rs.add(rootStack, base+w*8, val, int32(fi))
		}
		return nil
	}
	size := varp - sp
	if size > minFrame {
		if bm, err := readStackMap(mem, f.FuncData(process.FuncDataLocalsPointerMaps), idx); err != nil {
			return nil, fmt.Errorf("%s's locals map: %w", f.Name, err)
		} else if bm.n > 0 {
			if err := scan(varp-bm.n*8, bm); err != nil {
				return nil, err
			}
		}
	}
	if f.Args != argsSizeUnknown && f.Args > 0 {
		if bm, err := readStackMap(mem, f.FuncData(process.FuncDataArgsPointerMaps), idx); err != nil {
			return nil, fmt.Errorf("%s's arguments map: %w", f.Name, err)
		} else if bm.n > 0 {
			if err := scan(argp, bm); err != nil {
				return nil, err
			}
		}
	}
	if so := f.FuncData(process.FuncDataStackObjects); so != 0 {
		if err := s.readStackObjects(so, varp, argp, sp, fi, objs); err != nil {
			return nil, fmt.Errorf("%s's stack objects: %w", f.Name, err)
		}
	}
	return inStack, nil
}

// bitvec is one stack map entry: n words, a bit each.
type bitvec struct {
	n    uint64
	bits []byte
}

func readStackMap(mem *process.Memory, addr uint64, idx int32) (bitvec, error) {
	if addr == 0 {
		return bitvec{}, nil
	}
	var hdr [8]byte
	if err := mem.Read(hdr[:], addr); err != nil {
		return bitvec{}, err
	}
	n, nbit := int32(binary.LittleEndian.Uint32(hdr[:])), int32(binary.LittleEndian.Uint32(hdr[4:]))
	if n <= 0 || nbit <= 0 {
		return bitvec{}, nil
	}
	if idx >= n || nbit > 1<<20 {
		return bitvec{}, fmt.Errorf("entry %d of a stack map of %d (%d bits): out of range", idx, n, nbit)
	}
	bytes := (nbit + 7) / 8
	b := make([]byte, bytes)
	if err := mem.Read(b, addr+8+uint64(idx)*uint64(bytes)); err != nil {
		return bitvec{}, err
	}
	return bitvec{n: uint64(nbit), bits: b}, nil
}

func (s *stackRoots) readStackObjects(addr, varp, argp, sp uint64, fi int, objs *[]stackObject) error {
	mem := s.rs.h.r.mem
	n, err := mem.Uint64(addr)
	if err != nil || n == 0 {
		return err
	}
	if n > 1<<16 {
		return fmt.Errorf("%d stack objects claimed", n)
	}
	raw := make([]byte, n*16) // off int32, size int32, ptrBytes int32, gcdataoff uint32
	if err := mem.Read(raw, addr+8); err != nil {
		return err
	}
	for i := uint64(0); i < n; i++ {
		off := int32(binary.LittleEndian.Uint32(raw[i*16:]))
		size := uint64(binary.LittleEndian.Uint32(raw[i*16+4:]))
		ptrBytes := uint64(binary.LittleEndian.Uint32(raw[i*16+8:]))
		gcoff := uint64(binary.LittleEndian.Uint32(raw[i*16+12:]))
		base := varp
		if off >= 0 {
			base = argp
		}
		p := base + uint64(int64(off))
		if p < sp || ptrBytes == 0 || ptrBytes > size || size > 1<<24 {
			continue
		}
		mask := make([]byte, (ptrBytes/8+7)/8)
		if err := mem.Read(mask, s.rodata+gcoff); err != nil {
			return err
		}
		*objs = append(*objs, stackObject{addr: p, size: size, mask: mask, frame: fi})
	}
	return nil
}

// stackObjects scans the stack objects that live slots (or other live stack objects) point
// into, as the runtime does: an address-taken local is live only while something refers to it.
func (s *stackRoots) stackObjects(objs []stackObject, pending []uint64) error {
	sort.Slice(objs, func(i, j int) bool { return objs[i].addr < objs[j].addr })
	mem := s.rs.h.r.mem
	for len(pending) > 0 {
		p := pending[len(pending)-1]
		pending = pending[:len(pending)-1]
		i := sort.Search(len(objs), func(i int) bool { return objs[i].addr+objs[i].size > p })
		if i == len(objs) || p < objs[i].addr || objs[i].live {
			continue
		}
		o := &objs[i]
		o.live = true
		if s.objects == nil {
			s.objects = map[int][]stackObject{}
		}
		s.objects[o.frame] = append(s.objects[o.frame], *o)
		words := uint64(len(o.mask)) * 8
		buf := make([]byte, min(words*8, o.size))
		if err := mem.Read(buf, o.addr); err != nil {
			return err
		}
		for w := uint64(0); w*8+8 <= uint64(len(buf)); w++ {
			if o.mask[w/8]&(1<<(w%8)) == 0 {
				continue
			}
			val := binary.LittleEndian.Uint64(buf[w*8:])
			g := s.gs[s.frames[o.frame].g]
			if val >= g.lo && val < g.hi {
				pending = append(pending, val)
				continue
			}
			s.rs.add(rootStack, o.addr+w*8, val, int32(o.frame))
		}
	}
	return nil
}
