package rule

import (
	"math"
	"strings"

	"github.com/memdoctor/memdoctor/facts"
)

// GoroutineLeakCase is goroutines that pile up: a count whose floor grows (Rise), proved
// leaked by the runtime (Proof), or both.
type GoroutineLeakCase struct {
	Rise *Rise
	Src  facts.Source // the counts' source
	// Proof is what the goroutineleak profiles proved, nil when they proved nothing.
	Proof *Proof
	// PinnedStacks is the stack memory the new goroutines pin (0 when unknown).
	PinnedStacks float64
	// Blame is the sites whose goroutines grew between the first and last periodic profiles,
	// when they were compared.
	Blame *Blame
	// Holds is the heap growth the leaked goroutines hold, when the heap grew with them.
	Holds *Held
	// Made is, when the goroutines that grew are a library's with no frame of the program,
	// the program's code that called into that library: the culprits it names come first.
	Made *facts.Made
	// Unnamed is true when the verdict names no site: no two goroutine profiles were read to
	// compare (the count alone, from the pprof index page or the process's memory, showed the
	// growth), nor a goroutineleak profile. Stacks is how many goroutine profiles were read.
	Unnamed bool
	Stacks  int
	// Shutdown is the service's shutdown at the session's end, when it had one: the
	// goroutines were judged up to its start.
	Shutdown *facts.Shutdown
	// OnlyProfile is, when a single goroutine profile was read (two compare which site
	// grew), the pile-up it shows: the site that holds most of its goroutines, named as the
	// culprit.
	OnlyProfile *PileUpCase
	// ByHeap is true when the count's rise, too few readings to confirm alone, was confirmed
	// by the live heap's confirmed growth, which it explains (Holds).
	ByHeap bool
	// ByCensus is the number of periodic goroutine profiles whose census of the growing site
	// confirmed a count too short to cross the boundary alone (censusRose); 0 when the count
	// confirmed itself or was not confirmed.
	ByCensus int
	// CensusOf is, when ByCensus is not 0, the start function whose goroutines the census
	// counted ("" when it counted the growing site's).
	CensusOf string
	// Spinning is, when the count rose more slowly at the end and its goroutines spin, the
	// share of them the last goroutine profile caught running or runnable (0 otherwise): the
	// slowing was taken for theirs, not for a warm-up levelling off.
	Spinning float64
}

// Proof is what the runtime's leak detector proved.
type Proof struct {
	Leaked float64
	// Snap is the goroutineleak profile its sites were read from ("" when none was kept);
	// Top the site with most leaked goroutines (nil when none was read).
	Snap string
	Top  *facts.GoroutineGroup
}

// Blame compares the first and last periodic goroutine profiles.
type Blame struct {
	Old, New string
	// Top is the site that grew most (nil when none grew or the profiles could not be read),
	// Delta by how many goroutines; Titled is true when it names the verdict.
	Top    *facts.GoroutineGroup
	Delta  int
	Titled bool
}

