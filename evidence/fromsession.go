package evidence

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/memdoctor/memdoctor/agent/breakdown"
	"github.com/memdoctor/memdoctor/session"
)

// Options tune how evidence is built.
type Options struct {
	// Until ends the evidence at this time, as if collection had stopped then (zero = all).
	Until time.Time
	// MemoryBudgetBytes overrides the session's memory budget (0 = the session's, else the
	// cgroup limit).
	MemoryBudgetBytes uint64
	// MaxSkew is how far apart a Go reading and a /proc reading may be for memory to be split
	// between them (0 = 1.5 s): memory moves fast, and a stale pairing invents non-Go memory.
	MaxSkew time.Duration
	// MaxProfileBytes bounds a profile's decompressed size (0 = pprofio's default, 32 MiB).
	MaxProfileBytes int64
	// TargetRuns says that the session's target still runs (its caller checked: the same PID
	// and start time): advice may then name a command for it. False: it is taken to have
	// exited, and no advice names it.
	TargetRuns bool
	// Source lets the diagnosis read the program's source where its files are on disk
	// (Evidence.CallReaching): memdoctor's commands set it; tests leave it off, so that what
	// they judge does not depend on the machine's files.
	Source bool
}

// defaultMaxSkew: see Options.MaxSkew.
const defaultMaxSkew = 1500 * time.Millisecond

// FromSession builds the evidence of a session, streaming its samples and gctrace cycles.
// It fails only when the session's files cannot be read at all; damage inside becomes notes.
func FromSession(s *session.Session, opts Options) (*Evidence, error) {
	if opts.MaxSkew <= 0 {
		opts.MaxSkew = defaultMaxSkew
	}
	m := s.Manifest
	ev := &Evidence{
		Mode:     m.Mode,
		Session:  s.Dir,
		Status:   m.Status,
		Command:  m.Command,
		Target:   m.Target,
		profiles: newStore(opts.MaxProfileBytes, m.Target.MainModule),
		Source:   opts.Source,
	}
	if ev.Target.Started.IsZero() {
		ev.Target.Started = m.GCTraceBase // the runtime's start, as gctrace counts it
	}
	b := newSessionBuild(ev, opts)
	b.sessionStart = m.Start
	if err := b.readGC(s); err != nil {
		return nil, err
	}
	if err := b.readSamples(s); err != nil {
		return nil, err
	}
	b.listSnapshots(s)
	b.window(s)
	b.profileFallbacks()
	b.finish()
	for _, t := range m.Restarts {
		if b.in(t) {
			ev.Restarts = append(ev.Restarts, t)
		}
	}
	ev.Notes = append(ev.Notes, m.Notes...)
	ev.Notes = append(ev.Notes, s.Warnings...)
	ev.setBudget(opts.MemoryBudgetBytes, m.MemoryBudgetBytes, m.MemoryBudgetSource)
	for _, at := range []*breakdown.At{ev.Peak, ev.Latest} {
		if at != nil {
			at.SetLimits(b.pair.cgroup, ev.Budget)
		}
	}
	ev.fromAttempts(m.Attempts)
	ev.readHolders(s, opts)
	ev.fromCosts(m.Costs)
	ev.explainGaps()
	return ev, nil
}

// sessionBuild is the state of one pass over a session.
type sessionBuild struct {
	ev   *Evidence
	opts Options

	m       [nQuantities]multi // the readings of each quantity, by source
	reading reading            // the sample being mapped
	scans   []float64
	gc      gcSums

	first, last  time.Time // the earliest and latest reading
	gcProcs      int
	pair         pairing
	untimedGC    int
	sessionStart time.Time
	oomFirst     uint64 // the first cgroup reading's oom_kill count
	oomSeen      bool
}

func newSessionBuild(ev *Evidence, opts Options) *sessionBuild {
	b := &sessionBuild{ev: ev, opts: opts}
	for q := range b.m {
		b.m[q] = newMulti()
	}
	b.pair.maxSkew = opts.MaxSkew
	return b
}

// add records a reading of quantity q from src at t, as the table describes q.
func (b *sessionBuild) add(q quantity, src Source, t time.Time, v float64) {
	b.m[q].put(&quantities[q], src, t, v)
}

// in reports whether t is inside the evidence (not after Until).
func (b *sessionBuild) in(t time.Time) bool {
	return b.opts.Until.IsZero() || !t.After(b.opts.Until)
}

func (b *sessionBuild) saw(t time.Time) {
	if b.first.IsZero() || t.Before(b.first) {
		b.first = t
	}
	if t.After(b.last) {
		b.last = t
	}
}

const mib = 1 << 20

// readGC maps the session's gctrace cycles (see gcCycle).
func (b *sessionBuild) readGC(s *session.Session) error {
	skipped, err := s.EachGC(func(e session.GCEvent) error {
		b.ev.GCLines++
		if e.Time.IsZero() {
			b.untimedGC++
			return nil
		}
		if b.in(e.Time) {
			b.gcCycle(e.Time, e.Cycle)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if skipped > 0 {
		b.ev.Notes = append(b.ev.Notes, fmt.Sprintf("%s: skipped %d unparsable gc line(s)", session.GCTraceFile, skipped))
	}
	if b.untimedGC > 0 && b.gc.n == 0 {
		b.ev.Notes = append(b.ev.Notes, fmt.Sprintf("gctrace has %d cycles but no time base: they are not placed in time", b.untimedGC))
	}
	return nil
}

// window sets the evidence's start and end: the manifest's, else the data's, cut at Until.
func (b *sessionBuild) window(s *session.Session) {
	ev := b.ev
	ev.Start, ev.End = s.Manifest.Start, s.Manifest.End
	if ev.Start.IsZero() || !b.first.IsZero() && b.first.Before(ev.Start) {
		ev.Start = b.first
	}
	if ev.End.IsZero() || b.last.After(ev.End) {
		ev.End = b.last
	}
	if u := b.opts.Until; !u.IsZero() && (ev.End.IsZero() || ev.End.After(u)) {
		ev.End = u
	}
	if ev.End.Before(ev.Start) {
		ev.End = ev.Start
	}
}

// gogcFromEnv reads a GOGC environment value: 100 when unset, -1 for off.
func gogcFromEnv(v string) float64 {
	switch v = strings.TrimSpace(v); {
	case v == "":
		return 100
	case strings.EqualFold(v, "off"):
		return -1
	}
	if n, err := strconv.Atoi(v); err == nil {
		return float64(n)
	}
	return 100
}

// setBudget picks the memory budget: an option, the session's, else the cgroup limit.
func (ev *Evidence) setBudget(option, session uint64, sessionSource string) {
	switch {
	case option > 0:
		ev.Budget, ev.BudgetSource = option, "option"
	case session > 0:
		ev.Budget, ev.BudgetSource = session, sessionSource
	case ev.CgroupLimit > 0:
		ev.Budget, ev.BudgetSource = ev.CgroupLimit, "cgroup"
	}
}
