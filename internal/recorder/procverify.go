package recorder

import (
	"slices"
	"strings"

	"github.com/memdoctor/memdoctor/session"
	"github.com/memdoctor/memdoctor/units"
)

// The process watch finds listening on a service's port may not be the service: behind a
// port-forward (kubectl port-forward, ssh -L) or a local proxy it is the forwarder, and its
// /proc figures would sit beside the service's Go heap as if they were one process's (RSS
// 4.6 MiB next to a 107 MiB live heap: "no memory problem found").
//
// The service says who it is: net/http/pprof serves its command line (/debug/pprof/cmdline).
// When it matches the found process's /proc/PID/cmdline, the process is the service; when it
// differs, it is not, and its figures are dropped at once. Only when the service does not say
// (no cmdline endpoint) does the recorder fall back on memory: a Go heap well above a
// process's RSS suggests the PID is wrong. That is a weaker sign (a heap can hold untouched
// pages, such as a ballast, that are not resident), so the first /proc readings are held back
// until the service's Go heap is known, compared once, and then written or dropped.

const (
	// maxHeldProc bounds the /proc readings held while the service's Go heap is unknown; past
	// it they are written unchecked (the service never told its heap).
	maxHeldProc = 60
	// foreignSlack is what a Go heap may exceed RSS by in any case: spans the runtime counts
	// in use before their pages are first touched.
	foreignSlack = 16 << 20
)

// procCheck is the state of that comparison.
type procCheck struct {
	active    bool   // watch found the process itself (by port or PID): check it
	found     string // how, for the note: "found listening on :8080", "given by PID"
	advice    string
	exe       string
	decided   bool
	held      []session.Sample
	heapInuse uint64 // the service's Go heap in use at its last reading; 0 while unknown
}

// notTheService reports whether a process of rss resident bytes cannot be the one whose Go
// heap has heapInuse bytes in use.
func notTheService(rss, heapInuse uint64) bool {
	return float64(heapInuse) > 1.5*float64(rss)+foreignSlack
}

// checkProcess arms the comparison for the local process watch found, by its port or by the
// PID the user gave.
func (r *recorder) checkProcess(byPID bool, port, exe string) {
	pc := procCheck{active: true, exe: exe,
		found: "found listening on :" + port, advice: "a proxy or port-forward? pass --pid with the service's own PID"}
	if byPID {
		pc.found, pc.advice = "given by PID", "is it a proxy or a port-forward? give the service's own PID"
	}
	r.mu.Lock()
	r.pc = pc
	r.mu.Unlock()
}

// identify settles the check by command line: args is the service's own (from pprof), proc
// the found process's. Equal: it is the service. Different: it is not, and /proc sampling
// stops. It reports whether it settled the check.
func (r *recorder) identify(args, proc []string) bool {
	if len(args) == 0 || len(proc) == 0 {
		return false
	}
	r.mu.Lock()
	pc := &r.pc
	if !pc.active || pc.decided {
		r.mu.Unlock()
		return true
	}
	pc.decided = true
	held := pc.held
	pc.held = nil
	if slices.Equal(args, proc) {
		r.mu.Unlock()
		for _, s := range held {
			if err := r.w.AppendSample(s); err != nil {
				r.writeFailed(err)
			}
		}
		return true
	}
	pid := r.pid
	r.pid, r.targetName, r.status.RSSBytes = 0, "", 0
	found, advice, exe := pc.found, pc.advice, pc.exe
	r.mu.Unlock()
	r.addNote("the process %s (pid %d, exe %s) is not the service: its command line is %q, the service's %q; %s",
		found, pid, exe, clipArgs(proc), clipArgs(args), advice)
	r.forgetProcess()
	return true
}

// clipArgs shortens a command line for a note.
func clipArgs(args []string) string {
	s := strings.Join(args, " ")
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}

// setGoHeap records the service's Go heap in use, from MemStats or the agent's samples.
func (r *recorder) setGoHeap(inuse uint64) {
	r.mu.Lock()
	r.pc.heapInuse = inuse
	r.mu.Unlock()
}

// admitProc returns the /proc samples to write now: none while smp waits for the Go heap to
// be known, the held ones and smp once the process is confirmed, none when it is not the
// service (it then stops /proc sampling and says why).
func (r *recorder) admitProc(smp session.Sample) []session.Sample {
	r.mu.Lock()
	pc := &r.pc
	if !pc.active || pc.decided || smp.Proc == nil {
		r.mu.Unlock()
		return []session.Sample{smp}
	}
	pc.held = append(pc.held, smp)
	if pc.heapInuse == 0 && len(pc.held) <= maxHeldProc {
		r.mu.Unlock()
		return nil
	}
	return r.decideProc(smp.Proc.RSSBytes) // unlocks
}

// checkRSS makes the comparison without a sample to write (the agent's samples carry /proc):
// as soon as the Go heap is known.
func (r *recorder) checkRSS(rss uint64) {
	r.mu.Lock()
	if !r.pc.active || r.pc.decided || r.pc.heapInuse == 0 {
		r.mu.Unlock()
		return
	}
	r.decideProc(rss)
}

// settleProc decides on the /proc readings still held when the watch ends: against the Go
// heap known by then, or unchecked when the service never told it.
func (r *recorder) settleProc() {
	r.mu.Lock()
	if !r.pc.active || r.pc.decided || len(r.pc.held) == 0 {
		r.mu.Unlock()
		return
	}
	for _, s := range r.decideProc(r.pc.held[len(r.pc.held)-1].Proc.RSSBytes) {
		if err := r.w.AppendSample(s); err != nil {
			r.writeFailed(err)
		}
	}
}

// decideProc compares the process's latest RSS with the Go heap, once, and returns the held
// readings to write. It is called with r.mu held and releases it.
func (r *recorder) decideProc(rss uint64) []session.Sample {
	pc := &r.pc
	held := pc.held
	pc.decided, pc.held = true, nil
	heap := pc.heapInuse
	if heap == 0 || !notTheService(rss, heap) {
		r.mu.Unlock()
		return held
	}
	pid := r.pid
	r.pid, r.targetName, r.status.RSSBytes = 0, "", 0
	found, advice, exe := pc.found, pc.advice, pc.exe
	r.mu.Unlock()
	r.addNote("the process %s (pid %d, exe %s) is not the service: its RSS is %s while the service's Go heap is %s; "+
		"%s (its /proc readings, %d so far, were dropped: the session holds the service's own figures only)",
		found, pid, exe, units.Bytes(float64(rss)), units.Bytes(float64(heap)), advice, len(held))
	r.forgetProcess()
	return nil
}

// forgetProcess takes the found process out of the manifest: the session describes the
// service from its own endpoints only.
func (r *recorder) forgetProcess() {
	r.note(func(m *session.Manifest) {
		t := session.Target{}
		if r.watched != nil {
			r.watched.describe(&t)
		}
		m.Target = t
		if m.MemoryBudgetSource == "cgroup" { // that process's cgroup, not the service's
			m.MemoryBudgetBytes, m.MemoryBudgetSource = 0, ""
		}
	})
}
