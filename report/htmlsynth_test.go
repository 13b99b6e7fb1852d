package report

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/session"
)

// synthSpec describes a synthetic session: a service with a slow leak, a sawtooth heap under
// a GC every gcEvery, a 300 MiB spike every spikeEvery, and a heap and goroutine snapshot
// every profileEvery. It stands in for long sessions (1 h, 24 h) that the lab cannot record
// within a test.
type synthSpec struct {
	start        time.Time
	duration     time.Duration
	sample       time.Duration
	gcEvery      time.Duration
	spikeEvery   time.Duration
	profileEvery time.Duration
}

const mib = 1 << 20

// synthSession writes a synthetic session into dir with the session package's own writer.
func synthSession(t testing.TB, dir string, sp synthSpec) {
	t.Helper()
	w, err := session.Create(dir, session.Manifest{
		Mode: "run", Start: sp.start, Command: []string{"./svc"},
		Target:            session.Target{PID: 4242, Name: "svc", GoVersion: "go1.26.0", MainModule: "example.com/svc", Local: true},
		MemoryBudgetBytes: 1 << 30, MemoryBudgetSource: "flag", GCTraceBase: sp.start.Add(-time.Second),
	})
	if err != nil {
		t.Fatal(err)
	}
	n := int(sp.duration / sp.sample)
	var gcN, allocTotal uint64
	var gcCPU, cpu, assist float64
	nextGC, nextProfile := sp.start, sp.start
	for i := 0; i <= n; i++ {
		now := sp.start.Add(time.Duration(i) * sp.sample)
		secs := now.Sub(sp.start).Seconds()
		live := 120*mib + 40*mib*math.Sin(secs/1800) + 2048*secs // a slow leak of 2 KiB/s
		spiking := sp.spikeEvery > 0 && now.Sub(sp.start)%sp.spikeEvery < 20*time.Second && secs > 60
		if spiking {
			live += 300 * mib
		}
		phase := math.Mod(secs, sp.gcEvery.Seconds()) / sp.gcEvery.Seconds()
		garbage := live * phase
		allocTotal += uint64(60 * mib * sp.sample.Seconds())
		cpu += 4 * sp.sample.Seconds()
		for !nextGC.After(now) {
			gcN++
			assistMs := 0.4
			if spiking {
				assistMs = 6
			}
			gcCPU += (0.2 + assistMs + 1.5 + 0.1) / 1000
			assist += assistMs / 1000
			line := fmt.Sprintf("gc %d @%.3fs 2%%: 0.10+2.0+0.05 ms clock, 0.20+%.1f/1.5/0.30+0.10 ms cpu, %d->%d->%d MB, %d MB goal, 0 MB stacks, 0 MB globals, 4 P",
				gcN, nextGC.Sub(sp.start.Add(-time.Second)).Seconds(), assistMs,
				int(2*live)>>20, int(2*live)>>20, int(live)>>20, int(2*live)>>20)
			if err := w.AppendGCTrace(line); err != nil {
				t.Fatal(err)
			}
			nextGC = nextGC.Add(sp.gcEvery)
		}
		free := 80*mib - 60*mib*phase
		g := &session.GoMem{
			Source: "runtime/metrics", HeapObjectsBytes: uint64(live + garbage), HeapUnusedBytes: 3 * mib,
			HeapFreeBytes: uint64(free), HeapReleasedBytes: 20 * mib, HeapStacksBytes: 2 * mib, MetadataBytes: 9 * mib,
			OtherBytes: 3 * mib, HeapLiveBytes: uint64(live), HeapGoalBytes: uint64(2 * live),
			AllocBytesTotal: allocTotal, GCCycles: gcN, GCTotalSeconds: gcCPU + 0.01*secs, GCIdleSeconds: 0.01 * secs,
			GCAssistSeconds: assist, CPUTotalSeconds: cpu, Goroutines: 40 + int(secs/600) + i%7, GOGC: 100, GOMAXPROCS: 4,
		}
		g.TotalBytes = g.HeapObjectsBytes + g.HeapUnusedBytes + g.HeapFreeBytes + g.HeapReleasedBytes + g.HeapStacksBytes + g.MetadataBytes + g.OtherBytes
		anon := g.RuntimeResident() + 24*mib
		smp := session.Sample{
			Time:   now,
			Proc:   &session.Proc{PID: 4242, RSSBytes: anon + 11*mib, RSSAnonBytes: anon, RSSFileBytes: 11 * mib, Threads: 12, CPUSeconds: cpu},
			Cgroup: &session.Cgroup{Version: 2, LimitBytes: 2 << 30, UsageBytes: anon + 40*mib},
			Go:     g,
		}
		if err := w.AppendSample(smp); err != nil {
			t.Fatal(err)
		}
		if sp.profileEvery > 0 && !nextProfile.After(now) {
			writeSynthProfiles(t, w, now, live, float64(allocTotal), g.Goroutines)
			nextProfile = nextProfile.Add(sp.profileEvery)
		}
	}
	end := sp.start.Add(sp.duration)
	if err := w.UpdateManifest(func(m *session.Manifest) { m.End = end }); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(session.StatusComplete, "synthetic"); err != nil {
		t.Fatal(err)
	}
}

