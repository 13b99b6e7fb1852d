package recorder

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/memdoctor/memdoctor/agent/wire"
	"github.com/memdoctor/memdoctor/collect/agentclient"
	"github.com/memdoctor/memdoctor/session"
)

// maxAgentNotes bounds the manifest notes made from the agent's events.
const maxAgentNotes = 20

// maxRefusedNotes bounds the manifest notes about items the agent listed that the session
// refused (a bad name, a profile that is not one); agentSummary counts the rest.
const maxRefusedNotes = 10

// agentSource is an embedded memdoctor agent the recorder copies from: its samples as they
// are (Source "runtime/metrics"), every profile it holds (periodic and labelled pairs, and
// its goroutineleak profiles), its traces. Only the agent loop (and Watch before and after it) uses it.
type agentSource struct {
	c    *agentclient.Client
	info wire.Info

	last     time.Time       // the time of the last sample copied
	copied   map[string]bool // profile names copied (pruned to those the agent still lists)
	traces   map[string]bool
	events   map[uint64]bool
	notes    int
	samples  int
	before   int // samples taken before the session started
	failures int

	// The profiles and traces refused (each noted once; pruned to those the agent still
	// lists), and how many items were refused in all.
	refusedProfiles map[string]bool
	refusedTraces   map[string]bool
	refusals        int

	mu      sync.Mutex
	hasProc bool // the agent's samples carry /proc figures: memdoctor need not read them
	rate    gcRate
	// What tells a starved agent (agentmem.go): the newest sample's time (the probe's at
	// first), the requests left unanswered and the last of them, and whether the process's
	// memory was tried.
	newest         time.Time
	unanswered     int
	lastUnanswered error
	memTried       bool
}

func newAgentSource(c *agentclient.Client, info wire.Info) *agentSource {
	return &agentSource{c: c, info: info, copied: map[string]bool{}, traces: map[string]bool{}, events: map[uint64]bool{},
		refusedProfiles: map[string]bool{}, refusedTraces: map[string]bool{}, newest: time.Now()}
}

// agentHasProc reports whether the agent reads /proc itself.
func (r *recorder) agentHasProc() bool {
	if r.agent == nil {
		return false
	}
	r.agent.mu.Lock()
	defer r.agent.mu.Unlock()
	return r.agent.hasProc
}

// agentLoop pulls from the agent every cfg.Sample.
func (r *recorder) agentLoop(ctx context.Context) {
	t := time.NewTicker(r.cfg.Sample)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.gone:
			return
		case <-t.C:
		}
		r.pullAgent(ctx)
	}
}

// pullAgent copies what the agent has that the session has not: samples since the last one,
// new profiles, new traces, and notes for new events. Each part fails on its own.
func (r *recorder) pullAgent(ctx context.Context) {
	a := r.agent
	ok := r.pullSamples(ctx)
	if r.pullProfiles(ctx) {
		ok = true
	}
	r.pullEvents(ctx)
	r.pullTraces(ctx)
	if ok {
		a.failures = 0
		return
	}
	a.failures++
	if a.failures >= unreachableRounds {
		// With pprof, its snapshot rounds decide; a service read from its memory is there as
		// long as its process is (its exit ends the watch through gone).
		if _, c := r.target(); c == nil && !r.memBesideAgent() {
			r.unreachableOnce.Do(func() { close(r.unreachable) })
		}
	}
}

func (r *recorder) pullSamples(ctx context.Context) bool {
	a := r.agent
	n, last, err := a.c.Metrics(ctx, a.last, func(s session.Sample) error {
		if err := r.w.AppendSample(s); err != nil {
			r.writeFailed(err)
		}
		if s.Time.Before(r.start) {
			a.before++
		}
		r.agentStatus(s)
		return nil
	})
	if n > 0 {
		a.last = last
		a.samples += n
	}
	a.heardAgent(a.last, err)
	if err == nil || ctx.Err() == nil {
		r.tries.add(session.AttemptAgentMetrics, err)
	}
	if err != nil {
		if !stopping(ctx) {
			r.log.Warn("reading the agent's metrics failed; will retry", "err", err)
		}
		return false
	}
	return true
}

