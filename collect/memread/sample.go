package memread

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/google/pprof/profile"

	"github.com/memdoctor/memdoctor/culprit"
	"github.com/memdoctor/memdoctor/process"
)

// A goroutine profile can be read without stopping the process: a goroutine that is not
// running keeps its stack where it left it (its saved pc and sp), and the runtime's own
// unwinder needs nothing else. Each goroutine is read alone (its g, then its stack), and
// read again afterwards: when it ran in between (its status, saved pc and sp, or stack moved),
// what was read is thrown away. Running goroutines cannot be read this way (their registers
// are on a thread) and are left out, counted. Past a number of goroutines, a sample of them is
// read, spread evenly over runtime.allgs (the order they were made in), each counting for
// those it stands for: the cost stays bounded whatever their number (480,000 goroutines are
// read in the time 5,000 take), and the process is never stopped.

// More goroutine states (runtime2.go; the same in Go 1.26 and 1.27).
const (
	gIdle      = 0
	gCopyStack = 8
)

// maxStackRead bounds the bytes of one goroutine's stack read at once; deeper frames are read
// word by word.
const maxStackRead = 64 << 10

// allgsChunk is how many of runtime.allgs' pointers are read at once.
const allgsChunk = 8192

// SampleReading says what a goroutine profile read without stopping held.
type SampleReading struct {
	Goroutines int           // that the profile stands for: Read of them, each counting Scale
	Of         int           // runtime.allglen: every goroutine made and not reused, dead ones included
	Read       int           // goroutines whose stacks were read
	Scale      float64       // how many goroutines each one read stands for (1: all were read)
	Running    int           // sampled goroutines running on a thread: left out
	Moved      int           // sampled goroutines that ran while being read: left out
	Skipped    int           // sampled goroutines whose stacks could not be unwound
	Took       time.Duration // in memdoctor; the process was not stopped
}

// String is the reading in a few words, for a log line.
func (s *SampleReading) String() string {
	return fmt.Sprintf("%d goroutines read of %d made (x%.1f), %d running and %d moving left out, %d unreadable, in %s",
		s.Read, s.Of, s.Scale, s.Running, s.Moved, s.Skipped, s.Took.Round(time.Microsecond))
}

// GoroutineSample reads the goroutines' stacks without stopping the process: every goroutine
// when runtime.allglen is at most max, else max of them spread evenly over runtime.allgs (from
// a random start), each counting for the goroutines it stands for. It returns the goroutine
// profile /debug/pprof/goroutine would serve, less the running goroutines (see above), its
// counts scaled, labelled with the function that started each goroutine as GoroutineProfile
// does. It needs the runtime's g layout (the executable's DWARF, read at Open): it works on a
// detached reader too.
func (r *Reader) GoroutineSample(limit int) (*profile.Profile, *SampleReading, error) {
	if r.gl == nil {
		return nil, nil, fmt.Errorf("the runtime's goroutine layout is unknown: stacks are read only with the process stopped")
	}
	start := time.Now()
	var hdr [16]byte
	if err := r.mem.Read(hdr[:], r.gl.allgs); err != nil {
		return nil, nil, fmt.Errorf("runtime.allgs: %w", err)
	}
	ptr, n := binary.LittleEndian.Uint64(hdr[:]), binary.LittleEndian.Uint64(hdr[8:])
	if n > maxGoroutineProfile {
		return nil, nil, fmt.Errorf("runtime.allgs claims %d goroutines, more than memdoctor reads (%d)", n, maxGoroutineProfile)
	}
	limit = max(limit, 1)
	sr := &SampleReading{Of: int(n), Scale: 1}
	stride := 1.0
	if n > uint64(limit) {
		stride = float64(n) / float64(limit)
		sr.Scale = stride
	}
	var stacks []gstack
	next := rand.Float64() * stride // the first index read
	raw := make([]byte, 8*min(n, allgsChunk))
	for base := uint64(0); base < n; base += allgsChunk {
		cnt := min(n-base, allgsChunk)
		if uint64(next) >= base+cnt {
			continue
		}
		if err := r.mem.Read(raw[:8*cnt], ptr+8*base); err != nil {
			return nil, nil, fmt.Errorf("runtime.allgs: %w", err)
		}
		for ; uint64(next) < base+cnt; next += stride {
			ga := binary.LittleEndian.Uint64(raw[8*(uint64(next)-base):])
			if st, ok := r.readOne(ga, sr); ok {
				stacks = append(stacks, st)
			}
		}
	}
	sr.Read = len(stacks)
	p := r.stackProfile(stacks, sr.Scale, start)
	p.Comments = []string{fmt.Sprintf("memdoctor: read from the process's memory without stopping it: %d of %d goroutines made, each counting for %.2f; running goroutines left out", sr.Read, sr.Of, sr.Scale)}
	for _, s := range p.Sample {
		sr.Goroutines += int(s.Value[0])
	}
	sr.Took = time.Since(start)
	return p, sr, nil
}