// writeSynthProfiles stores a heap and a goroutine snapshot whose stacks carry the live heap
// and the allocations so far.
func writeSynthProfiles(t testing.TB, w *session.Writer, now time.Time, live, alloc float64, goroutines int) {
	t.Helper()
	heap := synthProfile([]string{"inuse_objects/count", "inuse_space/bytes", "alloc_objects/count", "alloc_space/bytes"}, [][]any{
		{[]int64{100, int64(live * 0.6), 1000, int64(alloc * 0.1)}, "example.com/svc/cache.(*Cache).Put:88", "example.com/svc/api.(*Server).handleSet:41", "net/http.HandlerFunc.ServeHTTP:2220"},
		{[]int64{10, int64(live * 0.3), 5000, int64(alloc * 0.7)}, "io.ReadAll:712", "example.com/svc/api.(*Server).handleImport:63", "net/http.HandlerFunc.ServeHTTP:2220"},
		{[]int64{5, int64(live * 0.1), 2000, int64(alloc * 0.2)}, "encoding/json.(*decodeState).literalStore:1020", "encoding/json.Unmarshal:108", "example.com/svc/api.(*Server).handleImport:70", "net/http.HandlerFunc.ServeHTTP:2220"},
	})
	gr := synthProfile([]string{"goroutine/count"}, [][]any{
		{[]int64{int64(goroutines - 10)}, "runtime.gopark:424", "runtime.chansend:259", "example.com/svc/fanout.query.func1:57"},
		{[]int64{10}, "runtime.gopark:424", "net/http.(*conn).serve:2100"},
	})
	for kind, p := range map[string]*profile.Profile{session.KindHeap: heap, session.KindGoroutine: gr} {
		var buf bytes.Buffer
		if err := p.Write(&buf); err != nil {
			t.Fatal(err)
		}
		if _, err := w.WriteProfile(kind, now, "", buf.Bytes()); err != nil {
			t.Fatal(err)
		}
	}
}

// synthProfile builds a profile: each sample is values then frames "function:line", leaf first.
func synthProfile(types []string, samples [][]any) *profile.Profile {
	p := &profile.Profile{PeriodType: &profile.ValueType{Type: "space", Unit: "bytes"}, Period: 524288}
	for _, ty := range types {
		typ, unit, _ := strings.Cut(ty, "/")
		p.SampleType = append(p.SampleType, &profile.ValueType{Type: typ, Unit: unit})
	}
	fns := map[string]*profile.Function{}
	locs := map[string]*profile.Location{}
	for _, s := range samples {
		smp := &profile.Sample{Value: s[0].([]int64)}
		for _, fr := range s[1:] {
			spec := fr.(string)
			l := locs[spec]
			if l == nil {
				name, line, _ := strings.Cut(spec, ":")
				var ln int64
				fmt.Sscan(line, &ln)
				f := fns[name]
				if f == nil {
					f = &profile.Function{ID: uint64(len(fns) + 1), Name: name, SystemName: name, Filename: "/src/" + name + ".go"}
					fns[name] = f
					p.Function = append(p.Function, f)
				}
				l = &profile.Location{ID: uint64(len(locs) + 1), Line: []profile.Line{{Function: f, Line: ln}}}
				locs[spec] = l
				p.Location = append(p.Location, l)
			}
			smp.Location = append(smp.Location, l)
		}
		p.Sample = append(p.Sample, smp)
	}
	return p
}

