package diagnose

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/memdoctor/memdoctor/evidence"
)

// heapSnapshot writes a heap profile whose inuse_space (and alloc_space) holds the given bytes
// per function, and returns its snapshot.
func heapSnapshot(t *testing.T, dir string, at time.Time, inuse map[string]int64) evidence.Snapshot {
	t.Helper()
	rows := map[string][2]int64{}
	for fn, v := range inuse {
		rows[fn] = [2]int64{v, v}
	}
	return profileSnapshot(t, dir, at, rows)
}

// profileSnapshot writes a heap profile with the given alloc_space and inuse_space per stack
// (frames leaf first, separated by ";"), and returns its snapshot.
func profileSnapshot(t *testing.T, dir string, at time.Time, rows map[string][2]int64) evidence.Snapshot {
	t.Helper()
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"},
			{Type: "inuse_objects", Unit: "count"}, {Type: "inuse_space", Unit: "bytes"}},
		PeriodType: &profile.ValueType{Type: "space", Unit: "bytes"}, Period: 512 << 10,
		TimeNanos: at.UnixNano(),
	}
	fns := map[string]*profile.Function{}
	for stack, v := range rows {
		var locs []*profile.Location
		for _, name := range strings.Split(stack, ";") {
			f, ok := fns[name]
			if !ok {
				f = &profile.Function{ID: uint64(len(fns) + 1), Name: name, SystemName: name, Filename: "/src/svc/" + name + ".go"}
				fns[name] = f
				p.Function = append(p.Function, f)
			}
			l := &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: f, Line: 10}}}
			p.Location = append(p.Location, l)
			locs = append(locs, l)
		}
		p.Sample = append(p.Sample, &profile.Sample{Location: locs, Value: []int64{v[0] / 1024, v[0], v[1] / 1024, v[1]}})
	}
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "heap-"+at.Format("150405")+".pb.gz")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return evidence.Snapshot{Kind: "heap", T: at, Path: path}
}

// heapEvidence is n heap snapshots 10 s apart, each holding what rows(i) gives by site, and
// the live heap read from src with each (live(i) bytes); finished.
func heapEvidence(t *testing.T, mode string, src evidence.Source, n int, rows func(i int) map[string]int64, live func(i int) float64) *evidence.Evidence {
	t.Helper()
	dir := t.TempDir()
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	ev := evidence.New(mode, evidence.Target{}, evidence.Options{})
	g := evidence.NewGauge(src, 0)
	for i := range n {
		at := t0.Add(time.Duration(i) * 10 * time.Second)
		ev.AddSnapshot(heapSnapshot(t, dir, at, rows(i)))
		g.Add(at, live(i))
	}
	ev.Live = g.Series()
	ev.Finish(evidence.Options{})
	return ev
}

// A leak under bursts the GC runs during: every live-heap reading holds a burst's 150 MiB
// buffer or not, so the live heap's total swings and proves nothing; the map that holds the
// leak grows in every heap profile. The site is the finding, confirmed, and named first.
func TestSiteLeakUnderBursts(t *testing.T) {
	const mib = 1 << 20
	leaked := func(i int) int64 { return int64(i) * 25 * mib }
	burst := func(i int) int64 {
		if i%2 == 1 {
			return 150 * mib // the GC ran while a burst's buffer was live
		}
		return 0
	}
	// The live heap's readings: the burst makes them swing more than the leak grows.
	ev := heapEvidence(t, "watch", evidence.SourceRuntimeMetrics, 9, func(i int) map[string]int64 {
		return map[string]int64{
			"example.com/svc/devices.(*Sessions).open": leaked(i) + 1,
			"example.com/svc/imports.inflateWhole":     burst(i) + 1,
			"example.com/svc/rules.load":               20 * mib,
		}
	}, func(i int) float64 { return float64(20*mib + leaked(i) + burst(i)) })
	out := judgeKind(ev, KindHeapLeak)
	if len(out.findings) != 1 {
		t.Fatalf("want one heap-leak finding, got %+v (not judged %+v)", out.findings, out.notJudged)
	}
	f := out.findings[0]
	if f.Confidence != Confirmed || f.Severity.Rank() < Warning.Rank() {
		t.Errorf("heap-leak is %s/%s, want a confirmed warning: %s", f.Confidence, f.Severity, f.Title)
	}
	if len(f.Culprits) == 0 || f.Culprits[0].Function != "example.com/svc/devices.(*Sessions).open" {
		t.Errorf("culprits %+v: want the growing map first", f.Culprits)
	}
	if g := f.Evidence["growth_bytes"]; g < 150*mib {
		t.Errorf("growth %v: want the site's 200 MiB", g)
	}
}

// A site that fills and stays (a cache warming up, churning entries once full, so that each
// cycle reads it a little differently) is no leak, site by site either.
func TestSiteLeakPlateau(t *testing.T) {
	const mib = 1 << 20
	cache := func(i int) int64 { return int64(min(i, 3))*40*mib + int64(i%3)*300<<10 } // evictions: a few hundred KiB either way
	ev := heapEvidence(t, "watch", evidence.SourceRuntimeMetrics, 12, func(i int) map[string]int64 {
		return map[string]int64{"example.com/svc/cache.(*LRU).add": cache(i) + 1, "example.com/svc/rules.load": 20 * mib}
	}, func(i int) float64 { return float64(20*mib + cache(i)) })
	if out := judgeKind(ev, KindHeapLeak); len(out.findings) > 0 {
		t.Errorf("a cache that filled in 30 s and stayed for 80 s: %s (%s)", out.findings[0].Title, out.findings[0].Confidence)
	}
}

