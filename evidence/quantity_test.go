package evidence

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/agent/breakdown"
	"github.com/memdoctor/memdoctor/gctrace"
	"github.com/memdoctor/memdoctor/session"
)

// TestTableCoversEvidence: every series of Evidence is one quantity of the table, under its
// own name, and every quantity of the table is a series of Evidence. A series added to the
// struct and not to the table (or the reverse) fails here, by name.
func TestTableCoversEvidence(t *testing.T) {
	ev := &Evidence{}
	v := reflect.ValueOf(ev).Elem()
	fields := map[string]bool{}
	for i := 0; i < v.NumField(); i++ {
		if f := v.Type().Field(i); f.Type == reflect.TypeFor[Series]() {
			fields[f.Name] = true
		}
	}
	gaps := map[string]bool{}
	for q := range quantities {
		d := &quantities[q]
		f := v.FieldByName(d.name)
		switch {
		case !f.IsValid() || f.Type() != reflect.TypeFor[Series]():
			t.Errorf("quantity %d (%s) is not a series of Evidence", q, d.name)
			continue
		case f.Addr().Interface().(*Series) != d.series(ev):
			t.Errorf("quantity %s: its series is not the field %s", d.name, d.name)
		}
		delete(fields, d.name)
		if len(d.sources) == 0 || len(slices.Compact(slices.Clone(d.sources))) != len(d.sources) {
			t.Errorf("quantity %s: sources %v", d.name, d.sources)
		}
		switch d.unit {
		case unitBytes, unitSeconds, unitCount, unitRatio:
		default:
			t.Errorf("quantity %s: unit %q", d.name, d.unit)
		}
		if g := d.gap; g != nil {
			if gaps[g.key] || g.min < 1 || g.why == nil {
				t.Errorf("quantity %s: gap %+v (a key given twice, or no reason)", d.name, *g)
			}
			gaps[g.key] = true
		}
	}
	for name := range fields {
		t.Errorf("Evidence.%s is a series the table of quantities does not describe", name)
	}
	if n := len(ev.allSeries()); n != int(nQuantities) {
		t.Errorf("allSeries lists %d series, want %d", n, nQuantities)
	}
}

// richSamples are n samples, a second apart, that carry every part a sample has, from a Go
// reading of the given source; every figure grows from one sample to the next.
func richSamples(t0 time.Time, n int, goSource string) []session.Sample {
	var out []session.Sample
	for i := range n {
		k := uint64(i + 1)
		f := float64(i + 1)
		g := &session.GoMem{
			Source: goSource, HeapObjectsBytes: 40 * mb * k, HeapUnusedBytes: mb, HeapFreeBytes: 30 * mb * k,
			HeapReleasedBytes: 5 * mb, HeapStacksBytes: 2 * mb, OSStacksBytes: mb, MetadataBytes: 3 * mb,
			OtherBytes: 4 * mb, HeapLiveBytes: 35 * mb * k, HeapGoalBytes: 90 * mb * k, StackScanBytes: 1000,
			GlobalsScanBytes: 2000, AllocBytesTotal: 500 * mb * k, AllocObjectsTotal: 7000 * k, GCCycles: 10 * k,
			GCForcedCycles: k, Goroutines: int(100 + k), GOGC: 150, GOMemLimitBytes: 1 << 30, GOMAXPROCS: 4,
		}
		g.TotalBytes = g.HeapObjectsBytes + g.HeapUnusedBytes + g.HeapFreeBytes + g.HeapReleasedBytes +
			g.HeapStacksBytes + g.OSStacksBytes + g.MetadataBytes + g.OtherBytes
		if goSource == "memstats" {
			g.GCCPUFraction = 0.01 * f
		} else {
			g.GCTotalSeconds, g.GCAssistSeconds, g.GCIdleSeconds, g.CPUTotalSeconds = 2*f, 0.5*f, 0.25*f, 40*f
		}
		out = append(out, session.Sample{
			Time: t0.Add(time.Duration(i) * time.Second),
			Proc: &session.Proc{PID: 7, RSSBytes: 200 * mb * k, RSSAnonBytes: 180 * mb * k, RSSFileBytes: 15 * mb, RSSShmemBytes: mb,
				HWMBytes: 210 * mb * k, LazyFreeBytes: 2 * mb * k, Threads: 9, CPUSeconds: 3 * f, TreeRSSBytes: 250 * mb * k, TreeProcs: 3},
			Cgroup: &session.Cgroup{Version: 2, LimitBytes: 4 << 30, UsageBytes: 300 * mb * k, WorkingSetBytes: 250 * mb, OOMKills: k},
			Go:     g,
			Pprof:  &session.PprofCounts{Goroutines: int(90 + k), GoroutineLeak: int(k), Threads: 12, HeapRecords: 40},
			Sched:  &session.Sched{RunSeconds: 5 * f, WaitSeconds: 0.5 * f, Tasks: 9},
		})
	}
	return out
}

