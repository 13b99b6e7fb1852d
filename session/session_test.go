package session

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func newTestWriter(t *testing.T) (*Writer, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "s")
	w, err := Create(dir, Manifest{Mode: "run", Start: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), Command: []string{"./server"}})
	if err != nil {
		t.Fatal(err)
	}
	return w, dir
}

func TestWriteThenOpen(t *testing.T) {
	w, dir := newTestWriter(t)
	t0 := time.Date(2026, 11, 22, 10, 0, 1, 0, time.UTC)
	for i := range 3 {
		s := Sample{Time: t0.Add(time.Duration(i) * time.Second), Proc: &Proc{PID: 7, RSSBytes: uint64(100+i) << 20}}
		if err := w.AppendSample(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.AppendSample(Sample{Time: t0.Add(3 * time.Second), Go: &GoMem{Source: "memstats", TotalBytes: 50 << 20, GCCycles: 4}}); err != nil {
		t.Fatal(err)
	}
	if err := w.UpdateManifest(func(m *Manifest) { m.GCTraceBase = t0.Add(-time.Second) }); err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{
		"gc 1 @0.010s 1%: 0.01+0.5+0.01 ms clock, 0.02+0.1/0.2/0+0.02 ms cpu, 4->4->1 MB, 4 MB goal, 0 MB stacks, 0 MB globals, 2 P",
		"gc 2 @1.500s 1%: 0.01+0.5+0.01 ms clock, 0.02+0.1/0.2/0+0.02 ms cpu, 4->5->2 MB, 5 MB goal, 0 MB stacks, 0 MB globals, 2 P",
	} {
		if err := w.AppendGCTrace(l); err != nil {
			t.Fatal(err)
		}
	}
	ref, err := w.WriteProfile(KindHeap, t0.Add(2*time.Second), "", []byte("not really a profile"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteProfile(KindGoroutine, t0, "", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteProfile(KindHeap, t0.Add(time.Second), "before-spike", []byte("y")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(StatusComplete, "ran for 4s"); err != nil {
		t.Fatal(err)
	}

	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Warnings) != 0 {
		t.Errorf("warnings: %q", s.Warnings)
	}
	if s.Manifest.Format != Format || s.Manifest.Status != StatusComplete || s.Manifest.End.IsZero() {
		t.Errorf("manifest: %+v", s.Manifest)
	}
	samples, err := s.ReadSamples()
	if err != nil {
		t.Fatal(err)
	}
	if len(samples) != 4 || samples[2].Proc.RSSBytes != 102<<20 || samples[3].Go.GCCycles != 4 {
		t.Errorf("samples: %d %+v", len(samples), samples)
	}
	gc, err := s.ReadGC()
	if err != nil {
		t.Fatal(err)
	}
	if len(gc) != 2 || gc[1].N != 2 || !gc[1].Time.Equal(t0.Add(500*time.Millisecond)) {
		t.Errorf("gc: %+v", gc)
	}
	if got := s.ProfilesOf(KindHeap, true); len(got) != 1 || filepath.Base(got[0].Path) != filepath.Base(ref.Path) {
		t.Errorf("periodic heap profiles: %+v", got)
	}
	if got := s.ProfilesOf(KindHeap, false); len(got) != 2 || got[0].Label != "before-spike" {
		t.Errorf("all heap profiles (time order): %+v", got)
	}
	if _, err := Create(dir, Manifest{}); err == nil || !strings.Contains(err.Error(), "already holds a session") {
		t.Errorf("Create over an existing session: %v", err)
	}
}

// TestKilledCollector opens a session whose writer never closed, with a torn last line, a
// garbage line, a temporary profile of an interrupted write and a corrupt profile name.
func TestKilledCollector(t *testing.T) {
	w, dir := newTestWriter(t)
	t0 := time.Date(2026, 11, 22, 10, 0, 1, 0, time.UTC)
	for i := range 5 {
		w.AppendSample(Sample{Time: t0.Add(time.Duration(i) * time.Second), Proc: &Proc{RSSBytes: 1 << 20}})
	}
	// The process dies here: no Close. Damage the files the way a crash or a full disk can.
	f, err := os.OpenFile(filepath.Join(dir, MetricsFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("\x00\x00garbage\n")
	f.WriteString(`{"t":"2026-11-22T10:00:09Z","proc":{"rss_bytes":`) // torn
	f.Close()
	os.WriteFile(filepath.Join(dir, ProfilesDir, ".heap-20261122T100002.000Z.pb.gz.tmp123"), []byte("partial"), 0o644)
	os.WriteFile(filepath.Join(dir, ProfilesDir, "heap-notatime.pb.gz"), []byte("x"), 0o644)

	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	st, err := s.EachSample(func(*Sample) error { n++; return nil })
	if err != nil || n != 5 {
		t.Errorf("samples = %d (%v), want the 5 whole ones", n, err)
	}
	joined := strings.Join(append(s.Warnings, st.Warning(MetricsFile)), "\n")
	for _, want := range []string{"skipped 2 corrupt or torn line(s), the first at line 6", "ignored heap-notatime.pb.gz", "did not finish"} {
		if !strings.Contains(joined, want) {
			t.Errorf("warnings lack %q:\n%s", want, joined)
		}
	}
	if len(s.Profiles) != 0 {
		t.Errorf("profiles: %+v", s.Profiles)
	}
	start, end := s.Window()
	if !start.Equal(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)) || !end.IsZero() {
		t.Errorf("window %v..%v, want the manifest's start and no end", start, end)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing dir: %v", err)
	}
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "not a memdoctor session") {
		t.Errorf("empty dir: %v", err)
	}
	file := filepath.Join(dir, "f")
	os.WriteFile(file, nil, 0o644)
	if _, err := Open(file); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("file: %v", err)
	}
	os.WriteFile(filepath.Join(dir, ManifestFile), []byte(`{"format":"something/else"}`), 0o644)
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "format") {
		t.Errorf("foreign manifest: %v", err)
	}
}

// TestPprofCountsAndLeakProfiles writes the pprof index counts and goroutineleak profiles and
// reads them back: the JSON keys are the session format's contract.
func TestPprofCountsAndLeakProfiles(t *testing.T) {
	w, dir := newTestWriter(t)
	t0 := time.Date(2026, 11, 22, 10, 0, 1, 0, time.UTC)
	served := Sample{Time: t0, Pprof: &PprofCounts{Goroutines: 1863, GoroutineLeak: 1800, Threads: 9, HeapRecords: 41}}
	none := Sample{Time: t0.Add(time.Second), Pprof: &PprofCounts{Goroutines: 63, GoroutineLeak: -1}}
	for _, s := range []Sample{served, none} {
		if err := w.AppendSample(s); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 2 {
		if _, err := w.WriteProfile(KindGoroutineLeak, t0.Add(time.Duration(i)*time.Minute), "", []byte("p")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.WriteProfile(KindGoroutine, t0, "", []byte("g")); err != nil {
		t.Fatal(err)
	}
	w.Close(StatusComplete, "")
	b, err := os.ReadFile(filepath.Join(dir, MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	for i, want := range []string{
		`"pprof":{"goroutines":1863,"goroutineleak":1800,"threadcreate":9,"heap_records":41}`,
		`"pprof":{"goroutines":63,"goroutineleak":-1}`,
	} {
		if !strings.Contains(lines[i], want) {
			t.Errorf("metrics line %d = %s, want it to hold %s", i+1, lines[i], want)
		}
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	samples, err := s.ReadSamples()
	if err != nil {
		t.Fatal(err)
	}
	if len(samples) != 2 || *samples[0].Pprof != *served.Pprof || *samples[1].Pprof != *none.Pprof {
		t.Errorf("samples read back: %+v", samples)
	}
	leaks := s.ProfilesOf(KindGoroutineLeak, true)
	if len(leaks) != 2 || !leaks[1].Time.Equal(t0.Add(time.Minute)) || leaks[0].Kind != KindGoroutineLeak {
		t.Errorf("goroutineleak profiles: %+v", leaks)
	}
	if g := s.ProfilesOf(KindGoroutine, false); len(g) != 1 {
		t.Errorf("goroutine profiles mix in the leak profiles: %+v", g)
	}
}

// TestAttempts reads back what the collector says it tried and got, and which kinds it never
// got; a session written before Attempts existed has none.
func TestAttempts(t *testing.T) {
	w, dir := newTestWriter(t)
	restart := time.Date(2026, 11, 22, 10, 0, 30, 0, time.UTC)
	if err := w.UpdateManifest(func(m *Manifest) {
		m.Attempts = map[string]Attempt{
			AttemptHeap:      {Tries: 7, LastError: "not a pprof profile: the body is an HTML page"},
			AttemptGoroutine: {Tries: 7, OK: 2, LastError: "timed out"},
			AttemptProc:      {Tries: 60, OK: 60},
			AttemptMemStats:  {Tries: 7},
		}
		m.Restarts = []time.Time{restart}
	}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(StatusComplete, ""); err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.NeverCollected(); !slices.Equal(got, []string{AttemptHeap, AttemptMemStats}) {
		t.Errorf("NeverCollected = %q, want heap and memstats", got)
	}
	if a := s.Manifest.Attempts[AttemptGoroutine]; a.Tries != 7 || a.OK != 2 || a.LastError != "timed out" || !a.MostlyFailed() || a.Never() {
		t.Errorf("goroutine attempts read back as %+v", a)
	}
	if a := s.Manifest.Attempts[AttemptProc]; a.MostlyFailed() || a.Never() {
		t.Errorf("proc attempts %+v", a)
	}
	if len(s.Manifest.Restarts) != 1 || !s.Manifest.Restarts[0].Equal(restart) {
		t.Errorf("restarts %v", s.Manifest.Restarts)
	}

	old, err := Open("testdata/v1-before-attempts")
	if err != nil {
		t.Fatal(err)
	}
	if old.Manifest.Attempts != nil || old.NeverCollected() != nil {
		t.Errorf("a session without attempts: %+v", old.Manifest.Attempts)
	}
}

// TestCosts reads back what the collector says each kind of data cost the target, per source,
// in the order written; a session written before Costs existed has none.
func TestCosts(t *testing.T) {
	w, dir := newTestWriter(t)
	want := []Cost{
		{Data: AttemptHeap, Source: SourceMemory, Reads: 12, CPUMeasured: true},
		{Data: AttemptGoroutine, Source: SourceMemory, Reads: 2, CPUMeasured: true, Stops: 2, StoppedSeconds: 0.006, LongestStopSeconds: 0.004},
		{Data: DataIndex, Source: SourcePprof, Reads: 120, TargetCPUSeconds: 0.007, CPUMeasured: true, PausesMeasured: true},
		{Data: DataGoroutineLeak, Source: SourcePprof, Reads: 1, TargetCPUSeconds: 0.25, CPUMeasured: true, Pauses: 2, LongestPauseSeconds: 0.0002, PausesMeasured: true},
	}
	if err := w.UpdateManifest(func(m *Manifest) { m.Costs = want }); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(StatusComplete, ""); err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.Manifest.Costs, want) {
		t.Errorf("costs read back as %+v, want %+v", s.Manifest.Costs, want)
	}
	old, err := Open("testdata/v1-before-attempts")
	if err != nil {
		t.Fatal(err)
	}
	if old.Manifest.Costs != nil {
		t.Errorf("a session without costs: %+v", old.Manifest.Costs)
	}
}

// TestTraceBounds: a trace over MaxTraceBytes is refused on write, and on read (a file put
// in the session by other means).
func TestTraceBounds(t *testing.T) {
	w, dir := newTestWriter(t)
	big := make([]byte, MaxTraceBytes+1)
	if _, err := w.WriteTrace("trace-20261122T100000.000Z-x.trace", big); !errors.Is(err, ErrTraceTooLarge) {
		t.Errorf("WriteTrace of %d bytes: %v, want ErrTraceTooLarge", len(big), err)
	}
	if _, err := w.WriteTrace("trace-20261122T100001.000Z-x.trace", big[:MaxTraceBytes]); err != nil {
		t.Errorf("WriteTrace at the bound: %v", err)
	}
	w.Close(StatusComplete, "")
	planted := filepath.Join(dir, TracesDir, "trace-20261122T100002.000Z-x.trace")
	if err := os.WriteFile(planted, big, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := OpenTrace(planted)
	if err == nil {
		f.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "larger than memdoctor reads") {
		t.Errorf("OpenTrace of %d bytes: %v", len(big), err)
	}
}

// TestManifestTooLarge: a manifest.json over MaxManifestBytes is not read whole: it is
// skipped with a warning, and the session is read from its other files.
func TestManifestTooLarge(t *testing.T) {
	w, dir := newTestWriter(t)
	w.AppendSample(Sample{Time: time.Date(2026, 11, 22, 10, 0, 1, 0, time.UTC), Proc: &Proc{PID: 7, RSSBytes: 1 << 20}})
	w.Close(StatusComplete, "")
	f, err := os.OpenFile(filepath.Join(dir, ManifestFile), os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxManifestBytes + 1); err != nil { // sparse: costs no disk
		t.Fatal(err)
	}
	f.Close()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(s.Warnings, "\n"); !strings.Contains(w, "manifest.json skipped (larger than memdoctor reads: 16 MiB, over 16 MiB)") {
		t.Errorf("warnings %q", s.Warnings)
	}
	if smp, err := s.ReadSamples(); err != nil || len(smp) != 1 {
		t.Errorf("samples %d, %v", len(smp), err)
	}
}
