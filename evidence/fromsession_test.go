package evidence

import (
	"bytes"
	"compress/gzip"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/memdoctor/memdoctor/session"
)

const mb = 1 << 20

// newSession writes a session with the session package's own writer: fill adds what the
// test needs; the session is opened and its evidence built.
func newSession(t *testing.T, m session.Manifest, fill func(w *session.Writer)) *Evidence {
	t.Helper()
	return newSessionOpts(t, m, Options{}, fill)
}

func newSessionOpts(t *testing.T, m session.Manifest, opts Options, fill func(w *session.Writer)) *Evidence {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "s")
	w, err := session.Create(dir, m)
	if err != nil {
		t.Fatal(err)
	}
	fill(w)
	if err := w.Close(session.StatusComplete, ""); err != nil {
		t.Fatal(err)
	}
	s, err := session.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := FromSession(s, opts)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

func procSample(at time.Time, rss, anon uint64) session.Sample {
	return session.Sample{Time: at, Proc: &session.Proc{PID: 7, RSSBytes: rss, RSSAnonBytes: anon, RSSFileBytes: rss - anon}}
}

func memstats(at time.Time, heap, sys uint64) session.Sample {
	return session.Sample{Time: at, Go: &session.GoMem{Source: "memstats", HeapObjectsBytes: heap, TotalBytes: sys, GCCycles: 1}}
}

// TestPairingOnlyClose: /proc every second, MemStats every 10 s (what watch on pprof
// records). Memory is split only at a /proc reading within 1.5 s of a Go reading; the RSS
// peak, 5 s from any Go reading, is not split, and no non-Go memory is invented there.
func TestPairingOnlyClose(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	ev := newSession(t, session.Manifest{Mode: "watch", Start: t0, Target: session.Target{Local: true}}, func(w *session.Writer) {
		for i := range 31 {
			at := t0.Add(time.Duration(i) * time.Second)
			rss := uint64(60 * mb)
			if i == 15 { // a 250 MiB burst between two Go readings
				rss = 310 * mb
			}
			w.AppendSample(procSample(at, rss, rss-10*mb))
			if i%10 == 0 {
				w.AppendSample(memstats(at.Add(200*time.Millisecond), 30*mb, 50*mb))
			}
		}
	})
	if ev.Aligned != 4 {
		t.Errorf("aligned readings = %d, want 4 (one per Go reading)", ev.Aligned)
	}
	if ev.Peak == nil || ev.Peak.RSSBytes != 310*mb {
		t.Fatalf("peak split %+v", ev.Peak)
	}
	if ev.Peak.GoSource != "" || ev.Peak.NonGoBytes != 0 || ev.PeakSkew < 4*time.Second {
		t.Errorf("the peak was split with a Go reading %v away: %+v", ev.PeakSkew, ev.Peak)
	}
	if mx, _ := ev.NonGo.Max(); mx.V > 1*mb {
		t.Errorf("non-Go memory %v invented from distant readings", mx.V)
	}
	if len(ev.Splits) != 4 {
		t.Errorf("%d splits over time, want 4", len(ev.Splits))
	}
}

// TestMemStatsGCCPU: MemStats gives the GC's share of the CPU since the process started;
// with the start time and GOMAXPROCS it becomes a count of CPU seconds, so the share over
// the window is known from outside the process.
func TestMemStatsGCCPU(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	started := t0.Add(-100 * time.Second)
	ev := newSession(t, session.Manifest{Mode: "watch", Start: t0, Target: session.Target{Local: true, Started: started, GOMAXPROCS: 2}}, func(w *session.Writer) {
		// Before the window: 1% of 2 CPUs for 100 s = 2 s of GC. In the window, 5 s more over 50 s.
		for i := range 6 {
			at := t0.Add(time.Duration(i*10) * time.Second)
			up := at.Sub(started).Seconds()
			gc := 2 + 0.1*float64(i*10)
			w.AppendSample(session.Sample{Time: at, Go: &session.GoMem{Source: "memstats", TotalBytes: 50 * mb, GCCycles: uint64(10 + i), GCCPUFraction: gc / (up * 2)}})
		}
	})
	if ev.GCCPU.Len() != 6 {
		t.Fatalf("GC CPU series has %d points", ev.GCCPU.Len())
	}
	if got := ev.GCCPU.Increase(); math.Abs(got-5) > 1e-6 {
		t.Errorf("GC CPU over the window = %v s, want 5", got)
	}
	if got := ev.AvailableCPU.Increase(); math.Abs(got-100) > 1e-6 {
		t.Errorf("available CPU = %v s, want 100 (2 CPUs x 50 s)", got)
	}
}

