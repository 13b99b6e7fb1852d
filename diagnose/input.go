package diagnose

import (
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/memdoctor/memdoctor/breakdown"
	"github.com/memdoctor/memdoctor/internal/culprit"
	"github.com/memdoctor/memdoctor/session"
)

// Options tune a diagnosis.
type Options struct {
	// MemoryBudgetBytes is what the service may use; it overrides the session's budget.
	// 0 = take it from the session (its --memory-budget, else the cgroup limit).
	MemoryBudgetBytes uint64
	// Now stamps the diagnosis; nil = time.Now.
	Now func() time.Time
	// Until ends the diagnosis at this time, as if collection had stopped then (zero = the
	// whole session).
	Until time.Time
	// Logger receives debug messages from rules; nil = discard.
	Logger *slog.Logger
}

// Input is a loaded session prepared for the rules: the samples split by source and put in
// time order, the GC cycles on the wall clock, the memory budget, and lazy access to stored
// profiles. Rules only read it.
type Input struct {
	Session      *session.Session
	Start, End   time.Time
	Proc         []ProcPoint
	Go           []GoPoint
	Cgroup       []CgroupPoint
	GC           []session.GCEvent // cycles with a wall-clock time, inside the window
	Budget       uint64            // 0 = unknown
	BudgetSource string            // "flag", "cgroup", "option" or ""
	CgroupLimit  uint64            // 0 = none or unknown
	Culprit      culprit.Options
	Log          *slog.Logger

	profiles *profileCache
	notes    []string

	assistsOnce    sync.Once
	assists        *Assists
	liveOnce       sync.Once
	live           []Point
	liveSource     string
	spikesOnce     sync.Once
	spikes         []Spike
	summaryOnce    sync.Once
	summary        Summary
	breakdownsOnce sync.Once
	breakdowns     []*breakdown.At
}

// Summary returns the headline figures (computed once).
func (in *Input) Summary() Summary {
	in.summaryOnce.Do(func() { in.summary = computeSummary(in) })
	return in.summary
}

// ProcPoint is one /proc reading.
type ProcPoint struct {
	T time.Time
	session.Proc
}

// GoPoint is one reading of the Go runtime's memory.
type GoPoint struct {
	T time.Time
	session.GoMem
}

// CgroupPoint is one cgroup reading.
type CgroupPoint struct {
	T time.Time
	session.Cgroup
}

// Point is a value at a time.
type Point struct {
	T time.Time
	V float64
}

// NewInput prepares a session for the rules.
func NewInput(s *session.Session, opts Options) *Input {
	if !opts.Until.IsZero() {
		s = s.Until(opts.Until)
	}
	in := &Input{
		Session:  s,
		Culprit:  culprit.Options{MainModule: s.Manifest.Target.MainModule},
		Log:      opts.Logger,
		profiles: newProfileCache(4),
	}
	if in.Log == nil {
		in.Log = slog.New(slog.DiscardHandler)
	}
	in.Start, in.End = s.Window()
	for _, smp := range s.Samples {
		if smp.Proc != nil {
			in.Proc = append(in.Proc, ProcPoint{smp.Time, *smp.Proc})
		}
		if smp.Go != nil {
			in.Go = append(in.Go, GoPoint{smp.Time, *smp.Go})
		}
		if smp.Cgroup != nil {
			in.Cgroup = append(in.Cgroup, CgroupPoint{smp.Time, *smp.Cgroup})
			if smp.Cgroup.LimitBytes > 0 {
				in.CgroupLimit = smp.Cgroup.LimitBytes
			}
		}
	}
	for _, ev := range s.GC {
		if !ev.Time.IsZero() {
			in.GC = append(in.GC, ev)
		}
	}
	if len(in.GC) == 0 && len(s.GC) > 0 {
		in.notef("gctrace has %d cycles but no time base: they count, but are not placed in time", len(s.GC))
	}
	switch {
	case opts.MemoryBudgetBytes > 0:
		in.Budget, in.BudgetSource = opts.MemoryBudgetBytes, "option"
	case s.Manifest.MemoryBudgetBytes > 0:
		in.Budget, in.BudgetSource = s.Manifest.MemoryBudgetBytes, s.Manifest.MemoryBudgetSource
	case in.CgroupLimit > 0:
		in.Budget, in.BudgetSource = in.CgroupLimit, "cgroup"
	}
	return in
}

