package recorder

import (
	"github.com/memdoctor/memdoctor/internal/units"
	"github.com/memdoctor/memdoctor/session"
)

// The process watch finds listening on a service's port may not be the service: behind a
// port-forward (kubectl port-forward, ssh -L) or a local proxy it is the forwarder, and its
// /proc figures would sit beside the service's Go heap as if they were one process's (RSS
// 4.6 MiB next to a 107 MiB live heap: "no memory problem found"). The Go heap in use is
// resident memory of the process that holds it, so a heap well above a process's RSS means
// the PID is wrong. The recorder therefore holds the first /proc readings back until the
// service's Go heap is known, compares the two once, and then either writes them and samples
// on, or drops them with a note and stops sampling that process.

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
	return nil
}
