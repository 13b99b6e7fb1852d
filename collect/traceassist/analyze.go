// Package traceassist reads a runtime/trace (such as a flight-recorder snapshot the memdoctor
// agent kept around a spike) and measures the GC mark assists in it: how long goroutines
// spent assisting the collector instead of doing their own work, in total and per goroutine,
// and which goroutines paid it. Mark assists are the latency a GC under pressure puts on
// allocating requests. It stands on the readers' layer (docs/development.md), beside
// pprofio, and imports nothing of memdoctor's: the evidence reads a session's traces through
// it.
package traceassist

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"golang.org/x/exp/trace"
)

// Goroutine is one goroutine's share of the assists.
type Goroutine struct {
	GoID int64 `json:"goid"`
	// Function is the goroutine's root frame: the function it was started with (for the main
	// goroutine, runtime.main); when the trace shows none of its stacks, the function that
	// created it.
	Function string `json:"function"`
	// CreatedBy is the function whose go statement started it ("" when the creation is not in
	// the trace's window).
	CreatedBy string `json:"created_by,omitempty"`
	// AssistSite is the innermost frame outside the runtime of its longest assist: the code
	// whose allocation was made to pay.
	AssistSite string        `json:"assist_site,omitempty"`
	Assist     time.Duration `json:"assist_ns"`
	Assists    int           `json:"assists"`
}

// Summary is what a trace says about mark assists.
type Summary struct {
	// Start and End bound the trace's events on the wall clock; zero when the trace has no
	// clock snapshot (traces before Go 1.25).
	Start time.Time `json:"start,omitzero"`
	End   time.Time `json:"end,omitzero"`
	// WallTime is the span of the trace's events.
	WallTime time.Duration `json:"wall_ns"`
	// AssistTotal is the time goroutines spent in mark assists, summed over goroutines (it
	// can exceed WallTime when several assisted at once).
	AssistTotal time.Duration `json:"assist_total_ns"`
	// GCMark is how long the GC's concurrent mark phases lasted within the window, and
	// GCCycles how many began or were under way.
	GCMark   time.Duration `json:"gc_mark_ns"`
	GCCycles int           `json:"gc_cycles"`
	// ByGoroutine lists the goroutines that assisted, most assist first.
	ByGoroutine []Goroutine `json:"by_goroutine"`
}

const (
	assistRange = "GC mark assist"
	markRange   = "GC concurrent mark phase"
)

// gstate is what is known of one goroutine.
type gstate struct {
	// Candidates for the goroutine's function, best first: the root of its assists' stacks
	// (taken in its own code), the function it was started with, the root of another of
	// its stacks (which may be taken inside a deferred call of a wrapper).
	assistRoot, startRoot, otherRoot string
	createdBy, site                  string
	siteDur                          time.Duration
	assist                           time.Duration
	assists                          int
	open                             trace.Time // start of the assist under way (0 = none)
	openSite                         string
}

// Analyze reads a whole runtime/trace from r. A trace that cannot be parsed is an error; one
// that ends abruptly (a truncated file) is analysed up to its last whole generation (the
// parser reads a trace a generation, a second or so, at a time), with the error.
func Analyze(r io.Reader) (s *Summary, err error) {
	defer func() {
		if p := recover(); p != nil { // the parser must not take the caller down on bad input
			s, err = nil, fmt.Errorf("traceassist: the trace parser failed: %v", p)
		}
	}()
	tr, err := trace.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("traceassist: not a Go execution trace: %w", err)
	}
	a := &analysis{gs: make(map[trace.GoID]*gstate)}
	var readErr error
	for {
		ev, err := tr.ReadEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			readErr = fmt.Errorf("traceassist: reading the trace: %w", err)
			break
		}
		a.event(ev)
	}
	if a.n == 0 {
		if readErr != nil {
			return nil, readErr
		}
		return nil, errors.New("traceassist: the trace has no events")
	}
	return a.summary(), readErr
}

type analysis struct {
	n           int
	first, last trace.Time
	clockTrace  trace.Time
	clockWall   time.Time
	haveClock   bool
	gs          map[trace.GoID]*gstate
	markOpen    trace.Time
	markTotal   time.Duration
	markCycles  int
}

func (a *analysis) g(id trace.GoID) *gstate {
	g, ok := a.gs[id]
	if !ok {
		g = &gstate{}
		a.gs[id] = g
	}
	return g
}

func (a *analysis) event(ev trace.Event) {
	t := ev.Time()
	if a.n == 0 || t < a.first {
		a.first = t
	}
	if t > a.last {
		a.last = t
	}
	if ev.Kind() != trace.EventSync {
		a.n++
	}
	switch ev.Kind() {
	case trace.EventSync:
		if cs := ev.Sync().ClockSnapshot; cs != nil && !a.haveClock {
			a.clockTrace, a.clockWall, a.haveClock = cs.Trace, cs.Wall, true
		}
	case trace.EventStateTransition:
		st := ev.StateTransition()
		if st.Resource.Kind != trace.ResourceGoroutine {
			return
		}
		g := a.g(st.Resource.Goroutine())
		root := rootFrame(st.Stack)
		if from, _ := st.Goroutine(); from == trace.GoNotExist {
			if root != "" {
				g.startRoot = root
			}
			if c := creator(ev.Stack()); c != "" {
				g.createdBy = c
			}
		} else if g.otherRoot == "" {
			g.otherRoot = root
		}
	case trace.EventRangeBegin, trace.EventRangeActive, trace.EventRangeEnd:
		a.rangeEvent(ev, t)
	}
}

