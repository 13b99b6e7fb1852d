package process

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"time"

	"github.com/go-delve/delve/pkg/dwarf/op"
	"github.com/go-delve/delve/pkg/elfwriter"
	"github.com/go-delve/delve/pkg/proc"
)

// live is a running process seen through Delve: a read-only backend. Its memory is read from
// /proc/PID/mem; its threads are the tracer's while the process is stopped. It never writes
// to the target (SetMemProfileRate, the one write, opens the file itself): Delve's attempts
// to set its breakpoints fail, as they do on a core.
type live struct {
	// ProcessInternal is never set: it only lends the methods whose signatures name Delve's
	// internal eBPF types, which Delve calls only when SupportsBPF says true.
	proc.ProcessInternal

	pid   int
	mem   *LiveMemory
	bi    *proc.BinaryInfo
	entry uint64
	bps   proc.BreakpointMap
	tr    *tracer
	iscgo bool

	threads map[int]*liveThread
	cache   *pageCache // Delve's reads while the process is stopped, or of its copy; nil while it runs
	// copy, when set, is what every read of the process reads: a copy taken while it was
	// stopped. Its threads stay as they were stopped, after the process runs again.
	copy *Copy
}

func openLive(pid int) (*live, error) {
	mem, err := OpenLiveMemory(pid)
	if err != nil {
		return nil, err
	}
	entry, err := auxvEntry(pid)
	if err != nil {
		mem.Close()
		return nil, err
	}
	p := &live{pid: pid, mem: mem, entry: entry, bps: proc.NewBreakpointMap(), tr: newTracer(pid), threads: map[int]*liveThread{}}
	return p, nil
}

// auxvEntry reads the program's entry point (AT_ENTRY) from /proc/PID/auxv: Delve needs it to
// relocate a position-independent executable.
func auxvEntry(pid int) (uint64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/auxv")
	if err != nil {
		if errors.Is(err, os.ErrPermission) {
			return 0, fmt.Errorf("process %d: %w (%v)", pid, ErrPermission, err)
		}
		return 0, fmt.Errorf("process %d: reading its auxiliary vector: %w", pid, err)
	}
	if e, ok := auxvEntryOf(b); ok {
		return e, nil
	}
	return 0, fmt.Errorf("process %d: no entry point in its auxiliary vector", pid)
}

// stop stops every thread and makes them Delve's thread list.
func (p *live) stop() error {
	if err := p.tr.stop(); err != nil {
		return err
	}
	p.threads = map[int]*liveThread{}
	for _, st := range p.tr.threads() {
		p.threads[st.tid] = &liveThread{p: p, st: st}
	}
	p.copy = nil
	p.cache = newPageCache(p)
	return nil
}

// resume lets every thread run again and returns how long they were stopped. While a copy is
// read, the threads stay as they were stopped and the copy stays what is read.
func (p *live) resume() time.Duration {
	if p.copy == nil {
		p.cache = nil // before it runs: what was read may change
	}
	d := p.tr.resume()
	if p.copy == nil {
		p.threads = map[int]*liveThread{}
	}
	return d
}

// readCopy makes c what is read of the process (nil: the process itself again).
func (p *live) readCopy(c *Copy) {
	p.copy = c
	if c != nil {
		p.cache = newPageCache(c.Lenient())
		return
	}
	if p.tr.stopped == nil {
		p.cache = nil
		p.threads = map[int]*liveThread{}
	} else {
		p.cache = newPageCache(p)
	}
}

// close resumes the process and releases the tracer's thread and the memory file.
func (p *live) close() {
	p.resume()
	p.tr.close()
	p.mem.Close()
}

func (p *live) currentThread() proc.Thread {
	if t, ok := p.threads[p.pid]; ok {
		return t
	}
	for _, t := range p.threads {
		return t
	}
	return &liveThread{p: p, st: &stoppedThread{tid: p.pid}, running: true}
}

