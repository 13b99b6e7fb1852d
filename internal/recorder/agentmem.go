package recorder

import (
	"fmt"
	"os"
	"time"

	"github.com/memdoctor/memdoctor/agent/leakcheck"
	"github.com/memdoctor/memdoctor/collect/memread"
)

// A service watched through its embedded agent alone (--source agent, or a service that
// serves no pprof) can starve the agent of CPU: its own
// goroutines spinning, the agent's sampler and handler run late or not at all, its answers
// time out, its newest sample falls behind, and the window's end goes unread ("not judged").
// When the service's process is on this machine, memdoctor then reads the same runtime
// figures from its memory (collect/memread), at no cost to it and without ever stopping it:
// its goroutine count and runtime figures every sample (Source process-memory, kept apart
// from the agent's runtime/metrics; evidence joins the two where they read the same record),
// /proc every sample (the agent's /proc readings stop with it), its heap profile every
// interval, and its goroutine stacks at the leak check's pace, sampled without a stop. The
// agent is still pulled: what it answers late is kept.

// agentServe is a function every build of the agent that serves its data links (the handler
// of /debug/memdoctor/, never inlined: it defers): a process that links it embeds the agent.
const agentServe = "github.com/memdoctor/memdoctor/agent.(*Agent).serve"

// The agent is starved when its newest sample is more than agentBehind of its sample periods
// old (and at least minAgentLag: a pull every cfg.Sample brings samples a period or two old),
// or when a request to it went unanswered.
const (
	agentBehind = 5
	minAgentLag = 5 * time.Second
)

// agentStarved reports, at most once per agent source, why the agent's process should be read
// from its memory ("" while the agent keeps up, or once asked).
func (r *recorder) agentStarved(now time.Time) string {
	a := r.agent
	if _, c := r.target(); a == nil || c != nil || r.memory() != nil {
		return "" // beside pprof, its snapshot rounds read the service (and would read it twice)
	}
	period := max(time.Duration(a.info.SampleIntervalSeconds*float64(time.Second)), r.cfg.Sample)
	bound := max(agentBehind*period, minAgentLag)
	a.mu.Lock()
	defer a.mu.Unlock()
	lag := now.Sub(a.newest)
	switch {
	case a.memTried:
		return ""
	case a.unanswered > 0:
		a.memTried = true
		return fmt.Sprintf("the memdoctor agent left %d request(s) unanswered (%v)", a.unanswered, a.lastUnanswered)
	case lag > bound:
		a.memTried = true
		return fmt.Sprintf("the memdoctor agent's newest sample is %s old, more than %d of its sample periods (%s)", lag.Round(100*time.Millisecond), agentBehind, period)
	}
	return ""
}

// heardAgent takes in a pull of the agent's samples: the newest sample's time, or a request
// that went unanswered (err).
func (a *agentSource) heardAgent(newest time.Time, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if newest.After(a.newest) {
		a.newest = newest
	}
	if err != nil && unanswered(err) {
		a.unanswered++
		a.lastUnanswered = err
	}
}

// readMemoryBesideAgent opens the memory of the watched service whose agent is starved (why),
// when the configuration allows and the process is surely the service: it holds the watched
// socket (or --pid named it) and links the agent. It notes how the process was matched and
// why its memory is read, or why it is not.
func (r *recorder) readMemoryBesideAgent(why string) {
	pid, _ := r.target()
	switch {
	case !r.cfg.ReadMemory:
		r.addNote("%s; the service's memory is not read (--read-memory=false), so what the agent did not answer is missing", why)
		return
	case !procSupported:
		r.addNote("%s; the service's memory can be read on Linux only, so what the agent did not answer is missing", why)
		return
	case pid == 0:
		r.addNote("%s; no process on this machine holds the service's socket, so its memory cannot be read and what the agent did not answer is missing", why)
		return
	case pid == os.Getpid():
		return // memdoctor's own process (a test serving the agent itself)
	}
	matched, err := r.stillTheService(pid)
	if err != nil {
		r.addNote("%s; the service's memory is not read: %v", why, err)
		return
	}
	rd, err := memread.Open(pid)
	if err != nil {
		r.addNote("%s; the service's memory could not be read, so what the agent did not answer is missing: %v", why, err)
		return
	}
	if !rd.HasFunc(agentServe) {
		rd.Close()
		r.addNote("%s; the process found (%s) does not link the memdoctor agent: it is not the service (a proxy or a port-forward?), so its memory is not read", why, matched)
		return
	}
	if err := detach(rd); err != nil { // its stacks are sampled without a stop: no DWARF needed
		r.addNote("%s; the service's memory could not be read: %v", why, err)
		return
	}
	ms := &memSource{rd: rd, pid: pid, leak: leakcheck.State{LastGoroutines: -1}, besideAgent: true}
	r.setMemory(ms)
	r.addNote("%s: the service's process was matched by its socket: %s, and it is a Go program that links the memdoctor agent (%s)%s; "+
		"it is read from its memory from then on (/proc/%d/mem), at no cost to it and never stopped: its runtime figures and goroutine count every sample (source process-memory, beside the agent's runtime/metrics), "+
		"its /proc every sample, its heap profile every interval, its goroutine stacks at the leak check's pace without stopping it (a sample of %d at most, each counting for its share); the agent is still pulled",
		why, matched, agentServe, r.agentPIDSays(pid), pid, stackSample)
}

// stillTheService checks that pid still holds the watched service's socket (or was given by
// --pid) and says how it was matched.
func (r *recorder) stillTheService(pid int) (string, error) {
	if r.cfg.PID != 0 {
		return bySocket(pid, "", true), nil
	}
	now, port, err := localPID(r.cfg.FS, r.watched.baseURL())
	switch {
	case err != nil:
		return "", fmt.Errorf("the process holding its socket cannot be found now: %w", err)
	case now != pid:
		return "", fmt.Errorf("its socket is held by process %d now, not by %d, the one found at the start", now, pid)
	}
	return bySocket(pid, port, false), nil
}

// agentPIDSays says whether the agent's own PID agrees (it sees itself in its own PID
// namespace: a container's differs from the host's).
func (r *recorder) agentPIDSays(pid int) string {
	switch p := r.agent.info.PID; {
	case p == pid:
		return ", the PID the agent gives for itself"
	case p != 0:
		return fmt.Sprintf(" (the agent gives PID %d for itself: another PID namespace, a container's)", p)
	}
	return ""
}

// memBesideAgent reports whether the service is read from its memory because its agent
// starved.
func (r *recorder) memBesideAgent() bool {
	ms := r.memory()
	return ms != nil && ms.besideAgent
}