// synthFindings are findings as the rules would make them for a synthetic session: a leak
// over the whole window naming the first and last snapshots, a spike naming the snapshots
// around it, GC overhead with culprits only, and a goroutine leak with nothing to compare.
func synthFindings(s *session.Session, sp synthSpec) []diagnose.Finding {
	heaps := s.ProfilesOf(session.KindHeap, true)
	start, end := s.Window()
	fs := []diagnose.Finding{{
		Kind: diagnose.KindHeapLeak, Severity: diagnose.Critical, Title: "the live heap grows 2.0 KiB/s and never comes back",
		Detail:   "Over the session the live heap grew steadily; the growth is held by the cache.",
		Evidence: map[string]float64{"live_heap_growth_bytes_per_second": 2048, "live_heap_start_bytes": 120 * mib, "trend_p_value": 0.0001, "window_seconds": end.Sub(start).Seconds()},
		Culprits: []diagnose.Culprit{{Function: "example.com/svc/cache.(*Cache).Put", File: "/src/example.com/svc/cache/cache.go", Line: 88, Bytes: 40 * mib, Share: 0.6, Own: true,
			Stack: []string{"example.com/svc/cache.(*Cache).Put", "example.com/svc/api.(*Server).handleSet", "net/http.HandlerFunc.ServeHTTP"}}},
		Advice:    []string{"Bound the cache: evict by size or age."},
		AdviceEnv: map[string]string{"GOMEMLIMIT": "900MiB"},
		Start:     start, End: end,
	}, {
		Kind: diagnose.KindGCOverhead, Severity: diagnose.Warning, Title: "the GC takes 12% of the CPU",
		Evidence: map[string]float64{"gc_cpu_fraction": 0.12, "gc_per_second": 0.5},
		Culprits: []diagnose.Culprit{
			{Function: "example.com/svc/api.(*Server).handleImport", File: "/src/example.com/svc/api/import.go", Line: 63, Bytes: 700 * mib, Share: 0.7, Own: true,
				Stack: []string{"io.ReadAll", "example.com/svc/api.(*Server).handleImport", "net/http.HandlerFunc.ServeHTTP"}},
			{Function: "encoding/json.Unmarshal", Bytes: 200 * mib, Share: 0.2,
				Stack: []string{"encoding/json.(*decodeState).literalStore", "encoding/json.Unmarshal", "example.com/svc/api.(*Server).handleImport", "net/http.HandlerFunc.ServeHTTP"}},
		},
		Advice: []string{"Stream the import instead of reading it whole."},
	}, {
		Kind: diagnose.KindGoroutineLeak, Severity: diagnose.Info, Title: "goroutines climb by 6 an hour",
		Evidence: map[string]float64{"goroutines_start_count": 40, "goroutines_end_count": 64},
	}}
	if len(heaps) >= 2 {
		fs[0].Profiles = []string{heaps[0].Path, heaps[len(heaps)-1].Path}
	}
	// The first spike: name the snapshots around it.
	if sp.spikeEvery > 0 && len(heaps) >= 2 {
		at := start.Add(sp.spikeEvery)
		o, n := 0, len(heaps)-1
		for i, h := range heaps {
			if !h.Time.After(at) {
				o = i
			}
		}
		for i := len(heaps) - 1; i >= 0; i-- {
			if heaps[i].Time.After(at.Add(20 * time.Second)) {
				n = i
			}
		}
		fs = append(fs, diagnose.Finding{
			Kind: diagnose.KindTransientSpike, Severity: diagnose.Warning, Title: "the heap jumps by 300 MiB for 20 s",
			Evidence: map[string]float64{"spike_height_bytes": 300 * mib, "spike_duration_seconds": 20},
			Start:    at, End: at.Add(20 * time.Second),
			Profiles: []string{filepath.Base(heaps[o].Path), filepath.Base(heaps[n].Path)},
		})
	}
	return fs
}
