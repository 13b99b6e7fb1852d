package recorder

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"time"

	"github.com/memdoctor/memdoctor/collect/memread"
)

// A local service watched over pprof is read from its memory too when it can be (Linux,
// permission to trace it, Config.ReadMemory), each quantity from the source that costs it
// least within a bound on stops (bench/scrapecost, docs/performance.md):
//
//   - the heap profile and the runtime's figures from its memory: the kernel copies the
//     runtime's own records for memdoctor, the service runs nothing and is never stopped;
//     over pprof each heap profile costs it about a millisecond of CPU and 0.9 MiB of
//     allocation, each MemStats read a stop-the-world and a rendering of every heap record;
//   - the goroutine stacks from pprof (at 10,000 goroutines: 14 ms of its CPU and 3.2 MiB
//     allocated each, only when the count moved), or from its memory when Config.StacksStop
//     allows a stop of every thread (ptrace) and the stop is predicted within it (60-140 ms at
//     10,000 goroutines on a loaded machine; 2-4 ms for up to 300 on a quiet one); without
//     that, memdoctor keeps none of the executable's symbols and DWARF once it has found the
//     runtime's structures (Delve holds about twice the executable's size);
//   - the goroutine count from its memory each sample, and the pprof index page at the start
//     and after each goroutineleak fetch (its goroutineleak count comes only from there);
//   - goroutine dumps (goroutine?debug=1) and goroutineleak profiles from pprof: nothing else
//     makes them.
//
// What the service allocates serving memdoctor brings its next GC cycle forward: on a big
// heap a cycle costs more than every request of a watch together.

// The prediction of how long reading the goroutines' stacks from memory stops the process,
// before a stop was measured: a base (seizing and interrupting every thread, reading the list
// of goroutines) and a share per goroutine (reading its g and unwinding its stack through
// /proc/PID/mem). Measured on 2 cores: 2.2-4 ms for 10 to 300 goroutines, 60-140 ms for
// 10,000, on a loaded machine; the stops grow with the machine's load (memdoctor's thread
// waits for a CPU while the process is stopped).
const (
	stopBase         = 2 * time.Millisecond
	stopPerGoroutine = 10 * time.Microsecond
)

// Past manyStacks goroutines a goroutine profile costs the service much whichever way it is
// taken: over pprof about 75 ms of its CPU and 16 MiB of allocation each (1.5 us and 330 bytes
// a goroutine, bench/scrapecost: 14 ms and 3.2 MiB at 10,000), which a GC must collect, and
// requests that time out as the count climbs (480,000 goroutines: 3 in 4 did), stopped for it
// half a second or more. So past it the stacks are read from its memory without stopping it
// (memread.GoroutineSample): stackSample goroutines at most, spread over all of them, each
// counting for its share. A process read from its memory alone is stopped for its stacks only
// while that stop is predicted within maxUnaskedStop; past it, the same sample.
const (
	manyStacks     = 50000
	stackSample    = 5000
	maxUnaskedStop = 100 * time.Millisecond
)