// TestGoroutinesFromProfiles: without metric samples, the goroutine count comes from the
// goroutine profiles; with the pprof index's counts every second, from those.
func TestGoroutinesFromProfiles(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	write := func(w *session.Writer, withIndex bool) {
		for i := range 4 {
			at := t0.Add(time.Duration(i*10) * time.Second)
			if _, err := w.WriteProfile(session.KindGoroutine, at, "", goroutineProfile(t, 100+100*i)); err != nil {
				t.Fatal(err)
			}
		}
		for i := 0; withIndex && i <= 30; i++ {
			w.AppendSample(session.Sample{Time: t0.Add(time.Duration(i) * time.Second), Pprof: &session.PprofCounts{Goroutines: 100 + 10*i, GoroutineLeak: -1}})
		}
	}
	ev := newSession(t, session.Manifest{Mode: "profiles", Start: t0}, func(w *session.Writer) { write(w, false) })
	if ev.Goroutines.Src != SourceGoroutineProfile || ev.Goroutines.Len() != 4 || ev.Goroutines.Last().V != 400 {
		t.Errorf("from profiles: src %v, %d points, last %v", ev.Goroutines.Src, ev.Goroutines.Len(), ev.Goroutines.Last().V)
	}
	ev = newSession(t, session.Manifest{Mode: "watch", Start: t0}, func(w *session.Writer) { write(w, true) })
	if ev.Goroutines.Src != SourcePprofIndex || ev.Goroutines.Len() != 31 {
		t.Errorf("with the index: src %v, %d points", ev.Goroutines.Src, ev.Goroutines.Len())
	}
	if ev.LeakProfileServed {
		t.Error("an index that says goroutineleak is not served (-1) marked it served")
	}
}

// TestUntilAndHWM: Until cuts every series as if collection had stopped; the high-water mark
// keeps a peak that no sample saw.
func TestUntilAndHWM(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	fill := func(w *session.Writer) {
		for i := range 60 {
			s := procSample(t0.Add(time.Duration(i)*time.Second), uint64(20+i)*mb, 10*mb)
			s.Proc.HWMBytes = 400 * mb
			w.AppendSample(s)
		}
	}
	ev := newSessionOpts(t, session.Manifest{Mode: "run", Start: t0}, Options{Until: t0.Add(30 * time.Second)}, fill)
	if ev.RSS.Len() != 31 || !ev.End.Equal(t0.Add(30*time.Second)) {
		t.Errorf("until: %d points, end %v", ev.RSS.Len(), ev.End)
	}
	if hwm, _ := ev.HWM.Max(); hwm.V != 400*mb {
		t.Errorf("HWM %v", hwm.V)
	}
}

// TestCorruptProfileNoted: a profile that is an HTML page, or a gzip bomb beyond the bound,
// is named once in the notes and never parsed again.
func TestCorruptProfileNoted(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	var bomb bytes.Buffer
	zw := gzip.NewWriter(&bomb)
	zw.Write(bytes.Repeat([]byte{0}, 8<<20))
	zw.Close()
	ev := newSessionOpts(t, session.Manifest{Mode: "watch", Start: t0}, Options{MaxProfileBytes: 1 << 20}, func(w *session.Writer) {
		w.WriteProfile(session.KindHeap, t0, "", []byte("<html>login</html>"))
		w.WriteProfile(session.KindHeap, t0.Add(10*time.Second), "", bomb.Bytes())
	})
	for range 3 {
		for _, s := range ev.Heaps {
			if _, err := ev.Profile(s); err == nil {
				t.Errorf("%s parsed", s.Path)
			}
		}
	}
	notes := strings.Join(ev.ProfileNotes(), "\n")
	if strings.Count(notes, "skipped profile") != 2 || !strings.Contains(notes, "decompresses to more than 1 MiB") {
		t.Errorf("notes:\n%s", notes)
	}
}

