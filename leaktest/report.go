package leaktest

import (
	"slices"
	"time"
)

// Report is what one Loop found, computed once when it ends: the verdict on each series it
// judged (the live heap, the goroutines) with its proof, where the growth comes from, and the
// text Loop writes (the failure, or the line a passing test logs). Its JSON form is what
// memdoctor test reads.
type Report struct {
	// Test is the test's name (t.Name()).
	Test string `json:"test"`
	// Verdict is the whole run's: a leak when either series leaks.
	Verdict Verdict `json:"verdict"`
	// Reason says why the run is not judged (a call that hung: Hung), or what stayed a
	// suspicion.
	Reason string `json:"reason,omitempty"`
	// Unit is what was repeated: "call" (of fn, for Loop) or "run" (of a test, for
	// CheckTest); every count and rate "per call" below counts these.
	Unit string `json:"unit"`
	// Rounds, CallsPerRound and WarmupCalls are how fn was called: Calls measured calls in
	// Rounds rounds of CallsPerRound, after WarmupCalls.
	Rounds        int   `json:"rounds"`
	CallsPerRound int64 `json:"calls_per_round"`
	WarmupCalls   int64 `json:"warmup_calls"`
	Calls         int64 `json:"calls"`
	// Elapsed is the time to the verdict, TimeLimit the limit it ran under.
	Elapsed   time.Duration `json:"elapsed_ns"`
	TimeLimit time.Duration `json:"time_limit_ns"`
	// TimedOut is set when the time limit ended the rounds before a verdict was sure; TooFew
	// when the rounds were too few for any verdict (a machine too slow for fn at the limit).
	TimedOut bool `json:"timed_out,omitempty"`
	TooFew   bool `json:"too_few,omitempty"`
	// ReadLate is set when a reading (its garbage collection) had not ended a grace after
	// the time limit: the run is not judged.
	ReadLate bool `json:"read_late,omitempty"`
	// Hung, when set, is the failure of a call that had not returned a grace after the time
	// limit while the calls before it were far quicker (or that was the first): where it
	// waits. Slow says a call was still running then that was merely slower than its grace
	// (no failure).
	Hung string `json:"hung,omitempty"`
	Slow string `json:"slow,omitempty"`
	// Spinning is how many goroutines that never block the calls left: every garbage
	// collection waits its turn behind them, so the live heap was not judged (Heap is nil).
	Spinning int `json:"spinning,omitempty"`
	// Heap and Goroutines are the two series, nil when not judged (HeapOnly, GoroutinesOnly).
	Heap       *Series `json:"heap,omitempty"`
	Goroutines *Series `json:"goroutines,omitempty"`
	// HeapSites are where a heap leak's growth was allocated, largest first (set for a heap
	// leak only); HeapNote says why none is named when there is none.
	HeapSites []HeapSite `json:"heap_sites,omitempty"`
	HeapNote  string     `json:"heap_note,omitempty"`
	// Groups are the groups of goroutines that grew, most first (set for a goroutine leak
	// only); GroupsNote says why none is named when there is none.
	Groups     []GoroutineGroup `json:"goroutine_groups,omitempty"`
	GroupsNote string           `json:"goroutine_groups_note,omitempty"`
	// Holders is the failure's "who holds it" section, as it writes it: the reference paths
	// memdoctor holders found, or why there are none.
	Holders string `json:"holders,omitempty"`
	// Message is what Loop writes: the failure (t.Error), or the line it logs (t.Log).
	Message string `json:"message"`

	of       string // what was called, in words: "fn", or the test's name
	extended bool   // the rounds ran past the time limit for the readings a verdict needs
}

// A Verdict is what the readings say of a series, or of a whole run.
type Verdict string

const (
	VerdictLeak      Verdict = "leak"       // confirmed: the test fails
	VerdictNoLeak    Verdict = "no-leak"    // no growth that counts, or one that stopped
	VerdictSuspected Verdict = "suspected"  // a growth not confirmed within the time limit
	VerdictNotJudged Verdict = "not-judged" // too few readings for a verdict either way
)