// readMemoryToo opens the memory of the watched local service (pid) beside its pprof, when
// the configuration allows and the process is the service: its command line is the one its
// pprof serves, or, when its pprof did not answer for it, it holds the service's socket (m)
// and links net/http/pprof. It notes what is read from where, or why memory is not read.
func (r *recorder) readMemoryToo(pid int, m match) {
	switch {
	case !r.cfg.ReadMemory || pid == 0 || r.agent != nil:
		return
	case !procSupported:
		return
	case pid == os.Getpid():
		return // memdoctor's own process (a test serving pprof itself): it cannot stop itself
	case !m.byCmdline && m.bySocket == "":
		r.addNote("the service's memory is not read (its pprof serves no command line to prove that process %d is the service): its profiles and figures are asked of its pprof", pid)
		return
	}
	rd, err := memread.Open(pid)
	if err != nil {
		r.addNote("the service's memory could not be read, so its heap profile and runtime figures are asked of its pprof, at a cost to it (--read-memory=false does not try): %v", err)
		return
	}
	if !m.byCmdline {
		if !rd.HasFunc(pprofIndex) {
			rd.Close()
			r.addNote("the service's pprof did not answer for its command line, and the process found (%s) links no net/http/pprof: it is not the service (a proxy or a port-forward?), so its memory is not read", m.bySocket)
			return
		}
		r.addNote("the service's pprof did not answer for its command line within %s (starved or stuck), so its process was matched by its socket: %s, and it is a Go program that links net/http/pprof as the service does",
			cmdlineWait, m.bySocket)
	}
	stacks := "from its memory while a stop of the process to read them is predicted to last at most " + r.cfg.StacksStop.String() +
		" (else, and after any stop that lasted longer, from net/http/pprof)"
	if r.cfg.StacksStop <= 0 {
		// The stacks come from pprof: let go of the executable's symbols and DWARF (twice its
		// size in memory), which only goroutine profiles from memory need.
		if err := detach(rd); err != nil {
			r.addNote("the service's memory could not be read, so its heap profile and runtime figures are asked of its pprof, at a cost to it: %v", err)
			return
		}
		stacks = "from net/http/pprof (the process is never stopped: --stacks-stop 0)"
	}
	stacks += fmt.Sprintf("; past %d goroutines, or once its pprof leaves a goroutine profile unanswered, from its memory without stopping it (a sample of %d at most, each counting for its share)", manyStacks, stackSample)
	ms := &memSource{rd: rd, pid: pid, besidePprof: true}
	r.addNote("the service (pid %d) is also read from its memory (/proc/%d/mem), which costs it no CPU and never stops it: its runtime figures and goroutine count every sample, its heap profile every interval; "+
		"its goroutine stacks %s; goroutine dumps, goroutineleak profiles and the pprof index page (at the start and after each leak check) from net/http/pprof", pid, pid, stacks)
	r.setMemory(ms)
}

// detach lets go of rd's executable symbols and DWARF (twice the executable's size in
// memory), which only goroutine stacks read with the process stopped need, and gives their
// memory back. On an error rd is closed.
func detach(rd *memread.Reader) error {
	if err := rd.Detach(); err != nil {
		rd.Close()
		return err
	}
	debug.FreeOSMemory()
	return nil
}

// setMemory makes ms the session's memory source.
func (r *recorder) setMemory(ms *memSource) {
	r.mu.Lock()
	r.mem = ms
	r.mu.Unlock()
}

// readStarved opens the memory of the program memdoctor runs beside its pprof, once that pprof
// left a request unanswered (err): its goroutine count, runtime figures, heap profiles and
// stacks are read there from then on, at no cost to it, and the recording goes on whatever its
// pprof does. Nil when it cannot be read, or the target is not memdoctor's child.
func (r *recorder) readStarved(err error) *memSource {
	return r.readOwn(fmt.Sprintf("the program's pprof left a request unanswered (%v)", err))
}

// readCrowded opens the memory of the program memdoctor runs beside its pprof once it runs
// manyStacks goroutines or more (n), at the first snapshot that sees them: a goroutine profile
// over its pprof would make it allocate records for every goroutine (about 330 bytes and
// 1.5 us of its CPU each, bench/scrapecost), which its GC then counts in flight, and its stacks
// are read from its memory instead, a sample of them, without stopping it. Tried once.
func (r *recorder) readCrowded(n int) *memSource {
	r.mu.Lock()
	tried := r.crowdTried
	r.crowdTried = true
	r.mu.Unlock()
	if tried {
		return nil
	}
	return r.readOwn(fmt.Sprintf("the program runs %d goroutines, %d or more, and a goroutine profile over its pprof would make it allocate about %.0f MiB and spend about %s of its CPU",
		n, manyStacks, float64(n*profileBytesPerGoroutine)/(1<<20), (time.Duration(n) * profileCPUPerGoroutine).Round(time.Millisecond)))
}

// What a goroutine profile over pprof costs the service per goroutine (bench/scrapecost: 14 ms
// and 3.2 MiB at 10,000 goroutines, 75 ms and 16 MiB at 50,000).
const (
	profileBytesPerGoroutine = 330
	profileCPUPerGoroutine   = 1500 * time.Nanosecond
)