// agentStatus updates the live status from one of the agent's samples.
func (r *recorder) agentStatus(s session.Sample) {
	a := r.agent
	a.mu.Lock()
	if s.Proc != nil {
		a.hasProc = true
	}
	var perSec float64
	var haveRate bool
	if s.Go != nil {
		perSec, haveRate = a.rate.add(s.Time, s.Go.GCCycles)
	}
	a.mu.Unlock()
	r.mu.Lock()
	if s.Proc != nil {
		r.status.RSSBytes = s.Proc.RSSBytes
	}
	if s.Go != nil {
		r.status.HeapBytes = s.Go.HeapObjectsBytes
		r.goroutines, r.countedAt = s.Go.Goroutines, time.Now()
		r.pc.heapInuse = s.Go.HeapObjectsBytes + s.Go.HeapUnusedBytes
	}
	if haveRate {
		r.status.GCPerSecond = perSec
	}
	r.mu.Unlock()
}

// agentKinds are the kinds of the agent's profiles a session keeps.
var agentKinds = map[string]bool{session.KindHeap: true, session.KindGoroutine: true, session.KindGoroutineLeak: true}

func (r *recorder) pullProfiles(ctx context.Context) bool {
	a := r.agent
	list, err := a.c.Profiles(ctx)
	if err == nil || ctx.Err() == nil {
		r.tries.add(session.AttemptAgentProfiles, err)
		a.heardAgent(time.Time{}, err)
	}
	if err != nil {
		if !stopping(ctx) {
			r.log.Warn("listing the agent's profiles failed; will retry", "err", err)
		}
		return false
	}
	listed := make(map[string]bool, len(list))
	for _, p := range list {
		listed[p.Name] = true
		if a.copied[p.Name] || a.refusedProfiles[p.Name] || !agentKinds[p.Kind] {
			continue
		}
		if err := session.CheckLabel(p.Label); err != nil { // the label becomes part of a file name
			r.refuse(a.refusedProfiles, "profile", p.Name, err)
			continue
		}
		raw, err := a.c.Profile(ctx, p.Name)
		if err == nil || ctx.Err() == nil {
			r.tries.add(session.AttemptAgentProfiles, err)
		}
		if errors.Is(err, agentclient.ErrTooLarge) || errors.Is(err, agentclient.ErrNotProfile) {
			r.refuse(a.refusedProfiles, "profile", p.Name, err)
			continue
		}
		if err != nil {
			r.log.Debug("fetching an agent profile failed", "name", p.Name, "err", err)
			continue // rotated out meanwhile, or a passing failure: the next pull retries
		}
		if _, err := r.w.WriteProfile(p.Kind, p.Time, p.Label, raw); err != nil {
			r.writeFailed(err)
			continue
		}
		a.copied[p.Name] = true
		r.mu.Lock()
		switch p.Kind {
		case session.KindHeap:
			r.status.HeapSnapshots++
		case session.KindGoroutine:
			r.status.GoroutineSnapshots++
		case session.KindGoroutineLeak:
			r.status.LeakSnapshots++
		}
		r.mu.Unlock()
	}
	prune(a.copied, listed) // the agent will not list these again
	prune(a.refusedProfiles, listed)
	return true
}

// prune deletes the keys of m that are not in keep.
func prune(m, keep map[string]bool) {
	for k := range m {
		if !keep[k] {
			delete(m, k)
		}
	}
}