func (in *Input) notef(format string, args ...any) {
	in.notes = append(in.notes, fmt.Sprintf(format, args...))
}

// Seconds is the window's length.
func (in *Input) Seconds() float64 { return in.End.Sub(in.Start).Seconds() }

// LiveHeap returns the live heap (marked by the last GC) over time, from the best source the
// session has: runtime/metrics, then gctrace, then the heap profiles' inuse_space. It is
// computed once.
func (in *Input) LiveHeap() (pts []Point, source string) {
	in.liveOnce.Do(func() { in.live, in.liveSource = in.liveHeap() })
	return in.live, in.liveSource
}

func (in *Input) liveHeap() (pts []Point, source string) {
	for _, g := range in.Go {
		if g.HeapLiveBytes > 0 {
			pts = append(pts, Point{g.T, float64(g.HeapLiveBytes)})
		}
	}
	if len(pts) > 0 {
		return pts, "runtime/metrics"
	}
	for _, ev := range in.GC {
		pts = append(pts, Point{ev.Time, float64(ev.HeapLive)})
	}
	if len(pts) > 0 {
		return pts, "gctrace"
	}
	for _, t := range in.HeapTotals() {
		pts = append(pts, Point{t.T, float64(t.InuseSpace)})
	}
	if len(pts) > 0 {
		return pts, "heap profiles (inuse_space)"
	}
	return nil, ""
}

// HeapGoal returns the GC's heap goal over time.
func (in *Input) HeapGoal() []Point {
	var pts []Point
	for _, ev := range in.GC {
		pts = append(pts, Point{ev.Time, float64(ev.Goal)})
	}
	if len(pts) > 0 {
		return pts
	}
	for _, g := range in.Go {
		if g.HeapGoalBytes > 0 {
			pts = append(pts, Point{g.T, float64(g.HeapGoalBytes)})
		}
	}
	return pts
}

// RSS returns the resident set size over time.
func (in *Input) RSS() []Point {
	pts := make([]Point, 0, len(in.Proc))
	for _, p := range in.Proc {
		pts = append(pts, Point{p.T, float64(p.RSSBytes)})
	}
	return pts
}

// valueAt returns the last point at or before t, else the first point after it.
func valueAt(pts []Point, t time.Time) (Point, bool) {
	if len(pts) == 0 {
		return Point{}, false
	}
	i := sort.Search(len(pts), func(i int) bool { return pts[i].T.After(t) })
	if i == 0 {
		return pts[0], true
	}
	return pts[i-1], true
}

// nearestGo returns the Go reading closest in time to t.
func (in *Input) nearestGo(t time.Time) (GoPoint, bool) {
	if len(in.Go) == 0 {
		return GoPoint{}, false
	}
	i := sort.Search(len(in.Go), func(i int) bool { return !in.Go[i].T.Before(t) })
	best := -1
	for _, j := range []int{i - 1, i} {
		if j < 0 || j >= len(in.Go) {
			continue
		}
		if best < 0 || absDur(in.Go[j].T.Sub(t)) < absDur(in.Go[best].T.Sub(t)) {
			best = j
		}
	}
	return in.Go[best], true
}

// nearestCgroup returns the cgroup reading closest in time to t.
func (in *Input) nearestCgroup(t time.Time) (CgroupPoint, bool) {
	if len(in.Cgroup) == 0 {
		return CgroupPoint{}, false
	}
	i := sort.Search(len(in.Cgroup), func(i int) bool { return !in.Cgroup[i].T.Before(t) })
	if i == len(in.Cgroup) {
		i--
	}
	return in.Cgroup[i], true
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