// goroutineProfile is a goroutine proto profile of n goroutines in one group.
func goroutineProfile(t *testing.T, n int) []byte {
	fn := &profile.Function{ID: 1, Name: "example.com/svc.wait", Filename: "svc.go"}
	loc := &profile.Location{ID: 1, Line: []profile.Line{{Function: fn, Line: 9}}}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "goroutine", Unit: "count"}},
		PeriodType: &profile.ValueType{Type: "goroutine", Unit: "count"}, Period: 1,
		Sample:   []*profile.Sample{{Location: []*profile.Location{loc}, Value: []int64{int64(n)}}},
		Location: []*profile.Location{loc}, Function: []*profile.Function{fn},
	}
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestGoMemLimitFromEnv: without a runtime reading of the limit (MemStats has none), the
// pacer model takes GOMEMLIMIT from the target's environment, read as the runtime reads it;
// a value the runtime refuses is noted, not guessed.
func TestGoMemLimitFromEnv(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		env  string
		want float64
		note bool
	}{
		{"", 0, false}, {"off", 0, false}, {"1536MiB", 1536 * mb, false}, {"2147483648", 2048 * mb, false},
		{"1536Mi", 0, true}, {"2G", 0, true},
	} {
		m := session.Manifest{Mode: "run", Start: t0, Target: session.Target{GOMEMLIMIT: c.env}}
		ev := newSession(t, m, func(w *session.Writer) {
			for i := range 3 {
				w.AppendSample(memstats(t0.Add(time.Duration(i)*time.Second), 10*mb, 20*mb))
			}
		})
		noted := strings.Contains(strings.Join(ev.Notes, "\n"), "GOMEMLIMIT=")
		if ev.Pacer.GOMemLimit != c.want || noted != c.note {
			t.Errorf("GOMEMLIMIT=%q: pacer limit %v, noted %v (%q); want %v, %v", c.env, ev.Pacer.GOMemLimit, noted, ev.Notes, c.want, c.note)
		}
	}
}

