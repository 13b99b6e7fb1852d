package compare

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"

	"github.com/memdoctor/memdoctor/culprit"
	"github.com/memdoctor/memdoctor/evidence"
)

// Culprits is the difference between the heap in use at the end of each session, by function
// of the program's own code: what the change made the program hold more and less of.
type Culprits struct {
	Type        string `json:"type"` // inuse_space
	Unit        string `json:"unit"`
	OldSnapshot string `json:"old_snapshot"`
	NewSnapshot string `json:"new_snapshot"`
	OldTotal    int64  `json:"old_total"`
	NewTotal    int64  `json:"new_total"`
	// Grew and Shrank are the functions that grew and shrank most, largest first, beyond what
	// the heap profiler's sampling explains.
	Grew     []culprit.Delta `json:"grew"`
	Shrank   []culprit.Delta `json:"shrank"`
	Warnings []string        `json:"warnings,omitempty"`
}

// diffCulprits diffs the last periodic heap snapshot of each session (inuse_space: what was
// live at the last GC before it). Sessions without heap snapshots have none: a note says so.
func diffCulprits(oldS, newS Side, top int, notes []string) (*Culprits, []string) {
	os, ok1 := lastHeap(oldS.Ev)
	ns, ok2 := lastHeap(newS.Ev)
	if !ok1 || !ok2 {
		return nil, append(notes, "no heap profile diff: a session has no heap snapshot (no pprof endpoint or agent)")
	}
	op, err := oldS.Ev.Profile(os)
	if err != nil {
		return nil, append(notes, fmt.Sprintf("no heap profile diff: OLD's %s: %v", filepath.Base(os.Path), err))
	}
	np, err := newS.Ev.Profile(ns)
	if err != nil {
		return nil, append(notes, fmt.Sprintf("no heap profile diff: NEW's %s: %v", filepath.Base(ns.Path), err))
	}
	mod := newS.Ev.Target.MainModule
	if mod == "" {
		mod = oldS.Ev.Target.MainModule
	}
	d, err := culprit.Diff(op, np, "inuse_space", culprit.Options{MainModule: mod})
	if err != nil {
		return nil, append(notes, fmt.Sprintf("no heap profile diff: %v", err))
	}
	c := &Culprits{
		Type: d.Type, Unit: d.Unit, OldSnapshot: os.Path, NewSnapshot: ns.Path,
		OldTotal: d.OldTotal, NewTotal: d.NewTotal, Grew: []culprit.Delta{}, Shrank: []culprit.Delta{},
		Warnings: d.Warnings,
	}
	period := float64(max(op.Period, np.Period))
	for _, x := range d.ByFunction {
		if x.Delta > 0 && len(c.Grew) < top && !samplingNoise(x, d, period) {
			c.Grew = append(c.Grew, x)
		}
	}
	for _, x := range slices.Backward(d.ByFunction) {
		if x.Delta < 0 && len(c.Shrank) < top && !samplingNoise(x, d, period) {
			c.Shrank = append(c.Shrank, x)
		}
	}
	return c, notes
}

// samplingNoise reports a function's change that the heap profiler's sampling explains: less
// than 1% of the larger heap, or less than three standard deviations of the difference of two
// Poisson counts of samples (the profiler takes about one sample per period bytes, so a site
// of b bytes holds about b/period samples, give or take their square root).
func samplingNoise(x culprit.Delta, d *culprit.DiffResult, period float64) bool {
	delta := math.Abs(float64(x.Delta))
	if delta < float64(max(d.OldTotal, d.NewTotal))/100 {
		return true
	}
	return period > 0 && delta < 3*math.Sqrt(period*float64(abs(x.Old)+abs(x.New)))
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

func lastHeap(ev *evidence.Evidence) (evidence.Snapshot, bool) {
	hs := ev.PeriodicHeaps()
	if len(hs) == 0 {
		return evidence.Snapshot{}, false
	}
	return hs[len(hs)-1], true
}
