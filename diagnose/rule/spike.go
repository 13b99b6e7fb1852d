package rule

import (
	"math"
	"sort"

	"github.com/memdoctor/memdoctor/facts"
)

// SpikeCase is bursts of short-lived allocation that lift memory far above its floor.
type SpikeCase struct {
	Spikes []facts.Spike
	// Peak is the highest spike; PeakHeap the most heap in use seen in it.
	Peak     facts.Spike
	PeakHeap float64
	// Complete counts the spikes that came back down.
	Complete int
	// Heights, Durations and Readings are the spikes' medians.
	Heights, Durations, Readings float64
	// Window is the window's length in seconds; Budget the memory budget (0 = unknown).
	Window float64
	Budget uint64
	// Pair is the snapshots around the largest spike the profiles explain (nil when none);
	// Explained the program's excess allocation between the snapshots around the spikes as a
	// share of their heights, and Shown whether every pair's later snapshot is known to show
	// it. Observer is what the observer's stacks allocated there (profilers reading the
	// process: its pprof handlers, runtime/pprof, memdoctor's agent), as a share of the same
	// heights: never the program's.
	Pair      []facts.Snapshot
	Explained float64
	Observer  float64
	Shown     bool
	// Unexplained is true when Explained is below Spike.MinExplained.
	Unexplained bool
	// ByObserver is true when the observer's allocation explains the spikes better than the
	// program's (Observer at least Spike.MinExplained and more than Explained): the spikes
	// are the cost of reading the process (a GC that runs while a profile is written counts
	// its records live), not a burst of the program's.
	ByObserver bool
	// OverBudget is true when the spike's heap alone reaches Spike.CriticalOfBudget of the
	// budget.
	OverBudget bool
	Assists    *facts.Assists
	// InFlight is set when the spikes are bursts a heap profile caught in flight at every GC
	// (inflight.go): the live heap showed none.
	InFlight *facts.InFlight
}

// transientSpike reports bursts of short-lived allocation that lift memory far above the
// floor, and names what was allocated between the heap snapshots around each burst.
func transientSpike(fs *facts.Facts, th *Thresholds) outcome {
	sp := &th.Spike
	sd := fs.SpikeSeries
	spikes := fs.Spikes
	// Bursts in flight at every GC (inflight.go), when the live heap showed no spike that came
	// back down, or only above a floor that itself held a burst: the GC ran inside the
	// bursts, so its readings never showed the floor.
	// What a GC caught of a burst is the least it reached: from readings too sparse to see
	// bursts, only what already makes a warning is said.
	var inFlight *facts.InFlight
	if b := inFlightBursts(fs); len(b) > 0 && !floorSeen(spikes, b[0]) {
		if in := inFlightSpikes(b[0]); len(in) > 0 && (sd.Step < sp.SparseStep || len(spikes) > 0 || warns(highest(in), sp)) {
			inFlight, spikes = b[0], in
		}
	}
	if len(sd.Points) < 4 && len(spikes) == 0 {
		return outcome{unjudged: &Unjudged{Kind: KindTransientSpike, Why: WhyTooFew, N: len(sd.Points)}}
	}
	if len(spikes) == 0 {
		if sd.Step >= sp.SparseStep {
			return outcome{unjudged: &Unjudged{Kind: KindTransientSpike, Why: WhyTooSparse, Span: sd.Step}}
		}
		return outcome{}
	}
	var heights, durations, readings []float64
	peak := spikes[0]
	complete := 0
	for _, s := range spikes {
		heights = append(heights, s.Height())
		durations = append(durations, s.Duration().Seconds())
		readings = append(readings, float64(s.Readings))
		if s.Height() > peak.Height() {
			peak = s
		}
		if !s.InProgress {
			complete++
		}
	}
	c := &SpikeCase{
		Spikes: spikes, Peak: peak, PeakHeap: math.Max(peak.PeakHeap, peak.PeakLive), Complete: complete,
		Heights: facts.Median(heights), Durations: facts.Median(durations), Readings: facts.Median(readings),
		Window: fs.Seconds(), Budget: fs.Budget, Assists: fs.Assists, InFlight: inFlight,
	}
	v := Verdict{Kind: KindTransientSpike, Severity: Info, Confidence: Confirmed, Start: peak.Start, End: peak.End, Case: c}
	if complete == 0 {
		// Still up when the window ends: whether the heap comes back is what a GC after the
		// burst tells.
		v.Confidence = Suspected
		v.WatchMoreSeconds = math.Max(30, 2*peak.To.Sub(peak.From).Seconds())
		v.Waits = &GCWait{}
	}
	if warns(peak, sp) {
		v.Severity = Warning
	}
	if fs.Budget > 0 && c.PeakHeap >= sp.CriticalOfBudget*float64(fs.Budget) {
		v.Severity, c.OverBudget = Critical, true
	}
	var o outcome
	if inFlight != nil {
		v.Culprits = []Culprit{inFlightCulprit(inFlight)}
		for k := 1; k < len(inFlight.At); k++ {
			if inFlight.Held[k].T.Equal(peak.Start) {
				c.Pair = []facts.Snapshot{inFlight.At[k-1], inFlight.At[k]}
			}
		}
		if c.Pair != nil {
			v.Profiles = []string{c.Pair[0].Path, c.Pair[1].Path}
		}
		o.verdicts = append(o.verdicts, v)
		return o
	}
	var culprits []Culprit
	culprits, c.Pair, c.Explained, c.Observer, c.Shown = spikeCulprits(fs, &th.Culprits, &o)
	v.Culprits = culprits
	if b := inFlightBursts(fs); c.Pair == nil && len(b) > 0 {
		// No profiles around the spikes the live heap showed (the first came before any), but
		// the later bursts were caught in flight at the GCs the profiles saw: their site is
		// the spikes' culprit.
		v.Culprits = []Culprit{inFlightCulprit(b[0])}
		c.Pair, c.Explained, c.Shown = inFlightPair(b[0]), 1, true
		v.Profiles = []string{c.Pair[0].Path, c.Pair[1].Path}
		o.verdicts = append(o.verdicts, v)
		return o
	}
	if c.Pair != nil {
		weighPair(&v, c, sp)
	} else {
		o.notes = append(o.notes, Note{Kind: KindTransientSpike, What: NoteNoProfilePair})
	}
	o.verdicts = append(o.verdicts, v)
	return o
}

