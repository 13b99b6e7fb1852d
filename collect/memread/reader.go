package memread

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-delve/delve/pkg/proc"

	"github.com/memdoctor/memdoctor/process"
)

// The runtime's package variables a Reader reads, found in the executable's symbol table.
const (
	symBuckets     = "runtime.mbuckets"
	symRate        = "runtime.MemProfileRate"
	symCycle       = "runtime.mProfCycle"
	symModuledata  = "runtime.firstmoduledata"
	symMemstats    = "runtime.memstats"
	symController  = "runtime.gcController"
	symWork        = "runtime.work"
	symSched       = "runtime.sched"
	symAllp        = "runtime.allp"
	symAllglen     = "runtime.allglen"
	symGomaxprocs  = "runtime.gomaxprocs"
	symDisableProf = "runtime.disableMemoryProfiling"
	symAllgs       = "runtime.allgs"
	symProfLock    = "runtime.profMemActiveLock"
)

var required = []string{symBuckets, symRate, symCycle, symModuledata, symMemstats, symController, symWork, symSched, symAllp, symAllglen, symGomaxprocs}

// Reader reads one Go process's heap profile, memory statistics and goroutines from its
// memory. It is not safe for concurrent use.
type Reader struct {
	t   *process.Target
	mem *process.Memory
	tab *process.Pclntab
	bl  *process.BucketLayout
	sym map[string]process.Symbol
	st  *statsLayout
	gr  *goroutineLayout
	gl  *gLayout     // nil: goroutine stacks are unwound by Delve alone
	pl  *pauseLayout // the pause histograms' layout, resolved at the first Pauses
	// noPauses is why the pause histograms cannot be read (their layout was not found).
	noPauses error
	// A detached Reader (Detach): t is nil, and mem reads memFile, the process's memory.
	memFile *process.LiveMemory
	tables  process.Tables // where the runtime's function table lies (read again on Detach)
	arch    string
	syms    *symbolizer
	exe     exeMapping
	// linksProfiling is false when the linker turned heap profiling off
	// (runtime.disableMemoryProfiling): the program imports neither runtime/pprof nor
	// net/http/pprof.
	linksProfiling bool
	enabledAt      time.Time // when EnableHeapProfiling turned sampling on; zero if it did not
	// profLock is the address of runtime.profMemActiveLock's word, which every flush of the
	// heap profile holds (see readBuckets); 0 when the runtime's lock is not one memdoctor
	// knows.
	profLock uint64
	pub      publisher // what the heap profile's readings have published
	// static: the memory read never changes (a core): a walk is not made again, nor waited
	// for, and one the runtime was publishing a cycle during says so.
	static bool
}

// Open attaches to a live process (see process.Attach: nothing is stopped) and prepares to
// read it. Its refusals are process's: not a Go program, an unsupported release, no DWARF,
// no permission.
func Open(pid int) (*Reader, error) {
	t, err := process.Attach(pid)
	if err != nil {
		return nil, err
	}
	r, err := New(t)
	if err != nil {
		t.Close()
		return nil, fmt.Errorf("process %d: %w", pid, err)
	}
	return r, nil
}

