package diagnose

import (
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/session"
)

// In memory: a goroutine profile in hand, diagnosed (facts, rules and words).

// goroutineProfile is a goroutine profile: top goroutines blocked in a channel send at one
// site of the program, and rest spread over rest other sites (one each).
func goroutineProfile(top, rest int) *profile.Profile {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "goroutine", Unit: "count"}},
		PeriodType: &profile.ValueType{Type: "goroutine", Unit: "count"}, Period: 1,
	}
	fn := func(name string) *profile.Location {
		f := &profile.Function{ID: uint64(len(p.Function) + 1), Name: name, Filename: "/src/app/main.go"}
		l := &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: f, Line: 7}}}
		p.Function, p.Location = append(p.Function, f), append(p.Location, l)
		return l
	}
	park, send := fn("runtime.gopark"), fn("runtime.chansend1")
	p.Sample = append(p.Sample, &profile.Sample{Location: []*profile.Location{park, send, fn("main.backend")}, Value: []int64{int64(top)}})
	for i := range rest {
		p.Sample = append(p.Sample, &profile.Sample{Location: []*profile.Location{park, fn("main.worker" + string(rune('a'+i%26)) + string(rune('a'+i/26)))}, Value: []int64{1}})
	}
	return p
}

// TestPileUpThresholds: one goroutine profile is a suspected pile-up when one blocked site of
// the program's own code holds at least half of the goroutines and at least 100 of them;
// otherwise it is not judged, and the snapshot lists the sites.
func TestPileUpThresholds(t *testing.T) {
	at := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		top, rest int
		want      bool
	}{
		{100, 100, true},  // exactly half, exactly 100
		{99, 10, false},   // too few to matter
		{100, 101, false}, // not half
		{5000, 20, true},
		{5, 5, false}, // a small worker pool
	} {
		ev := evidence.New("profiles", evidence.Target{}, evidence.Options{})
		ev.AddProfile(evidence.Snapshot{Kind: session.KindGoroutine, T: at, Path: "g.pb.gz"}, goroutineProfile(c.top, c.rest))
		ev.Finish(evidence.Options{})
		d := Diagnose(ev, Options{})
		f := findingOfKind(d.Findings, KindGoroutineLeak)
		if got := f != nil; got != c.want {
			t.Errorf("%d at one site, %d elsewhere: pile-up %v, want %v (%+v)", c.top, c.rest, got, c.want, d.NotJudged)
			continue
		}
		if f != nil && (!f.Snapshot || f.Confidence != Suspected || f.Severity != Info || f.Culprits[0].Function != "main.backend") {
			t.Errorf("finding %+v", f)
		}
		if f == nil && (len(d.Snapshots) != 1 || d.Snapshots[0].Goroutines != c.top+c.rest) {
			t.Errorf("snapshots %+v", d.Snapshots)
		}
	}
}
