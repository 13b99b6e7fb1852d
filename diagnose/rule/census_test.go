package rule

import (
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/facts"
)

// TestCensusWitnessesFewCounts: four goroutine counts from profiles 16 s apart that only rose
// by 40 are confirmed when the census of the site that grew rose in every profile and made
// most of the growth; not when the site fell back in one of them (in flight, not piling up),
// nor when it made a small part of the growth (the rest spread over other sites), nor from
// three profiles. Each stays a suspicion with time to watch.
func TestCensusWitnessesFewCounts(t *testing.T) {
	counts := []float64{20, 32, 45, 60}
	for _, tc := range []struct {
		name   string
		census []float64
		want   Confidence
	}{
		{"one site rose in every profile", []float64{0, 10, 22, 35}, Confirmed},
		{"the site fell back once", []float64{0, 12, 9, 35}, Suspected},
		{"the site made a small part of the growth", []float64{0, 4, 9, 15}, Suspected},
		{"three profiles", []float64{10, 22, 35}, Suspected},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := countFacts(counts, 16*time.Second, facts.SourceHeapProfile)
			f.Goroutine.Census = atTheEnd(f.Goroutine.Floor, tc.census)
			v := oneVerdict(t, f)
			if v.Confidence != tc.want {
				t.Errorf("confidence %s, want %s", v.Confidence, tc.want)
			}
			if v.Confidence == Suspected && v.WatchMoreSeconds <= 0 {
				t.Errorf("suspected with nothing to watch")
			}
		})
	}
}

// TestStartCensusWitnessesANoisyCount: goroutines that spin are caught at another line in each
// profile, so no one site climbs through the profiles, while the count around them swings with
// the requests in flight. The goroutines started in one function (its census, Started) still
// rise in every profile: a count that, alone, crosses the boundary. The counts are spin-leak's
// profiles as recorded (lab, watched through pprof's profiles alone, 7 in a minute).
func TestStartCensusWitnessesANoisyCount(t *testing.T) {
	counts := []float64{191, 191, 267, 234, 266, 315, 345}
	for _, tc := range []struct {
		name    string
		started []float64
		want    Confidence
		of      string
	}{
		{"the start function's goroutines rose in every profile", []float64{65, 113, 160, 191, 223, 240, 287}, Confirmed, "main.follow"},
		{"they fell back once", []float64{65, 113, 160, 150, 223, 240, 287}, Suspected, ""},
		{"four profiles only", []float64{191, 223, 240, 287}, Suspected, ""},
		{"they made a small part of the growth", []float64{10, 20, 30, 40, 50, 60, 70}, Suspected, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := countFacts(counts, 10*time.Second, facts.SourceHeapProfile)
			f.Goroutine.Started = atTheEnd(f.Goroutine.Floor, tc.started)
			// The site that grew most: the spinners caught in time.Sleep, started in main.follow.
			site := facts.GoroutineGroup{}
			site.Stack = []string{"time.Sleep", "main.follow"}
			f.Goroutine.Growth = []facts.GroupDelta{{Site: site, Delta: 122}}
			v := oneVerdict(t, f)
			if v.Confidence != tc.want {
				t.Errorf("confidence %s, want %s", v.Confidence, tc.want)
			}
			if c := v.Case.(*GoroutineLeakCase); c.CensusOf != tc.of {
				t.Errorf("census of %q, want %q", c.CensusOf, tc.of)
			}
		})
	}
}

// TestSpinningGoroutinesSlowThemselves: a count that rises more slowly at the end is a
// warm-up levelling off when its goroutines wait parked, and stays suspected; when a fair
// share of them were caught running (they spin, and take the CPU from the service that makes
// them), it is a leak that slows itself, confirmed.
func TestSpinningGoroutinesSlowThemselves(t *testing.T) {
	counts := []float64{100, 130, 160, 190, 220, 245, 260, 270, 278, 285}
	for _, tc := range []struct {
		name     string
		spinning float64
		want     Confidence
	}{
		{"parked", 0, Suspected},
		{"a few caught running", 0.05, Suspected},
		{"spinning", 0.4, Confirmed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := countFacts(counts, 6*time.Second, facts.SourceRuntimeMetrics)
			f.Goroutine.Spinning = tc.spinning
			if v := oneVerdict(t, f); v.Confidence != tc.want {
				t.Errorf("confidence %s, want %s", v.Confidence, tc.want)
			}
		})
	}
}

// countFacts are the facts of a goroutine count read every step from src: its values, and
// its floor the same.
func countFacts(counts []float64, step time.Duration, src facts.Source) *facts.Facts {
	var pts []facts.Point
	for i, v := range counts {
		pts = append(pts, facts.Point{T: t0.Add(time.Duration(i) * step), V: v, Src: src})
	}
	f := &facts.Facts{Start: t0, End: pts[len(pts)-1].T.Add(time.Second), Goroutines: facts.Series{Points: pts}}
	f.Goroutine.Floor = pts
	return f
}

// atTheEnd is a census of vals at the times of the last len(vals) points.
func atTheEnd(pts []facts.Point, vals []float64) []facts.Point {
	var out []facts.Point
	off := len(pts) - len(vals)
	for i, v := range vals {
		out = append(out, facts.Point{T: pts[off+i].T, V: v})
	}
	return out
}

// oneVerdict is goroutineLeak's verdict on f, which must be one.
func oneVerdict(t *testing.T, f *facts.Facts) Verdict {
	t.Helper()
	out := goroutineLeak(f, &Default)
	if len(out.verdicts) != 1 {
		t.Fatalf("verdicts %+v, unjudged %+v", out.verdicts, out.unjudged)
	}
	return out.verdicts[0]
}