// weighPair judges what the allocation between the snapshots around the spikes explains of
// them (c.Pair is set): the verdict is info when the program's allocation is a small part of
// their height (no burst of its allocation to blame: the bumps are the ordinary swing of a
// busy heap) or the observer's explains them better (what profilers reading it made it
// allocate).
func weighPair(v *Verdict, c *SpikeCase, sp *Spike) {
	c.Unexplained = c.Explained < sp.MinExplained
	c.ByObserver = c.Observer >= sp.MinExplained && c.Observer > c.Explained
	if c.Unexplained && c.Shown || c.ByObserver {
		v.Severity = Info
	}
	v.Profiles = []string{c.Pair[0].Path, c.Pair[1].Path}
}

// spikeCulprits sums, over the spikes the profiles bracket, what was allocated between the
// snapshots around each, less what the program allocates anyway in that time (each site's
// least rate between periodic snapshots), or what the spike held when a snapshot saw it up.
// What the observer's stacks allocated (culprit.Observer: profilers reading the process) is
// summed apart, never the program's. It returns the pair of the largest spike it could
// explain, the program's excess allocation and the observer's as shares of the spikes'
// heights, and whether every pair's later snapshot is known to show the spike's allocation
// (two GC cycles after it).
func spikeCulprits(fs *facts.Facts, th *Culprits, o *outcome) (cs []Culprit, pair []facts.Snapshot, explained, observer float64, shown bool) {
	if len(fs.Heaps) < 2 {
		return nil, nil, 0, 0, false
	}
	shown = true
	background := fs.Background
	excess := map[string]*Culprit{}
	var total, observed float64
	var bestPair []facts.Snapshot
	var bestHeight, heights float64
	for _, a := range fs.SpikeAllocs {
		s, held := a.Spike, a.Held
		shown = shown && a.Shown
		if a.Err != nil {
			o.notes = append(o.notes, Note{Kind: KindTransientSpike, What: NoteProfileError, Err: a.Err})
			continue
		}
		dt := a.After.T.Sub(a.Before.T).Seconds()
		heights += s.Height()
		obs := float64(a.Diff.Observer)
		if !held {
			obs -= fs.ObserverBackground * dt
		}
		observed += math.Max(obs, 0)
		for _, row := range a.Diff.ByFunction {
			x := float64(row.Delta - row.Observer)
			if !held {
				x -= background[row.Site.Function] * dt
			}
			if x <= 0 {
				continue
			}
			c, ok := excess[row.Site.Function]
			if !ok {
				c = &Culprit{Function: row.Site.Function, File: row.Site.File, Line: row.Site.Line, Stack: row.Stack, Own: row.Site.Own}
				excess[row.Site.Function] = c
			}
			c.Bytes += int64(x)
			total += x
		}
		if s.Height() > bestHeight {
			bestHeight, bestPair = s.Height(), []facts.Snapshot{a.Before, a.After}
		}
	}
	out := make([]Culprit, 0, len(excess))
	for _, c := range excess {
		c.Share = float64(c.Bytes) / math.Max(total, 1)
		out = append(out, *c)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Bytes != out[j].Bytes {
			return out[i].Bytes > out[j].Bytes
		}
		return out[i].Function < out[j].Function
	})
	h := math.Max(heights, 1)
	return keepCulprits(out, th), bestPair, total / h, observed / h, shown
}

// warns reports a spike high enough for a warning.
func warns(s facts.Spike, sp *Spike) bool {
	return s.Height() >= sp.WarnHeight || s.Height() >= 2*s.Baseline && s.Height() >= sp.WarnDoubled
}

// highest is the highest of spikes (at least one).
func highest(spikes []facts.Spike) facts.Spike {
	top := spikes[0]
	for _, s := range spikes[1:] {
		if s.Height() > top.Height() {
			top = s
		}
	}
	return top
}