// TestEveryQuantityRoundTrip: samples that carry every figure, and gctrace cycles, written by
// the session's writer and read back through the decoder, give every quantity of the table
// its series, from the expected source, ending at the figure the last sample wrote. A
// quantity the test does not know fails here.
func TestEveryQuantityRoundTrip(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	smps := richSamples(t0, 5, "runtime/metrics")
	m := session.Manifest{Mode: "run", Start: t0, GCTraceBase: t0.Add(-time.Second),
		Target: session.Target{PID: 7, Local: true, Started: t0.Add(-time.Second)}}
	ev := newSession(t, m, func(w *session.Writer) {
		for _, s := range smps {
			if err := w.AppendSample(s); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 4 { // @1s..@4s: t0 .. t0+3s
			w.AppendGCTrace(gcLine(i+1, float64(i+1), 10*(i+1), 12*(i+1)))
		}
	})
	last := smps[len(smps)-1]
	p, g, c, pp, sc := last.Proc, last.Go, last.Cgroup, last.Pprof, last.Sched
	at := breakdown.Compute(last.Time, p, g, 0, "")
	retained := math.Max(0, float64(at.RetainedFreeBytes)-float64(g.HeapGoalBytes-g.HeapObjectsBytes)) + float64(at.ReleasedResidentBytes)
	rm := SourceRuntimeMetrics
	want := map[quantity]struct {
		src Source
		v   float64
	}{
		qRSS: {SourceProc, float64(p.RSSBytes)}, qHWM: {SourceProc, float64(p.HWMBytes)},
		qRSSAnon: {SourceProc, float64(p.RSSAnonBytes)}, qRSSFile: {SourceProc, float64(p.RSSFileBytes + p.RSSShmemBytes)},
		qLazyFree: {SourceProc, float64(p.LazyFreeBytes)}, qTreeRSS: {SourceProc, float64(p.TreeRSSBytes)},
		qProcessCPU: {SourceProc, p.CPUSeconds}, qCgroupUsage: {SourceCgroup, float64(c.UsageBytes)},
		qLive: {rm, float64(g.HeapLiveBytes)}, qHeapInUse: {rm, float64(g.HeapObjectsBytes)},
		qHeapAtGC: {SourceGCTrace, 48 * mb}, qHeapGoal: {rm, float64(g.HeapGoalBytes)},
		qHeapFree: {rm, float64(g.HeapFreeBytes)}, qRuntimeResident: {rm, float64(g.TotalBytes - g.HeapReleasedBytes)},
		qStacks: {rm, float64(g.HeapStacksBytes + g.OSStacksBytes)}, qGoroutines: {rm, float64(g.Goroutines)},
		qLeaked: {SourcePprofIndex, float64(pp.GoroutineLeak)}, qGCCycles: {rm, float64(g.GCCycles)},
		qGCForced: {rm, float64(g.GCForcedCycles)}, qGCCPU: {rm, g.GCTotalSeconds - g.GCIdleSeconds},
		qGCAssist: {rm, g.GCAssistSeconds}, qAvailableCPU: {rm, g.CPUTotalSeconds},
		qAllocBytes: {rm, float64(g.AllocBytesTotal)}, qAllocObjects: {rm, float64(g.AllocObjectsTotal)},
		qSchedRun: {SourceProc, sc.RunSeconds}, qSchedWait: {SourceProc, sc.WaitSeconds},
		qNonGo: {rm, float64(at.NonGoBytes)}, qNonGoShare: {rm, float64(at.NonGoBytes) / float64(at.RSSBytes)},
		qRetained: {rm, retained}, qRetainedShare: {rm, retained / float64(at.RSSBytes)},
		qReleasedResident: {rm, float64(at.ReleasedResidentBytes)},
	}
	for q := range quantities {
		d := &quantities[q]
		w, ok := want[quantity(q)]
		if !ok {
			t.Errorf("quantity %s: the test does not know what the samples give it", d.name)
			continue
		}
		s := d.series(ev)
		if s.Empty() || s.Src != w.src || !slices.Contains(d.sources, s.Src) || s.Last().V != w.v {
			t.Errorf("%s: %d points from %v, last %v; want them from %v, last %v", d.name, s.Len(), s.Src, s.Last().V, w.src, w.v)
		}
	}
	if ev.TreeProcs != 3 || ev.CgroupLimit != 4<<30 || ev.OOMKills != 5 || ev.OOMKillsInWindow != 4 || !ev.LeakProfileServed {
		t.Errorf("tree procs %d, cgroup limit %d, OOM kills %d (%d in the window), leak profile served %v",
			ev.TreeProcs, ev.CgroupLimit, ev.OOMKills, ev.OOMKillsInWindow, ev.LeakProfileServed)
	}
	if pc := ev.Pacer; pc.GOGC != 150 || pc.GOMemLimit != 1<<30 || pc.GOMAXPROCS != 4 || pc.ScanBytes != 3000 || !pc.HasGoMemory {
		t.Errorf("pacer %+v", pc)
	}
	if len(ev.Gaps) != 1 || ev.Gaps[GapHeapSnaps] == "" {
		t.Errorf("gaps %v, want only the heap profiles'", ev.Gaps)
	}
}

// gcLine is a Go 1.26 gctrace line of cycle n at secs, its heap going from start to end MiB.
func gcLine(n int, secs float64, start, end int) string {
	return fmt.Sprintf("gc %d @%gs 1%%: 0.01+0.5+0.01 ms clock, 0.02+0.1/0.2/0+0.02 ms cpu, %d->%d->%d MB, %d MB goal, 0 MB stacks, 0 MB globals, 4 P",
		n, secs, start, end, start/2, 2*start)
}

// build maps samples in memory, as FromSession maps a session's (gctrace cycles first).
func build(t *testing.T, smps []session.Sample, gc []string) (*Evidence, *sessionBuild) {
	t.Helper()
	ev := &Evidence{Target: Target{Local: true, Started: smps[0].Time.Add(-time.Minute)}, profiles: newStore(0, "")}
	b := newSessionBuild(ev, Options{MaxSkew: defaultMaxSkew})
	for i, l := range gc {
		c, ok, err := gctrace.ParseLine(l)
		if !ok || err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		b.gcCycle(smps[0].Time.Add(time.Duration(i)*time.Second), c)
	}
	for i := range smps {
		b.sample(&smps[i])
	}
	b.finish()
	return ev, b
}

// read is everything a build made of its samples: every source's readings of every quantity,
// and the evidence's other figures.
func read(t *testing.T, ev *Evidence, b *sessionBuild) string {
	t.Helper()
	all := map[string]Series{}
	for q := range quantities {
		for src, bl := range b.m[q].by {
			if bl != nil {
				all[quantities[q].name+" from "+Source(src).String()] = bl.series()
			}
		}
	}
	out, err := json.Marshal(struct {
		All map[string]Series
		Ev  *Evidence
	}{all, ev})
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// notRead are the figures of a sample that no quantity and no other figure of the evidence
// takes, and why.
var notRead = map[string]string{
	"Proc.PID":                "the target's identity is the manifest's",
	"Proc.Threads":            "not a memory figure",
	"Cgroup.Version":          "how it was read, not what",
	"Cgroup.WorkingSetBytes":  "usage is the cgroup's figure the rules judge",
	"Cgroup.AnonBytes":        "the process's own anonymous memory (/proc) is split instead",
	"Cgroup.FileBytes":        "the process's own file memory (/proc) is split instead",
	"GoMem.GCPauseSeconds":    "pauses are not judged",
	"GoMem.PauseTotalSeconds": "pauses are not judged",
	"PprofCounts.Threads":     "not a memory figure",
	"PprofCounts.HeapRecords": "not a memory figure",
	"Sched.Tasks":             "how many threads were read, not what they did",
}

// TestEverySampleFigureRead: each figure a sample carries feeds a quantity of the table (or
// another figure of the evidence), or is listed in notRead with why: a figure added to the
// session's samples and forgotten here fails by name. Every reading comes from a source its
// quantity lists.
func TestEverySampleFigureRead(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	gc := []string{gcLine(1, 1, 10, 12), gcLine(2, 2, 20, 24), gcLine(3, 3, 30, 36)}
	readBy := map[string]bool{}
	for _, src := range []string{"runtime/metrics", "memstats", "prometheus", "a future source"} {
		ev, b := build(t, richSamples(t0, 4, src), gc)
		base := read(t, ev, b)
		for q := range quantities {
			for s, bl := range b.m[q].by {
				if bl != nil && !slices.Contains(quantities[q].sources, Source(s)) {
					t.Errorf("%s: %s read from %v, which its sources %v do not list", src, quantities[q].name, Source(s), quantities[q].sources)
				}
			}
		}
		for _, f := range sampleFigures() {
			smps := richSamples(t0, 4, src)
			for i := range smps {
				f.change(&smps[i])
			}
			if ev, b := build(t, smps, gc); read(t, ev, b) != base {
				readBy[f.name] = true
			}
		}
	}
	for _, f := range sampleFigures() {
		_, listed := notRead[f.name]
		switch {
		case !readBy[f.name] && !listed:
			t.Errorf("%s: no quantity reads it: give it a quantity in the table, or list it in notRead with why", f.name)
		case readBy[f.name] && listed:
			t.Errorf("%s: listed in notRead, but read", f.name)
		}
	}
}

type figure struct {
	name   string
	change func(*session.Sample)
}

// sampleFigures lists every figure of a sample's parts, each with a change of its value.
func sampleFigures() []figure {
	var out []figure
	st := reflect.TypeFor[session.Sample]()
	for i := 0; i < st.NumField(); i++ {
		part := st.Field(i)
		if part.Type.Kind() != reflect.Pointer {
			continue // the time
		}
		pt := part.Type.Elem()
		for j := 0; j < pt.NumField(); j++ {
			out = append(out, figure{pt.Name() + "." + pt.Field(j).Name, func(s *session.Sample) {
				f := reflect.ValueOf(s).Elem().Field(i).Elem().Field(j)
				switch f.Kind() {
				case reflect.Int:
					f.SetInt(f.Int()*3 + 7)
				case reflect.Uint64:
					f.SetUint(f.Uint()*3 + 7)
				case reflect.Float64:
					f.SetFloat(f.Float()*3 + 7)
				case reflect.String:
					f.SetString(f.String() + "?")
				default:
					panic("teach sampleFigures to change a " + f.Kind().String())
				}
			}})
		}
	}
	return out
}

// TestUnknownKeyNoted: a figure a newer memdoctor wrote, which no quantity reads, is said in
// the evidence's notes, by name, not dropped in silence.
func TestUnknownKeyNoted(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	ev := newSession(t, session.Manifest{Mode: "watch", Start: t0}, func(w *session.Writer) {
		w.AppendSample(procSample(t0, 100*mb, 90*mb))
		f, err := os.OpenFile(filepath.Join(w.Dir(), session.MetricsFile), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		fmt.Fprintln(f, `{"t":"2026-11-24T10:00:01Z","proc":{"rss_bytes":5,"rss_swap_bytes":7}}`)
	})
	if ev.RSS.Len() != 2 || !strings.Contains(strings.Join(ev.Notes, "\n"), "does not know (proc.rss_swap_bytes)") {
		t.Errorf("%d RSS readings, notes %q: want both readings and the unknown key named", ev.RSS.Len(), ev.Notes)
	}
}