// goroutineLeak reports goroutines that pile up: proved by the runtime's leak detector (the
// goroutineleak profile: blocked forever on something nobody can reach), or a goroutine
// count whose floor grows for good. It names the sites where the new goroutines block.
func goroutineLeak(fs *facts.Facts, th *Thresholds) outcome {
	gl := &th.GoroutineLeak
	proof := fs.Goroutine.Proof
	s := &fs.Goroutines
	if s.Empty() && proof == nil {
		return cannot(KindGoroutineLeak, WhyNeverMeasured, 0)
	}
	var g growth
	census, censusOf := censusRose(fs, gl)
	spins := gl.SpinShare > 0 && fs.Goroutine.Spinning >= gl.SpinShare
	if !s.Empty() {
		g = judgeWitnessed(fs.Goroutine.Floor, gl.Limits, 1, &th.Trend, witness{census: census, spins: spins})
	}
	if proof == nil && !g.judged {
		if fs.Goroutine.Single != nil && s.Len() <= 1 {
			if v, ok := pileUp(fs, th, *fs.Goroutine.Single, fs.Goroutine.SingleSites, fs.Goroutine.SingleErr); ok {
				return outcome{verdicts: []Verdict{v}}
			}
			return outcome{unjudged: &Unjudged{Kind: KindGoroutineLeak, Why: WhyOneSnapshot, Value: gl.PileUpShare, N: gl.PileUpCount}}
		}
		if v, ok := goroutineBurst(fs, th, g); ok { // profiles too close together for a trend
			return outcome{verdicts: []Verdict{v}}
		}
		if gr := &fs.Goroutine; gr.Last != nil && s.Span() < gl.Limits.MinSpan { // the last of them, as a snapshot
			if v, ok := pileUp(fs, th, *gr.Last, gr.LastSites, gr.LastErr); ok {
				return outcome{verdicts: []Verdict{v}}
			}
		}
		return outcome{unjudged: &Unjudged{Kind: KindGoroutineLeak, Why: WhyTooFew, WatchMoreSeconds: g.watchMore.Seconds(), N: s.Len(), Span: s.Span(), Need: gl.Limits.MinSpan}}
	}
	if proof == nil && g.conf == "" {
		if tail := endUnseen(fs, s); tail > 0 {
			return outcome{unjudged: &Unjudged{Kind: KindGoroutineLeak, Why: WhyEndUnseen, N: s.Len(), Span: s.Span(), Value: tail.Seconds()}}
		}
		return outcome{}
	}
	var o outcome
	c := &GoroutineLeakCase{Src: s.Src, Shutdown: fs.Goroutine.Shutdown}
	v := Verdict{Kind: KindGoroutineLeak, Severity: Warning, Confidence: g.conf, WatchMoreSeconds: g.watchMore.Seconds(), Case: c}
	perMin, added := 0.0, 0.0
	if g.conf != "" {
		r := g.rise(&th.Trend)
		c.Rise = &r
		if g.conf == Confirmed && !th.Trend.crosses(g.n, g.tau, g.p) {
			c.ByCensus, c.CensusOf = len(census), censusOf
		}
		if g.spun {
			c.Spinning = fs.Goroutine.Spinning
		}
		perMin, added = g.perMinute(), g.last-g.first
		v.Start, v.End = s.First().T, s.Last().T
	}
	if proof != nil {
		c.Proof = addProof(&v, proof, g, gl, &th.Culprits, &o)
	}
	if n, ok := pinnedStacks(fs, added); ok {
		c.PinnedStacks = n
	}
	if v.Confidence == Confirmed && perMin > gl.CriticalPerMinute {
		v.Severity = Critical
	}
	if proof == nil || len(v.Culprits) == 0 {
		c.Blame = blameGoroutines(fs, &v, c.Proof == nil || c.Proof.Leaked == 0, &th.Culprits, &o)
	}
	if m := fs.Goroutine.Made; m != nil {
		c.Made = m
		v.Culprits = keepCulprits(append(makers(m), v.Culprits...), &th.Culprits)
	}
	if len(v.Culprits) == 0 && (c.Blame == nil || c.Blame.Top == nil) && (c.Proof == nil || c.Proof.Top == nil) {
		c.Unnamed, c.Stacks = true, goroutineProfiles(fs)
		if gr := &fs.Goroutine; gr.Single != nil { // one profile: its pile-up, if it has one
			if pv, ok := pileUp(fs, th, *gr.Single, gr.SingleSites, gr.SingleErr); ok {
				c.OnlyProfile, c.Unnamed = pv.Case.(*PileUpCase), false
				v.Culprits, v.Profiles = pv.Culprits, pv.Profiles
			}
		}
	}
	o.verdicts = append(o.verdicts, v)
	return o
}

// censusRose returns the census that witnesses the count's rise (GoroutineLeak.CensusProfiles),
// nil when none does, and the start function it counted ("" for the site's): the site that
// grew most, or every goroutine started in its start function (goroutines that run are caught
// at a different line in each profile), holds more goroutines in each periodic goroutine
// profile than in the one before, and made at least CensusShare of the count's growth.
func censusRose(fs *facts.Facts, gl *GoroutineLeak) ([]facts.Point, string) {
	fl := fs.Goroutine.Floor
	if gl.CensusProfiles <= 0 || len(fl) < 2 {
		return nil, ""
	}
	rose := fl[len(fl)-1].V - fl[0].V
	witnesses := func(c []facts.Point) bool {
		if len(c) < gl.CensusProfiles {
			return false
		}
		for i := 1; i < len(c); i++ {
			if c[i].V <= c[i-1].V {
				return false
			}
		}
		return rose > 0 && c[len(c)-1].V-c[0].V >= gl.CensusShare*rose
	}
	if gr := &fs.Goroutine; witnesses(gr.Census) {
		return gr.Census, ""
	} else if witnesses(gr.Started) && len(gr.Growth) > 0 {
		return gr.Started, gr.Growth[0].Site.Start()
	}
	return nil, ""
}

// goroutineProfiles is how many goroutine profiles the session holds.
func goroutineProfiles(fs *facts.Facts) int {
	switch gr := &fs.Goroutine; {
	case gr.GrowthPair:
		return 2
	case gr.Single != nil:
		return 1
	}
	return 0
}

// makers are the program's functions behind a library's goroutines, as culprits: their
// share is of what was retained through them, or allocated when nothing retained was sampled.
func makers(m *facts.Made) []Culprit {
	var held, alloc int64
	for _, mk := range m.Makers {
		held += mk.Held
		alloc += mk.Allocated
	}
	var out []Culprit
	for _, mk := range m.Makers {
		c := Culprit{Function: mk.Site.Function, File: mk.Site.File, Line: mk.Site.Line, Bytes: mk.Held, Stack: mk.Stack, Own: true}
		if held > 0 {
			c.Share = float64(mk.Held) / float64(held)
		} else {
			c.Bytes, c.Share = mk.Allocated, float64(mk.Allocated)/float64(max(alloc, 1))
		}
		out = append(out, c)
	}
	return out
}