// refuse notes, once per item and for the first maxRefusedNotes items, that the session did
// not store an item the agent listed, and why. The name is quoted: it comes from the target.
func (r *recorder) refuse(seen map[string]bool, what, name string, err error) {
	if seen[name] {
		return
	}
	seen[name] = true
	a := r.agent
	a.refusals++
	if a.refusals <= maxRefusedNotes {
		r.addNote("refused the agent's %s %q: %v; it was not stored", what, name, err)
	}
}

func (r *recorder) pullTraces(ctx context.Context) {
	a := r.agent
	list, err := a.c.Traces(ctx)
	if err != nil {
		r.log.Debug("listing the agent's traces failed", "err", err)
		return
	}
	listed := make(map[string]bool, len(list))
	for _, ti := range list {
		listed[ti.Name] = true
		if a.traces[ti.Name] || a.refusedTraces[ti.Name] {
			continue
		}
		if err := session.CheckTraceName(ti.Name); err != nil {
			r.refuse(a.refusedTraces, "trace", ti.Name, err)
			continue
		}
		raw, err := a.c.Trace(ctx, ti.Name)
		if errors.Is(err, agentclient.ErrTooLarge) {
			r.refuse(a.refusedTraces, "trace", ti.Name, err)
			continue
		}
		if err != nil {
			r.log.Debug("fetching an agent trace failed", "name", ti.Name, "err", err)
			continue
		}
		if _, err := r.w.WriteTrace(ti.Name, raw); errors.Is(err, session.ErrTraceTooLarge) {
			r.refuse(a.refusedTraces, "trace", ti.Name, err)
			continue
		} else if err != nil {
			r.writeFailed(err)
			continue
		}
		a.traces[ti.Name] = true
	}
	prune(a.traces, listed)
	prune(a.refusedTraces, listed)
}

// pullEvents notes each new trigger event in the manifest (the first maxAgentNotes).
func (r *recorder) pullEvents(ctx context.Context) {
	a := r.agent
	evs, err := a.c.Events(ctx)
	if err != nil {
		r.log.Debug("listing the agent's events failed", "err", err)
		return
	}
	for _, ev := range evs {
		if a.events[ev.ID] || ev.After == "" { // noted once its pair is complete
			continue
		}
		a.events[ev.ID] = true
		if a.notes >= maxAgentNotes {
			continue
		}
		a.notes++
		r.addNote("agent trigger %s at %s: %s (profiles %s, %s)", ev.Trigger, ev.Time.UTC().Format(time.RFC3339), ev.Detail, ev.Before, ev.After)
	}
	if len(a.events) > 10*maxAgentNotes { // bound the set: keep the IDs the agent still lists
		listed := make(map[uint64]bool, len(evs))
		for _, ev := range evs {
			listed[ev.ID] = true
		}
		for id := range a.events {
			if !listed[id] {
				delete(a.events, id)
			}
		}
	}
}

// agentSummary notes what came from the agent.
func (r *recorder) agentSummary() {
	a := r.agent
	msg := fmt.Sprintf("copied %d sample(s) from the memdoctor agent at %s", a.samples, a.c.BaseURL())
	if a.before > 0 {
		msg += fmt.Sprintf(", %d of them from before memdoctor attached", a.before)
	}
	r.addNote("%s", msg)
	if n := a.refusals - maxRefusedNotes; n > 0 {
		r.addNote("refused %d more item(s) the agent listed (bad names or profiles); they were not stored", n)
	}
}

// gcRate is the GC rate over the last ten seconds or more, from cumulative cycle counts.
type gcRate struct {
	t      time.Time
	cycles uint64
	perSec float64
	have   bool
}

func (g *gcRate) add(t time.Time, cycles uint64) (float64, bool) {
	switch {
	case g.t.IsZero() || t.Before(g.t) || cycles < g.cycles:
		g.t, g.cycles = t, cycles
	case t.Sub(g.t) >= 10*time.Second:
		g.perSec = float64(cycles-g.cycles) / t.Sub(g.t).Seconds()
		g.have = true
		g.t, g.cycles = t, cycles
	}
	return g.perSec, g.have
}