// readOne reads one goroutine (g at ga) while the process runs: its stack unwound from what
// it saved, when it is not running, and read again to check that it did not run meanwhile.
// ok is false for a goroutine left out (dead, the runtime's own, running, moved, unreadable),
// counted in sr.
func (r *Reader) readOne(ga uint64, sr *SampleReading) (gstack, bool) {
	l := r.gl
	gs := &process.Struct{Name: "runtime.g", Size: l.size}
	v, err := gs.Read(r.mem, ga)
	if err != nil {
		sr.Skipped++
		return gstack{}, false
	}
	switch v.U(l.status) &^ gScan {
	case gDead, gIdle:
		return gstack{}, false
	case gRunning:
		if !r.systemStart(v.U(l.startpc)) {
			sr.Running++
		}
		return gstack{}, false
	case gCopyStack:
		sr.Moved++
		return gstack{}, false
	}
	g := parkedG{goid: v.U(l.goid), startpc: v.U(l.startpc), gopc: v.U(l.gopc), pc: v.U(l.pc), sp: v.U(l.sp), lr: v.U(l.lr), hi: v.U(l.hi)}
	if ssp := v.U(l.syscallsp); ssp != 0 {
		g.pc, g.sp, g.lr = v.U(l.syscallpc), ssp, 0
	}
	if r.systemStart(g.startpc) {
		return gstack{}, false
	}
	if g.sp == 0 || g.hi <= g.sp || g.hi-g.sp > 1<<30 {
		sr.Skipped++
		return gstack{}, false
	}
	sb := stackBuf{mem: r.mem, lo: g.sp, b: make([]byte, min(g.hi-g.sp, maxStackRead))}
	if err := r.mem.Read(sb.b, g.sp); err != nil {
		sr.Skipped++
		return gstack{}, false
	}
	pcs, done := r.unwind(sb, g)
	again, err := gs.Read(r.mem, ga)
	if err != nil || !sameG(v, again, l) {
		sr.Moved++
		return gstack{}, false
	}
	if !done || len(pcs) == 0 {
		sr.Skipped++
		return gstack{}, false
	}
	return gstack{pcs, g.gopc}, true
}

// sameG reports whether a goroutine read twice is where it was: it did not run in between
// (or ran and stopped at the very same place, with the same stack).
func sameG(a, b process.Value, l *gLayout) bool {
	for _, f := range []process.Field{l.status, l.goid, l.pc, l.sp, l.hi, l.syscallsp, l.syscallpc} {
		if a.U(f) != b.U(f) {
			return false
		}
	}
	return true
}

// stackBuf is one goroutine's stack as read at once, from its sp up; what lies beyond is read
// from the process.
type stackBuf struct {
	mem *process.Memory
	lo  uint64
	b   []byte
}

func (s stackBuf) Read(buf []byte, addr uint64) error {
	if addr >= s.lo && addr+uint64(len(buf)) <= s.lo+uint64(len(s.b)) {
		copy(buf, s.b[addr-s.lo:])
		return nil
	}
	return s.mem.Read(buf, addr)
}

// stackProfile builds the goroutine profile of stacks, each counting scale goroutines (the
// counts rounded per distinct stack), labelled with their creators.
func (r *Reader) stackProfile(stacks []gstack, scale float64, at time.Time) *profile.Profile {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "goroutine", Unit: "count"}},
		PeriodType: &profile.ValueType{Type: "goroutine", Unit: "count"},
		Period:     1,
		TimeNanos:  at.UnixNano(),
	}
	m := r.exe.mapping()
	if m != nil {
		p.Mapping = []*profile.Mapping{m}
	}
	locs := newLocations(r.syms, p, m)
	type acc struct {
		s *profile.Sample
		n float64
	}
	counts := map[string]*acc{}
	for _, st := range stacks {
		kb := make([]byte, 0, 8*len(st.pcs)+8)
		for _, pc := range st.pcs {
			kb = binary.LittleEndian.AppendUint64(kb, pc)
		}
		kb = binary.LittleEndian.AppendUint64(kb, st.gopc)
		if a := counts[string(kb)]; a != nil {
			a.n += scale
			continue
		}
		s := &profile.Sample{Location: locs.stack(st.pcs), Value: []int64{0}}
		if c := r.creator(st.gopc); c != "" {
			s.Label = map[string][]string{culprit.CreatedByLabel: {c}}
		}
		counts[string(kb)] = &acc{s, scale}
		p.Sample = append(p.Sample, s)
	}
	for _, a := range counts {
		a.s.Value[0] = max(int64(math.Round(a.n)), 1)
	}
	return p
}