// readOwn opens the memory of the program memdoctor runs beside its pprof, for the reason why:
// its runtime figures, goroutine count, heap profiles and stacks (without stopping it) are read
// there from then on, at no cost to it. Nil when it cannot be read, or the target is not
// memdoctor's child.
func (r *recorder) readOwn(why string) *memSource {
	r.mu.Lock()
	pid, ours := r.pid, r.root != 0
	r.mu.Unlock()
	if !ours || pid == 0 || !procSupported || pid == os.Getpid() {
		return nil
	}
	rd, err := memread.Open(pid)
	if err == nil {
		err = detach(rd) // the stacks are read without stopping it: no need of its DWARF
	}
	if err != nil {
		r.addNote("%s, and its memory could not be read: %v", why, err)
		return nil
	}
	ms := &memSource{rd: rd, pid: pid, besidePprof: true}
	r.addNote("%s: it is read from its memory from then on (/proc/%d/mem), at no cost to it: its runtime figures and goroutine count every sample, its heap profile every interval, its goroutines' stacks without stopping it", why, pid)
	r.setMemory(ms)
	return ms
}

// pprofIndex is the function every service that serves net/http/pprof's index links.
const pprofIndex = "net/http/pprof.Index"

// stacksFromMemory reports whether the next goroutine stacks are read from memory: the
// service is read from its memory, no stop has yet lasted longer than the bound, and the
// stop is predicted to last no longer (from the goroutine count: the base and a share per
// goroutine, the larger of the assumed one and the largest measured).
func (r *recorder) stacksFromMemory(ms *memSource, goroutines int) bool {
	if ms == nil || !ms.besidePprof || ms.stopsOff || r.cfg.StacksStop <= 0 || goroutines <= 0 {
		return false
	}
	return ms.predictStop(goroutines) <= r.cfg.StacksStop
}

// sampleStacks reports whether the next goroutine stacks of a service watched over pprof are
// read from its memory without stopping it: past manyStacks goroutines, or once its pprof left
// a goroutine profile unanswered (a service starved of CPU, by its own spinning goroutines say,
// answers none in time, and its stacks are what tells why).
func (r *recorder) sampleStacks(ms *memSource, goroutines int) bool {
	return ms != nil && ms.besidePprof && (goroutines >= manyStacks || ms.pprofStarved)
}

// predictStop is how long reading n goroutines' stacks is predicted to stop the process.
func (ms *memSource) predictStop(n int) time.Duration {
	per := stopPerGoroutine
	if ms.perGoroutine > per {
		per = ms.perGoroutine
	}
	return stopBase + time.Duration(n)*per
}

// stopped takes in a stop of the process that read n goroutines: the share per goroutine it
// shows, and the bound. A stop over the bound hands the stacks to pprof for good.
func (r *recorder) stopped(ms *memSource, n int, d time.Duration) {
	ms.learn(n, d)
	if d > r.cfg.StacksStop && !ms.stopsOff {
		ms.stopsOff = true
		r.addNote("reading the goroutines' stacks from memory stopped the service for %s (%d goroutines), more than --stacks-stop %s: its stacks are asked of net/http/pprof from then on",
			d.Round(10*time.Microsecond), n, r.cfg.StacksStop)
	}
}

// learn takes in the share per goroutine a stop of the process that read n goroutines shows.
func (ms *memSource) learn(n int, d time.Duration) {
	if n > 0 && d > stopBase {
		ms.perGoroutine = max(ms.perGoroutine, (d-stopBase)/time.Duration(n))
	}
}

// readMemoryAgain follows a service that restarted as a new process (pid; 0: not found): the
// old process's memory is let go, the new one's read when it is surely the service.
func (r *recorder) readMemoryAgain(ctx context.Context, tg *watchTarget, pid int) {
	ms := r.memory()
	if ms != nil && ms.besideAgent && ms.pid != pid {
		r.closeMemory(false) // the new process's agent is watched afresh, and read again if it starves
		return
	}
	if ms == nil || ms.pid == pid || !ms.besidePprof {
		return
	}
	r.closeMemory(false)
	if pid == 0 || tg.pprof == nil {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	args, err := tg.pprof.Cmdline(cctx)
	cancel()
	proc, perr := r.cfg.FS.Cmdline(pid)
	r.readMemoryToo(pid, match{byCmdline: err == nil && perr == nil && len(args) > 0 && slices.Equal(args, proc)})
}