// Series is the verdict on one series of readings (the live heap in bytes, or the goroutines)
// against the calls, with its proof.
type Series struct {
	Verdict Verdict `json:"verdict"`
	// PerCall is the growth per call (Theil-Sen's slope of the readings against the calls).
	PerCall float64 `json:"per_call"`
	// First and Last are the medians of the first and of the last few readings; Start and End
	// the first reading and the last.
	First float64 `json:"first"`
	Last  float64 `json:"last"`
	Start float64 `json:"start"`
	End   float64 `json:"end"`
	// Calls is the calls between the first reading and the last; Readings how many.
	Calls    int64 `json:"calls"`
	Readings int   `json:"readings"`
	// The proof: Kendall's tau, Mann-Kendall's one-sided p-value, the growth over the
	// readings' scatter, the last third's slope over the whole's, the second half's share of
	// the growth, and whether it still rises at the end.
	Tau       float64 `json:"tau"`
	P         float64 `json:"p"`
	SNR       float64 `json:"snr"`
	LateRatio float64 `json:"late_ratio"`
	LateShare float64 `json:"late_share"`
	Rising    bool    `json:"rising"`
	// InFlight is, for a growth only suspected for it, the share made by memory in flight.
	InFlight float64 `json:"in_flight,omitempty"`
	// Proof is the statistics in words, as the failure says them.
	Proof string `json:"proof"`
}

// Frame is one line of a stack: a function and where in its source.
type Frame struct {
	Function string `json:"function"`
	File     string `json:"file,omitempty"`
	Line     int    `json:"line,omitempty"`
}

func toFrame(f frame) Frame    { return Frame{Function: f.fn, File: f.file, Line: f.line} }
func (f Frame) frame() frame   { return frame{fn: f.Function, file: f.File, line: f.Line} }
func (f Frame) String() string { return f.frame().String() }

// HeapSite is one program line whose memory grew, with the library lines under it.
type HeapSite struct {
	// Program is the program's line: the innermost frame of the module under test (or the
	// test's line that called Loop when fn was a library's function, InFn false).
	Program Frame `json:"program"`
	InFn    bool  `json:"in_fn"`
	// Elsewhere, when set, says the growth was not allocated by fn's calls but on "another
	// goroutine" or by "the runtime".
	Elsewhere      string  `json:"elsewhere,omitempty"`
	BytesPerCall   float64 `json:"bytes_per_call"`
	Share          float64 `json:"share"` // of the heap's growth
	ObjectsPerCall float64 `json:"objects_per_call"`
	// Libs are the library lines under the program's that allocated it, each with its share
	// of the site's growth; a Lib with no Function is the program's line itself.
	Libs []LibLine `json:"libs,omitempty"`
}

// LibLine is a library's line under a program's line, and its share of the site's growth.
type LibLine struct {
	At    Frame   `json:"at"`
	Share float64 `json:"share"`
}

// GoroutineGroup is goroutines that grew, waiting at the same place, started by the same go
// statement.
type GoroutineGroup struct {
	Added   int     `json:"added"`
	PerCall float64 `json:"per_call"`
	State   string  `json:"state"` // what they wait for: "chan receive", "select", ...
	Wait    Frame   `json:"wait"`  // where: the top of their stack outside the runtime
	// Under is the innermost frame outside the standard library, when not Wait itself.
	Under Frame `json:"under,omitzero"`
	// Function is the group's own function: the one its go statement starts.
	Function Frame `json:"function,omitzero"`
	// CreatedBy is the go statement that started them; MadeBy the program's line that called
	// the library whose go statement it is.
	CreatedBy Frame `json:"created_by,omitzero"`
	MadeBy    Frame `json:"made_by,omitzero"`
	// ProvenLeaked is how many goroutines waiting at Wait Go's goroutineleak profile proves
	// leaked (Go 1.27), warm-up included.
	ProvenLeaked int `json:"proven_leaked,omitempty"`
}

// Failed reports whether the run fails the test: it found a leak, or a call hung (Hung).
func (rep *Report) Failed() bool { return rep.Verdict == VerdictLeak || rep.Hung != "" }