// New prepares to read an attached process or an opened core. The Reader owns t: Close
// closes it.
func New(t *process.Target) (*Reader, error) {
	r := &Reader{t: t, mem: t.Memory(), static: t.Kind == "core"}
	bi := t.Delve.BinInfo()
	var err error
	if r.sym, err = t.Symbols(append(required, symDisableProf, symAllgs, symProfLock)...); err != nil {
		return nil, err
	}
	var missing []string
	for _, n := range required {
		if _, ok := r.sym[n]; !ok {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: %s not in the executable's symbol table", ErrNoSymbols, strings.Join(missing, ", "))
	}
	if r.bl, err = process.NewBucketLayout(bi); err != nil {
		return nil, err
	}
	if r.st, err = newStatsLayout(bi); err != nil {
		return nil, fmt.Errorf("the runtime's statistics: %w", err)
	}
	if r.gr, err = newGoroutineLayout(bi); err != nil {
		return nil, fmt.Errorf("the runtime's scheduler: %w", err)
	}
	md, err := process.StructOf(bi, "runtime.moduledata")
	if err != nil {
		return nil, err
	}
	mv, err := md.Read(r.mem, r.sym[symModuledata].Addr)
	if err != nil {
		return nil, fmt.Errorf("runtime.firstmoduledata: %w", err)
	}
	r.tables, r.arch = process.TablesOf(mv), t.Arch
	if r.tab, err = process.ReadPclntab(r.mem, r.tables, r.arch); err != nil {
		return nil, fmt.Errorf("the runtime's function table: %w", err)
	}
	r.syms = newSymbolizer(r.tab)
	if s, ok := r.sym[symAllgs]; ok {
		r.gl, _ = newGLayout(bi, s.Addr, t.Arch) // without it, Delve unwinds every goroutine
	}
	r.linksProfiling = true
	if s, ok := r.sym[symDisableProf]; ok {
		var b [1]byte
		if r.mem.Read(b[:], s.Addr) == nil && b[0] != 0 {
			r.linksProfiling = false
		}
	}
	r.profLock = profLockWord(bi, r.sym)
	r.exe = exeMappingOf(t)
	return r, nil
}

// profLockWord finds the word of runtime.profMemActiveLock (runtime.mutex's key, a uintptr
// that is 0 only when the lock is free and none waits for it); 0 if it cannot.
func profLockWord(bi *proc.BinaryInfo, sym map[string]process.Symbol) uint64 {
	s, ok := sym[symProfLock]
	if !ok {
		return 0
	}
	mu, err := process.StructOf(bi, "runtime.mutex")
	if err != nil {
		return 0
	}
	key, err := mu.Field("key")
	if err != nil || key.Size != 8 || key.Off < 0 || key.Off+8 > mu.Size {
		return 0
	}
	return s.Addr + uint64(key.Off)
}

// ErrNoSymbols: the executable lacks the symbols a reading needs (linked with -s).
var ErrNoSymbols = errors.New("the executable has no symbol table for the runtime's variables (linked with -s): " +
	"rebuild without -s and -w (the default go build keeps them), or serve net/http/pprof")

// Close releases the process (resuming it if a goroutine reading left it stopped, which
// none does) and what the Reader holds.
func (r *Reader) Close() error {
	if r.t == nil {
		return r.memFile.Close()
	}
	return r.t.Close()
}

// Target is the process or core read; nil once detached (Detach).
func (r *Reader) Target() *process.Target { return r.t }

// LinksProfiling reports whether the program links profiling: false when the linker turned
// heap profiling off (it imports neither runtime/pprof nor net/http/pprof), so that its
// MemProfileRate started at 0.
func (r *Reader) LinksProfiling() bool { return r.linksProfiling }

// MemProfileRate reads the target's runtime.MemProfileRate: the average bytes allocated
// between two sampled allocations; 0 when sampling is off.
func (r *Reader) MemProfileRate() (int64, error) {
	v, err := r.mem.Uint64(r.sym[symRate].Addr)
	if err != nil {
		return 0, fmt.Errorf("runtime.MemProfileRate: %w", err)
	}
	return int64(v), nil
}

// EnableHeapProfiling sets the target's MemProfileRate to rate when it is 0 (see
// process.Target.SetMemProfileRate, the one write memdoctor makes to a process), and
// reports whether it did. A rate already set is left as it is.
func (r *Reader) EnableHeapProfiling(rate int64) (bool, error) {
	cur, err := r.MemProfileRate()
	if err != nil {
		return false, err
	}
	if cur != 0 {
		return false, nil
	}
	if r.t == nil {
		return false, ErrDetached
	}
	if _, err := r.t.SetMemProfileRate(rate); err != nil {
		return false, err
	}
	r.enabledAt = time.Now()
	return true, nil
}

// EnabledAt is when EnableHeapProfiling turned sampling on; zero if it did not.
func (r *Reader) EnabledAt() time.Time { return r.enabledAt }