// TestNeverCollected: a session whose heap and goroutine profiles all failed (the profiles
// were a login page), written by a collector killed before it could note it: the evidence's
// notes say what could not be collected, and the quantities those reads would have measured
// carry the reason, for the rules that cannot judge. Data that did come (MemStats) is not
// said missing.
func TestNeverCollected(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	m := session.Manifest{Mode: "watch", Start: t0, Target: session.Target{PprofURL: "http://127.0.0.1:6060"},
		Attempts: map[string]session.Attempt{
			session.AttemptHeap:      {Tries: 7, LastError: "not a pprof profile: the body is an HTML page"},
			session.AttemptGoroutine: {Tries: 7},
			session.AttemptMemStats:  {Tries: 7, OK: 7},
			session.AttemptProc:      {Tries: 60, OK: 1},
		}}
	ev := newSession(t, m, func(w *session.Writer) {
		for i := range 7 {
			w.AppendSample(memstats(t0.Add(time.Duration(i)*10*time.Second), 10*mb, 20*mb))
		}
	})
	notes := strings.Join(ev.Notes, "\n")
	for _, want := range []string{
		"heap profiles: 0 of 7 fetches succeeded (the last error: not a pprof profile: the body is an HTML page)",
		"goroutine profiles: 0 of 7 fetches succeeded",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if strings.Contains(notes, "MemStats") || strings.Contains(notes, "/proc readings") {
		t.Errorf("notes say missing what came (MemStats) or came once (/proc):\n%s", notes)
	}
	if g := ev.Gaps[GapHeapSnaps]; !strings.HasPrefix(g, "heap profiles: 0 of 7 fetches succeeded") {
		t.Errorf("heap profiles gap %q", g)
	}
	if g := ev.Gaps[GapGoroutines]; !strings.HasPrefix(g, "goroutine profiles: 0 of 7") {
		t.Errorf("goroutines gap %q", g)
	}
	// A note the recorder already wrote is not repeated.
	m.Notes = []string{"heap profiles: 0 of 7 fetches succeeded (the server answered an HTML page: a login page?)"}
	ev = newSession(t, m, func(w *session.Writer) {})
	if c := strings.Count(strings.Join(ev.Notes, "\n"), "heap profiles:"); c != 1 {
		t.Errorf("%d notes on heap profiles, want 1: %q", c, ev.Notes)
	}
}

// TestProfileCacheLRU: the store keeps the most recently used parsed profiles, so that a
// rule comparing the first snapshot with each of the others parses the first once; and it
// keeps no more than its byte budget of them (the one just read aside).
func TestProfileCacheLRU(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	ev := newSession(t, session.Manifest{Mode: "watch", Start: t0}, func(w *session.Writer) {
		for i := range 2 * maxParsed {
			w.WriteProfile(session.KindHeap, t0.Add(time.Duration(i)*10*time.Second), "", goroutineProfile(t, i+1))
		}
	})
	first, err := ev.Profile(ev.Heaps[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range ev.Heaps[1:] {
		if _, err := ev.Profile(s); err != nil {
			t.Fatal(err)
		}
		if p, _ := ev.Profile(ev.Heaps[0]); p != first {
			t.Fatalf("the first profile was parsed again after %s", filepath.Base(s.Path))
		}
	}
	st := ev.profiles
	if len(st.order) != maxParsed || st.held > st.maxBytes {
		t.Errorf("%d kept, %d bytes; want %d within %d", len(st.order), st.held, maxParsed, st.maxBytes)
	}
	st.maxBytes = st.cost[st.order[0]] + 1 // room for one profile
	ev.Profile(ev.Heaps[1])
	if len(st.order) != 1 || st.held > st.cost[st.order[0]] {
		t.Errorf("%d kept (%d bytes) under a budget of one", len(st.order), st.held)
	}
}

// TestOOMKillsInWindow: the cgroup's oom_kill count counts since the cgroup was made; the
// window's kills are its rise, a reading after the target ended included.
func TestOOMKillsInWindow(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name      string
		counts    []uint64
		total, in uint64
	}{
		{"killed in the window", []uint64{3, 3, 3, 4}, 4, 1},
		{"killed before it", []uint64{2, 2, 2}, 2, 0},
		{"no cgroup", nil, 0, 0},
	} {
		ev := newSession(t, session.Manifest{Mode: "run"}, func(w *session.Writer) {
			for i, n := range tc.counts {
				w.AppendSample(session.Sample{Time: t0.Add(time.Duration(i) * time.Second),
					Cgroup: &session.Cgroup{Version: 1, LimitBytes: 256 * mb, UsageBytes: 100 * mb, OOMKills: n}})
			}
		})
		if ev.OOMKills != tc.total || ev.OOMKillsInWindow != tc.in {
			t.Errorf("%s: OOMKills %d, in the window %d; want %d, %d", tc.name, ev.OOMKills, ev.OOMKillsInWindow, tc.total, tc.in)
		}
	}
}

// TestCostsNoted: the manifest's Costs are said in one note, per kind of data: from where,
// how often, and what that cost the target; a session without them has no such note.
func TestCostsNoted(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	m := session.Manifest{Mode: "watch", Start: t0, Target: session.Target{PprofURL: "http://127.0.0.1:6060"},
		Costs: []session.Cost{
			{Data: session.AttemptHeap, Source: session.SourceMemory, Reads: 12, CPUMeasured: true},
			{Data: session.AttemptGoroutine, Source: session.SourceMemory, Reads: 2, CPUMeasured: true, Stops: 2, StoppedSeconds: 0.0061, LongestStopSeconds: 0.0042},
			{Data: session.DataIndex, Source: session.SourcePprof, Reads: 120, TargetCPUSeconds: 0.0072, CPUMeasured: true, PausesMeasured: true},
			{Data: session.DataGoroutineLeak, Source: session.SourcePprof, Reads: 1, TargetCPUSeconds: 0.25, CPUMeasured: true, Pauses: 2, LongestPauseSeconds: 0.000262, PausesMeasured: true},
			{Data: session.AttemptGoroutine, Source: session.SourcePprof, Reads: 3},
		}}
	ev := newSession(t, m, func(w *session.Writer) {})
	var note string
	for _, n := range ev.Notes {
		if strings.HasPrefix(n, CostNotePrefix) {
			note = n
		}
	}
	for _, want := range []string{
		"heap profiles: 12 from its memory, none of its CPU, never stopped",
		"goroutine profiles: 2 from its memory, none of its CPU, stopped 2 time(s) (6.1 ms in all, 4.2 ms at most)",
		"pprof index pages: 120 from net/http/pprof, 7.2 ms of its CPU at most, no stop-the-world pause",
		"goroutineleak profiles: 1 from net/http/pprof, 250 ms of its CPU at most, 2 stop-the-world pause(s) of its runtime, the longest under 0.26 ms",
		"goroutine profiles: 3 from net/http/pprof, its CPU not measured (no /proc)",
	} {
		if !strings.Contains(note, want) {
			t.Errorf("the costs' note lacks %q:\n%s", want, note)
		}
	}
	m.Costs = nil
	ev = newSession(t, m, func(w *session.Writer) {})
	for _, n := range ev.Notes {
		if strings.HasPrefix(n, CostNotePrefix) {
			t.Errorf("a session without costs has the note %q", n)
		}
	}
}