// report computes what the run found, once, after it ended: the verdicts, and for a leak
// where it comes from and who holds it; then the text Loop writes.
func (r *run) report(res result) *Report {
	rep := &Report{
		Test: r.test, Unit: r.unit, of: r.of, Rounds: len(r.readings) - 1, CallsPerRound: r.perRound, WarmupCalls: r.warmup,
		Calls: r.calls, Elapsed: r.elapsed, TimeLimit: r.cfg.timeLimit, TimedOut: res.timedOut, TooFew: res.tooFew,
		ReadLate: r.readLate, extended: r.extended,
	}
	if res.hung {
		rep.Hung = r.hungMessage()
	}
	if res.slow {
		rep.Slow = r.slowText()
	}
	if r.cfg.heap {
		rep.Spinning = r.spun
	}
	first, last := r.readings[0], r.readings[len(r.readings)-1]
	if res.heapOn {
		rep.Heap = newSeries(res.heap, first.heap, last.heap)
	}
	if res.gorOn {
		rep.Goroutines = newSeries(res.goroutines, first.goroutines, last.goroutines)
	}
	switch {
	case res.halted != "":
		rep.Verdict, rep.Reason = VerdictNotJudged, res.halted
		for _, s := range []*Series{rep.Heap, rep.Goroutines} {
			if s != nil {
				s.Verdict = VerdictNotJudged
			}
		}
		rep.Message = "leaktest: not judged: " + res.halted
		return rep
	case res.failed():
		rep.Verdict = VerdictLeak
	case res.tooFew, r.readLate:
		rep.Verdict = VerdictNotJudged
	case rep.Heap != nil && rep.Heap.Verdict == VerdictSuspected, rep.Goroutines != nil && rep.Goroutines.Verdict == VerdictSuspected:
		rep.Verdict = VerdictSuspected
	default:
		rep.Verdict = VerdictNoLeak
	}
	if !res.failed() {
		rep.Message = rep.summary()
		rep.Reason = rep.reason()
		return rep
	}
	var deltas []heapDelta
	if r.baseHeap != nil {
		deltas = diffHeap(r.baseHeap, heapProfile())
	}
	if rep.Goroutines != nil && rep.Goroutines.Verdict == VerdictLeak {
		rep.Groups, rep.GroupsNote = r.goroutineGroups(deltas)
	}
	if rep.Heap != nil && rep.Heap.Verdict == VerdictLeak {
		var shown []heapSite
		rep.HeapSites, shown, rep.HeapNote = r.heapSites(deltas)
		if r.cfg.holders && len(shown) > 0 {
			rep.Holders = r.holdersSection(shown)
		}
	}
	rep.Message = rep.message()
	return rep
}

// newSeries is a series' verdict and proof; start and end are its first and last readings.
func newSeries(g growth, start, end float64) *Series {
	s := &Series{
		PerCall: g.perCall, First: g.first, Last: g.last, Start: start, End: end, Calls: g.calls, Readings: g.n,
		Tau: g.tau, P: g.p, SNR: g.snr, LateRatio: g.lateRatio, LateShare: g.lateShare,
		Rising: g.lateRatio >= lateRising && g.lateShare >= minLateShare, InFlight: g.inFlight,
		Proof: proofText(g),
	}
	switch g.conf {
	case confirmed:
		s.Verdict = VerdictLeak
	case suspected:
		s.Verdict = VerdictSuspected
	default:
		s.Verdict = VerdictNoLeak
	}
	return s
}

// heapSite is one program line whose memory grew, with the library lines under it, as
// computed from the profile (HeapSite is what the report keeps of it).
type heapSite struct {
	site  site
	bytes int64
	objs  int64
	libs  []libLine
}

type libLine struct {
	at    frame
	bytes int64
}