func (a *analysis) rangeEvent(ev trace.Event, t trace.Time) {
	r := ev.Range()
	switch r.Name {
	case markRange:
		switch ev.Kind() {
		case trace.EventRangeBegin, trace.EventRangeActive:
			if a.markOpen != 0 && ev.Kind() == trace.EventRangeActive {
				return // still the phase seen begin: Active repeats it at each generation
			}
			a.markOpen = t
			a.markCycles++
		case trace.EventRangeEnd:
			if a.markOpen != 0 {
				a.markTotal += t.Sub(a.markOpen)
				a.markOpen = 0
			}
		}
	case assistRange:
		if r.Scope.Kind != trace.ResourceGoroutine {
			return
		}
		g := a.g(r.Scope.Goroutine())
		switch ev.Kind() {
		case trace.EventRangeBegin, trace.EventRangeActive:
			if g.open != 0 && ev.Kind() == trace.EventRangeActive {
				return // an assist already under way
			}
			g.open = t
			g.openSite = topFrame(ev.Stack(), true)
			if root := rootFrame(ev.Stack()); root != "" && ev.Kind() == trace.EventRangeBegin {
				g.assistRoot = root
			}
		case trace.EventRangeEnd:
			if g.open != 0 {
				g.close(t.Sub(g.open))
			}
		}
	}
}

func (g *gstate) close(d time.Duration) {
	g.assist += d
	g.assists++
	if d >= g.siteDur && g.openSite != "" {
		g.site, g.siteDur = g.openSite, d
	}
	g.open, g.openSite = 0, ""
}

func (a *analysis) summary() *Summary {
	s := &Summary{WallTime: a.last.Sub(a.first)}
	if a.haveClock {
		s.Start = a.clockWall.Add(a.first.Sub(a.clockTrace))
		s.End = a.clockWall.Add(a.last.Sub(a.clockTrace))
	}
	if a.markOpen != 0 {
		a.markTotal += a.last.Sub(a.markOpen)
	}
	s.GCMark, s.GCCycles = a.markTotal, a.markCycles
	for id, g := range a.gs {
		if g.open != 0 { // still assisting when the window ends
			g.close(a.last.Sub(g.open))
		}
		if g.assists == 0 {
			continue
		}
		fn := cmp.Or(g.assistRoot, g.startRoot, g.otherRoot, g.createdBy)
		s.AssistTotal += g.assist
		s.ByGoroutine = append(s.ByGoroutine, Goroutine{
			GoID: int64(id), Function: fn, CreatedBy: g.createdBy, AssistSite: g.site, Assist: g.assist, Assists: g.assists,
		})
	}
	slices.SortFunc(s.ByGoroutine, func(x, y Goroutine) int {
		if c := cmp.Compare(y.Assist, x.Assist); c != 0 {
			return c
		}
		return cmp.Compare(x.GoID, y.GoID)
	})
	return s
}

// wrappers are the standard frames that start goroutines on behalf of their callers; the
// function a goroutine really runs is the next frame in.
var wrappers = []string{
	"sync.(*WaitGroup).Go",
	"golang.org/x/sync/errgroup.(*Group).Go",
	"golang.org/x/sync/errgroup.(*Group).TryGo",
}

func isWrapper(fn string) bool {
	for _, w := range wrappers {
		if fn == w || strings.HasPrefix(fn, w+".func") {
			return true
		}
	}
	return false
}

// rootFrame is the outermost frame of a stack other than runtime.goexit and the wrappers:
// the function the goroutine started with.
func rootFrame(st trace.Stack) string {
	root := ""
	for f := range st.Frames() {
		if f.Func != "runtime.goexit" && f.Func != "" && !isWrapper(f.Func) {
			root = f.Func
		}
	}
	return root
}

// creator is the innermost frame of a goroutine-creating stack outside the wrappers.
func creator(st trace.Stack) string {
	for f := range st.Frames() {
		if f.Func != "" && !isWrapper(f.Func) {
			return f.Func
		}
	}
	return ""
}

// topFrame is the innermost frame of a stack, skipping the runtime's own frames when
// skipRuntime is set (an assist's stack starts inside mallocgc).
func topFrame(st trace.Stack, skipRuntime bool) string {
	for f := range st.Frames() {
		if f.Func == "" || skipRuntime && isRuntime(f.Func) {
			continue
		}
		return f.Func
	}
	return ""
}

func isRuntime(fn string) bool {
	return strings.HasPrefix(fn, "runtime.") || strings.HasPrefix(fn, "internal/runtime/") || strings.HasPrefix(fn, "internal/")
}
