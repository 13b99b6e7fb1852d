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
			var pts, census []facts.Point
			for i, v := range counts {
				pts = append(pts, facts.Point{T: t0.Add(time.Duration(i) * 16 * time.Second), V: v, Src: facts.SourceHeapProfile})
			}
			off := len(counts) - len(tc.census)
			for i, v := range tc.census {
				census = append(census, facts.Point{T: pts[off+i].T, V: v})
			}
			f := &facts.Facts{Start: t0, End: pts[len(pts)-1].T.Add(time.Second), Goroutines: facts.Series{Points: pts}}
			f.Goroutine.Floor, f.Goroutine.Census = pts, census
			out := goroutineLeak(f, &Default)
			if len(out.verdicts) != 1 {
				t.Fatalf("verdicts %+v, unjudged %+v", out.verdicts, out.unjudged)
			}
			v := out.verdicts[0]
			if v.Confidence != tc.want {
				t.Errorf("confidence %s, want %s", v.Confidence, tc.want)
			}
			if v.Confidence == Suspected && v.WatchMoreSeconds <= 0 {
				t.Errorf("suspected with nothing to watch")
			}
		})
	}
}