// pinnedStacks estimates the stack memory of n more goroutines, from the latest stacks total.
func pinnedStacks(fs *facts.Facts, n float64) (float64, bool) {
	g := fs.Goroutines.Last().V
	st := fs.Stacks.Last().V
	if n <= 0 || g <= 0 || st <= 0 {
		return 0, false
	}
	return st / g * n, true
}

// addProof makes the verdict a proved leak and names the leaked goroutines' sites.
func addProof(v *Verdict, p *facts.LeakProof, g growth, gl *GoroutineLeak, th *Culprits, o *outcome) *Proof {
	v.Confidence, v.WatchMoreSeconds = Confirmed, 0
	if p.Leaked < gl.ProvenWarn && (p.Readings < 2 || p.Leaked <= p.First) && g.conf != Confirmed {
		v.Severity = Info // a handful of leaked goroutines, not growing: a bug, not yet a memory problem
	}
	pr := &Proof{Leaked: p.Leaked}
	if g.conf == "" {
		v.Start, v.End = p.At.T, p.At.T
	}
	if !p.HasSnap {
		return pr
	}
	if p.SitesErr != nil {
		o.notes = append(o.notes, Note{Kind: KindGoroutineLeak, What: NoteProfileError, Err: p.SitesErr})
		return pr
	}
	pr.Snap = p.Snap.Path
	var total int
	for _, s := range p.Sites {
		total += s.Count
	}
	for i, s := range p.Sites {
		v.Culprits = append(v.Culprits, Culprit{
			Function: s.Culprit.Function, File: s.Culprit.File, Line: s.Culprit.Line,
			Count: int64(s.Count), Share: float64(s.Count) / math.Max(float64(total), 1), Stack: s.Stack, Own: s.Culprit.Own,
		})
		if i == 0 {
			pr.Top = &p.Sites[0]
		}
	}
	v.Culprits = keepCulprits(v.Culprits, th)
	v.Profiles = []string{p.Snap.Path}
	return pr
}

// blameGoroutines names the sites whose goroutines grew between the first and last goroutine
// snapshots; the largest names the verdict when it is a confirmed leak no proof named
// (unproved).
func blameGoroutines(fs *facts.Facts, v *Verdict, unproved bool, th *Culprits, o *outcome) *Blame {
	gr := &fs.Goroutine
	if !gr.GrowthPair {
		return nil
	}
	b := &Blame{Old: gr.Old.Path, New: gr.New.Path}
	if gr.GrowthErr != nil {
		o.notes = append(o.notes, Note{Kind: KindGoroutineLeak, What: NoteProfileError, Err: gr.GrowthErr})
	}
	var total int
	for _, g := range gr.Growth {
		total += g.Delta
	}
	for i, g := range gr.Growth {
		v.Culprits = append(v.Culprits, Culprit{
			Function: g.Site.Culprit.Function, File: g.Site.Culprit.File, Line: g.Site.Culprit.Line,
			Count: int64(g.Delta), Share: float64(g.Delta) / math.Max(float64(total), 1),
			Stack: g.Site.Stack, Own: g.Site.Culprit.Own,
		})
		if i == 0 {
			b.Top, b.Delta = &gr.Growth[0].Site, g.Delta
			b.Titled = v.Confidence == Confirmed && unproved
		}
	}
	v.Culprits = keepCulprits(v.Culprits, th)
	v.Profiles = []string{b.Old, b.New}
	return b
}

// WaitState names what a group waits on, from its state or its runtime frames: "running"
// for goroutines that were not parked (they spin).
func WaitState(g facts.StackGroup) string {
	if g.State != "" {
		return g.State
	}
	if facts.Running(g.Stack) {
		return "running"
	}
	for _, fr := range g.Stack {
		switch {
		case strings.HasPrefix(fr, "runtime.chansend"):
			return "chan send"
		case strings.HasPrefix(fr, "runtime.chanrecv"):
			return "chan receive"
		case fr == "runtime.selectgo" || fr == "runtime.block":
			return "select"
		case strings.Contains(fr, "runtime_pollWait") || fr == "runtime.netpollblock":
			return "IO wait"
		case strings.Contains(fr, "SemacquireMutex") || strings.Contains(fr, "(*Mutex).Lock") || strings.Contains(fr, "(*RWMutex)"):
			return "mutex wait"
		case strings.Contains(fr, "(*WaitGroup).Wait") || strings.Contains(fr, "runtime_Semacquire"):
			return "semaphore wait"
		case strings.Contains(fr, "(*Cond).Wait"):
			return "sync.Cond wait"
		case fr == "time.Sleep":
			return "sleep"
		}
	}
	return "a wait"
}
