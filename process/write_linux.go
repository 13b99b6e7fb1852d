package process

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"
)

// MaxMemProfileRate bounds the rate SetMemProfileRate writes: one sample per GiB allocated
// is already too sparse to see anything.
const MaxMemProfileRate = 1 << 30

// SetMemProfileRate turns on a live target's heap profiling by writing rate into its
// runtime.MemProfileRate through /proc/PID/mem, and returns the rate it had.
//
// This is the one write memdoctor ever makes to a process, and it makes it only when the
// user asks (--enable-heap-profiling): a program that links neither runtime/pprof nor
// net/http/pprof starts with MemProfileRate 0 (the linker sets
// runtime.disableMemoryProfiling) and its heap profile stays empty. The runtime notices the
// new rate at its next allocation on each P (mallocgc compares MemProfileRate with each
// mcache's memProfRate and draws a new sampling point), so the profile covers the
// allocations made from then on. The write is of one aligned word, never elsewhere than
// runtime.MemProfileRate as the executable's symbol table places it; it is read back.
func (t *Target) SetMemProfileRate(rate int64) (old int64, err error) {
	if t.live == nil {
		return 0, errors.New("the heap profiling rate can only be set in a live process")
	}
	if rate <= 0 || rate > MaxMemProfileRate {
		return 0, fmt.Errorf("a heap profiling rate of %d bytes: want 1 to %d", rate, MaxMemProfileRate)
	}
	syms, err := t.Symbols("runtime.MemProfileRate")
	if err != nil {
		return 0, err
	}
	s, ok := syms["runtime.MemProfileRate"]
	if !ok || s.Size != 8 || s.Addr%8 != 0 {
		return 0, errors.New("runtime.MemProfileRate is not in the executable's symbol table as an aligned word")
	}
	cur, err := t.mem.Uint64(s.Addr)
	if err != nil {
		return 0, fmt.Errorf("reading runtime.MemProfileRate: %w", err)
	}
	if int64(cur) == rate {
		return rate, nil
	}
	f, err := os.OpenFile("/proc/"+strconv.Itoa(t.PID)+"/mem", os.O_WRONLY, 0)
	if err != nil {
		if errors.Is(err, os.ErrPermission) {
			return int64(cur), fmt.Errorf("process %d: %w (%v)", t.PID, ErrPermission, err)
		}
		return int64(cur), fmt.Errorf("process %d: %w", t.PID, err)
	}
	defer f.Close()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(rate))
	if _, err := f.WriteAt(b[:], int64(s.Addr)); err != nil {
		return int64(cur), fmt.Errorf("process %d: writing runtime.MemProfileRate: %w", t.PID, err)
	}
	now, err := t.mem.Uint64(s.Addr)
	if err != nil || int64(now) != rate {
		return int64(cur), fmt.Errorf("process %d: runtime.MemProfileRate reads %d after writing %d (%v)", t.PID, int64(now), rate, err)
	}
	return int64(cur), nil
}