// A spike only heap profiles saw: a snapshot taken while a burst's buffer was live, between
// snapshots at the floor. What the spike held is what grew in use from the floor to that
// snapshot; the snapshots after it say nothing about it (its allocation is already behind
// them), so the culprit must come from the one that saw it high.
func TestSpikeCulpritFromTheSnapshotThatSawIt(t *testing.T) {
	const mib = 1 << 20
	burst := func(i int) int64 {
		if i == 2 || i == 5 {
			return 45 * mib // the profile was taken while an import's whole body was live
		}
		return 0
	}
	ev := heapEvidence(t, "profiles", evidence.SourceHeapProfile, 7, func(i int) map[string]int64 {
		return map[string]int64{
			"example.com/svc/imports.(*service).handleImport": burst(i) + 1,
			"example.com/svc/rules.load":                      10 * mib,
			"example.com/svc/conns.(*pool).get":               int64(i%3) * mib,
		}
	}, func(i int) float64 { return float64(11*mib + burst(i)) })
	out := judgeKind(ev, KindTransientSpike)
	if len(out.findings) != 1 {
		t.Fatalf("want one transient-spike finding, got %+v (not judged %+v)", out.findings, out.notJudged)
	}
	f := out.findings[0]
	if len(f.Culprits) == 0 || f.Culprits[0].Function != "example.com/svc/imports.(*service).handleImport" {
		t.Fatalf("culprits %+v: want the import's handler first", f.Culprits)
	}
	if f.Culprits[0].Share < 0.9 {
		t.Errorf("the handler's share is %.2f: the spike is all its buffer", f.Culprits[0].Share)
	}
}

// A live heap that does not grow: no finding, and the diagnosis says how slow a leak could be
// and not show: the rule's effect (4 MiB, or 10% of a larger heap) over the window.
func TestHeapLeakStatesItsDetectionLimit(t *testing.T) {
	for _, tc := range []struct {
		live float64 // MiB
		want float64 // MiB per minute over the 60 s the readings span
	}{
		{20, 4},   // 4 MiB is more than 10% of 20 MiB
		{200, 20}, // 10% of 200 MiB
	} {
		lives := make([]float64, 31)
		for i := range lives {
			lives[i] = tc.live + float64(i%3)*0.1
		}
		t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
		ev := &evidence.Evidence{Start: t0, End: t0.Add(time.Duration(len(lives)) * 2 * time.Second)}
		for i, l := range lives {
			ev.Live.Points = append(ev.Live.Points, evidence.Point{T: t0.Add(time.Duration(i) * 2 * time.Second), V: l * (1 << 20), Src: evidence.SourceGCTrace})
		}
		ev.Live.Src = evidence.SourceGCTrace
		out := judgeKind(ev, KindHeapLeak)
		if len(out.findings) != 0 {
			t.Fatalf("live %v MiB, flat: findings %+v", tc.live, out.findings)
		}
		if len(out.limits) != 1 || out.limits[0].Kind != KindHeapLeak {
			t.Fatalf("live %v MiB: limits %+v, want heap-leak's", tc.live, out.limits)
		}
		// The floor's lows span a little less than the readings: up to a quarter more per minute.
		if got := out.limits[0].PerMinute / (1 << 20); got < 0.99*tc.want || got > 1.25*tc.want {
			t.Errorf("live %v MiB: limit %.2f MiB/min, want %.0f to %.0f", tc.live, got, tc.want, 1.25*tc.want)
		}
	}
}

// The live heap's own readings (heap profiles, eight of them) stay flat while the GC's goal,
// read with each MemStats sample, has lows that climb (cycles that ran inside bursts): the two
// measures of one quantity disagree, and the goal alone does not confirm a leak.
func TestGoalDoesNotOverruleFlatLiveReadings(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	ev := &evidence.Evidence{Start: t0, Pacer: evidence.Pacer{GOGC: 100}}
	const mib = 1 << 20
	for i := range 9 {
		at := t0.Add(time.Duration(i) * 20 * time.Second)
		ev.Live.Points = append(ev.Live.Points, evidence.Point{T: at, V: float64(12*mib + i%2*mib), Src: evidence.SourceHeapProfile})
	}
	ev.Live.Src = evidence.SourceHeapProfile
	for i := range 60 {
		at := t0.Add(time.Duration(i) * 3 * time.Second)
		ev.HeapGoal.Points = append(ev.HeapGoal.Points, evidence.Point{T: at, V: float64(24*mib + i*mib/2), Src: evidence.SourceMemStats})
	}
	ev.HeapGoal.Src = evidence.SourceMemStats
	ev.End = t0.Add(180 * time.Second)
	out := judgeKind(ev, KindHeapLeak)
	for _, f := range out.findings {
		if f.Confidence == Confirmed {
			t.Errorf("a confirmed %s from the goal alone: %s", f.Kind, f.Title)
		}
	}
}
