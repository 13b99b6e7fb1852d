package memread

import (
	"errors"
	"fmt"

	"github.com/memdoctor/memdoctor/process"
)

// ErrDetached: what a detached Reader no longer reads (Detach).
var ErrDetached = errors.New("the reader let go of the executable's debugging information (Detach): goroutine profiles and heap-profiling changes need it")

// Detach lets go of what a live process's Reader needed only to find the runtime's structures
// (the executable's symbols and DWARF, held by Delve: about twice the executable's size in
// memory) and reads the process's memory through /proc/PID/mem directly from then on: the
// heap profile, the figures, the goroutine count and the pause histograms go on, goroutine
// profiles and EnableHeapProfiling fail with ErrDetached. For a reader beside a pprof endpoint
// that serves the stacks: memdoctor's own memory then stays small however long it watches.
func (r *Reader) Detach() error {
	if r.t == nil {
		return nil
	}
	if r.t.Kind != "process" {
		return fmt.Errorf("only a live process's reader detaches (this reads a %s)", r.t.Kind)
	}
	if r.pl == nil {
		pl, err := newPauseLayout(r.t.Delve.BinInfo())
		if err == nil {
			r.pl = pl
		} else {
			r.noPauses = err
		}
	}
	f, err := process.OpenLiveMemory(r.t.PID)
	if err != nil {
		return err
	}
	mem := process.NewMemory(f)
	// The function table reads its files' names lazily through the memory it was read with:
	// read it again through the new one, so that nothing refers to the target any more.
	tab, err := process.ReadPclntab(mem, r.tables, r.arch)
	if err != nil {
		f.Close()
		return fmt.Errorf("the runtime's function table: %w", err)
	}
	r.memFile, r.mem, r.tab, r.syms = f, mem, tab, newSymbolizer(tab)
	err = r.t.Close()
	r.t = nil
	return err
}