func (p *live) BinInfo() *proc.BinaryInfo              { return p.bi }
func (p *live) EntryPoint() (uint64, error)            { return p.entry, nil }
func (p *live) Breakpoints() *proc.BreakpointMap       { return &p.bps }
func (p *live) Memory() proc.MemoryReadWriter          { return p.delveMemory() }
func (p *live) WriteBreakpoint(*proc.Breakpoint) error { return errReadOnly }
func (p *live) EraseBreakpoint(bp *proc.Breakpoint) error {
	return proc.NoBreakpointError{Addr: bp.Addr}
}
func (p *live) SupportsBPF() bool                   { return false }
func (p *live) Valid() (bool, error)                { return true, nil }
func (p *live) StartCallInjection() (func(), error) { return nil, errReadOnly }
func (p *live) FollowExec(bool) error               { return errReadOnly }
func (p *live) MemoryMap() ([]proc.MemoryMapEntry, error) {
	return nil, proc.ErrMemoryMapNotSupported
}
func (p *live) DumpProcessNotes(notes []elfwriter.Note, _ func()) (bool, []elfwriter.Note, error) {
	return false, notes, nil
}
func (p *live) RequestManualStop(*proc.ContinueOnceContext) error { return nil }

func (p *live) FindThread(id int) (proc.Thread, bool) {
	t, ok := p.threads[id]
	return t, ok
}

func (p *live) ThreadList() []proc.Thread {
	out := make([]proc.Thread, 0, len(p.threads))
	for _, t := range p.threads {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ThreadID() < out[j].ThreadID() })
	return out
}

// delveMemory is what Delve reads the process through: a page cache while it is stopped.
func (p *live) delveMemory() proc.MemoryReadWriter {
	if c := p.cache; c != nil {
		return c
	}
	return p
}

// ReadMemory reads the target's memory (or its copy); a short read is an error, as Delve
// expects.
func (p *live) ReadMemory(buf []byte, addr uint64) (int, error) {
	if c := p.copy; c != nil {
		return c.ReadMemory(buf, addr)
	}
	return p.readDirect(buf, addr)
}

// readDirect reads the target's memory from /proc/PID/mem, what is not there as zeros
// (LiveMemory).
func (p *live) readDirect(buf []byte, addr uint64) (int, error) {
	return p.mem.ReadMemory(buf, addr)
}

func (p *live) WriteMemory(uint64, []byte) (int, error) { return 0, errReadOnly }

// The process group: Delve asks it to run the target, which memdoctor never does.
type liveGroup struct{ p *live }

func (g liveGroup) ContinueOnce(*proc.ContinueOnceContext) (proc.Thread, proc.StopReason, error) {
	return nil, proc.StopUnknown, errReadOnly
}
func (g liveGroup) StepInstruction(int) error { return errReadOnly }
func (g liveGroup) Detach(int, bool) error    { g.p.tr.resume(); return nil }
func (g liveGroup) Close() error              { return nil }

// liveThread is one stopped thread.
type liveThread struct {
	p       *live
	st      *stoppedThread
	common  proc.CommonThread
	running bool // a placeholder before the process is stopped: no registers
}

func (t *liveThread) Breakpoint() *proc.BreakpointState { return &proc.BreakpointState{} }
func (t *liveThread) ThreadID() int                     { return t.st.tid }
func (t *liveThread) Registers() (proc.Registers, error) {
	if t.running {
		return nil, fmt.Errorf("thread %d is not stopped", t.st.tid)
	}
	return t.st.regs.delve(t.p.iscgo), nil
}
func (t *liveThread) RestoreRegisters(proc.Registers) error  { return errReadOnly }
func (t *liveThread) BinInfo() *proc.BinaryInfo              { return t.p.bi }
func (t *liveThread) ProcessMemory() proc.MemoryReadWriter   { return t.p.delveMemory() }
func (t *liveThread) SetCurrentBreakpoint(bool) error        { return nil }
func (t *liveThread) SoftExc() bool                          { return false }
func (t *liveThread) Common() *proc.CommonThread             { return &t.common }
func (t *liveThread) SetReg(uint64, *op.DwarfRegister) error { return errReadOnly }