// heapSites finds where the heap's growth was allocated, largest first: the sites the report
// names (at most three, each a tenth of the growth or more but the first), and why none is
// named when none is.
func (r *run) heapSites(deltas []heapDelta) (out []HeapSite, shown []heapSite, note string) {
	if deltas == nil {
		return nil, nil, "(the heap profile could not be read: no allocation site to name)"
	}
	bySite := map[frame]*heapSite{}
	var total int64
	for _, d := range deltas {
		if d.inUseBytes <= 0 {
			continue
		}
		fr, fromFn := r.attr.frames(d.stack)
		if len(fr) == 0 || r.leftOut(fr) {
			continue // left out of the heap's readings too
		}
		s := r.attr.attribute(fr, fromFn)
		hs := bySite[s.program]
		if hs == nil {
			hs = &heapSite{site: s}
			bySite[s.program] = hs
		}
		hs.bytes += d.inUseBytes
		hs.objs += d.inUseObjects
		total += d.inUseBytes
		i := slices.IndexFunc(hs.libs, func(l libLine) bool { return l.at == s.lib })
		if i < 0 {
			hs.libs = append(hs.libs, libLine{at: s.lib})
			i = len(hs.libs) - 1
		}
		hs.libs[i].bytes += d.inUseBytes
	}
	sites := make([]heapSite, 0, len(bySite))
	for _, hs := range bySite {
		sites = append(sites, *hs)
	}
	slices.SortFunc(sites, func(a, b heapSite) int {
		return cmpDesc(a.bytes, b.bytes, a.site.program.String(), b.site.program.String())
	})
	if total <= 0 {
		return nil, nil, "(no allocation site holds more memory than at the start of the rounds: the growth is the runtime's own)"
	}
	calls := float64(max(r.calls, 1))
	for _, hs := range sites {
		if len(shown) == 3 || float64(hs.bytes) < 0.1*float64(total) && len(shown) > 0 {
			break
		}
		slices.SortFunc(hs.libs, func(a, b libLine) int { return cmpDesc(a.bytes, b.bytes, a.at.String(), b.at.String()) })
		shown = append(shown, hs)
		s := HeapSite{
			Program: toFrame(hs.site.program), InFn: hs.site.inFn, Elsewhere: hs.site.elsewhere,
			BytesPerCall: float64(hs.bytes) / calls, Share: float64(hs.bytes) / float64(total), ObjectsPerCall: float64(hs.objs) / calls,
		}
		for i, l := range hs.libs {
			if i == 3 || float64(l.bytes) < 0.05*float64(hs.bytes) {
				break
			}
			s.Libs = append(s.Libs, LibLine{At: toFrame(l.at), Share: float64(l.bytes) / float64(hs.bytes)})
		}
		out = append(out, s)
	}
	return out, shown, ""
}

// goroutineGroups finds the groups of goroutines that grew, most first: the groups the report
// names (at most three, each a tenth of the growth or more but the first), what they wait for
// and where (or that they never wait), their own function and where it is defined, the go
// statement that started them and the line of the program that made them; and why none is
// named when none is.
func (r *run) goroutineGroups(deltas []heapDelta) ([]GoroutineGroup, string) {
	if r.baseGroups == nil {
		return nil, ""
	}
	grown := grownGroups(r.baseGroups, groupGoroutines(r.others(), r.cfg.ignoreTop))
	if len(grown) == 0 {
		return nil, "(no group of goroutines has more than at the start of the rounds)"
	}
	total := 0
	for _, g := range grown {
		total += g.added
	}
	defineFuncs(grown, funcStarts())
	// Go 1.27's goroutineleak profile collects the garbage: not behind goroutines that never
	// block, and not for long.
	var proven map[frame]int
	if r.spun == 0 {
		proven, _ = within(time.Now().Add(leakProfileWait), provenLeaked)
	}
	calls := float64(max(r.calls, 1))
	var out []GoroutineGroup
	for i, g := range grown {
		if i == 3 || float64(g.added) < 0.1*float64(total) && i > 0 {
			break
		}
		gg := GoroutineGroup{
			Added: g.added, PerCall: float64(g.added) / calls, State: g.state, Wait: toFrame(g.wait),
			Function: toFrame(g.fn), CreatedBy: toFrame(g.createdBy), ProvenLeaked: proven[g.wait],
		}
		if w, ok := r.firstNotStd(g.sample.stack); ok && w != g.wait && g.state != "running" && w.fn != g.fn.fn {
			gg.Under = toFrame(w)
		}
		if r.attr.mods.classify(g.createdBy.fn) != classMain {
			if m, ok := r.maker(g, deltas); ok {
				gg.MadeBy = toFrame(m)
			}
		}
		out = append(out, gg)
	}
	return out, ""
}
