package recorder

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/memdoctor/memdoctor/collect/memread"
	"github.com/memdoctor/memdoctor/collect/scrape"
	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/session"
)

// startWithPprof starts collect/memread's test program built with net/http/pprof (a small
// Go service: 7 parked goroutines) and returns its pid and pprof URL; it ends with the test.
// args are more of its flags.
func startWithPprof(t *testing.T, args ...string) (int, string) {
	t.Helper()
	bin := buildProgram(t, "../../collect/memread/testdata/target", "-tags", "withpprof")
	pid, ready := startTestProgram(t, bin, append([]string{"-parked", "7"}, args...)...)
	f := strings.Fields(ready)
	if len(f) != 4 || f[0] != "ready" || f[3] == "-" {
		t.Fatalf("the target said %q: not ready with a pprof address", ready)
	}
	return pid, "http://" + f[3] + "/debug/pprof/"
}

// costOf finds the cost entry of data from source in a session's manifest.
func costOf(s *session.Session, data, source string) (session.Cost, bool) {
	for _, c := range s.Manifest.Costs {
		if c.Data == data && c.Source == source {
			return c, true
		}
	}
	return session.Cost{}, false
}

// TestWatchReadsMemoryBesidePprof watches a local service over its pprof with ReadMemory: its
// heap profiles, figures and goroutine count come from its memory (no MemStats fetched, the
// Go samples say process-memory, the index page once), its stacks from its memory within a
// generous bound and from pprof by default (--stacks-stop 0: the reader detached), and the
// manifest's Costs say what each kind of data cost it: nothing for what came from memory but
// the stops, its CPU and its runtime's pauses for what its pprof served. Without ReadMemory,
// everything comes from pprof as before.
func TestWatchReadsMemoryBesidePprof(t *testing.T) {
	if testing.Short() {
		t.Skip("records for more than five seconds")
	}
	needProc(t)
	pid, url := startWithPprof(t)
	watch := func(readMemory bool, maxStop time.Duration) *session.Session {
		t.Helper()
		cfg := watchConfig(t)
		cfg.Duration, cfg.ReadMemory, cfg.StacksStop = 3*time.Second, readMemory, maxStop
		cfg.GoroutineTextEvery = 1 // a dump with every goroutine profile from pprof
		return watched(t, cfg, url, pid)
	}
	goSources := func(s *session.Session) map[string]int {
		out := map[string]int{}
		for _, smp := range samplesOf(t, s) {
			if smp.Go != nil {
				out[smp.Go.Source]++
			}
		}
		return out
	}

	t.Run("memory within the bound", func(t *testing.T) {
		s := watch(true, 10*time.Second)
		if src := goSources(s); src[memread.Source] < 5 || src["memstats"] > 0 {
			t.Errorf("Go samples by source %v: want one from memory each sample, none from MemStats", src)
		}
		if a, ok := s.Manifest.Attempts[session.AttemptMemStats]; ok {
			t.Errorf("MemStats fetched %d time(s): the figures come from memory", a.Tries)
		}
		if len(s.ProfilesOf(session.KindHeap, false)) < 2 || len(s.ProfilesOf(session.KindGoroutine, false)) < 1 {
			t.Errorf("%d heap and %d goroutine profiles", len(s.ProfilesOf(session.KindHeap, false)), len(s.ProfilesOf(session.KindGoroutine, false)))
		}
		heap, ok := costOf(s, session.AttemptHeap, session.SourceMemory)
		if !ok || heap.Reads < 2 || heap.TargetCPUSeconds != 0 || heap.Stops != 0 {
			t.Errorf("heap profiles' cost %+v (found %v): want every one from memory, none of the target's CPU, no stop", heap, ok)
		}
		if _, ok := costOf(s, session.AttemptHeap, session.SourcePprof); ok {
			t.Error("a heap profile was asked of pprof")
		}
		g, ok := costOf(s, session.AttemptGoroutine, session.SourceMemory)
		if !ok || g.Stops < 1 || g.LongestStopSeconds <= 0 || g.LongestStopSeconds > 10 {
			t.Errorf("goroutine profiles' cost %+v (found %v): want stops, each within the bound", g, ok)
		}
		if _, ok := costOf(s, session.AttemptGoroutineText, session.SourcePprof); ok {
			t.Error("a goroutine dump was fetched with stacks read from memory")
		}
		// The count comes from memory every sample: the index page at each sample taken before
		// the process's memory was first read (under load its symbols take a sample or two),
		// and at the first sample else; never again (the program serves no goroutineleak
		// profile: no fetch makes it due).
		before := 0
		for _, smp := range samplesOf(t, s) {
			if smp.Go != nil && smp.Go.Source == memread.Source {
				break
			}
			before++
		}
		ix, ok := costOf(s, session.DataIndex, session.SourcePprof)
		if want := max(1, before); !ok || ix.Reads != want || !ix.CPUMeasured || !ix.PausesMeasured {
			t.Errorf("index reads' cost %+v (found %v): want %d (%d sample(s) before the memory was read), its CPU and pauses measured", ix, ok, want, before)
		}
		if fig, _ := costOf(s, session.DataFigures, session.SourceMemory); fig.Reads < 5 {
			t.Errorf("%d readings of the figures from memory: want one a sample", fig.Reads)
		}
		if !noted(s, "is also read from its memory") {
			t.Errorf("no note says what is read from memory: %q", s.Manifest.Notes)
		}
	})

	t.Run("stacks from pprof", func(t *testing.T) {
		s := watch(true, 0) // the default: never stopped, the reader detached
		if _, ok := costOf(s, session.AttemptGoroutine, session.SourceMemory); ok {
			t.Error("the process was stopped for its stacks with --stacks-stop 0")
		}
		g, ok := costOf(s, session.AttemptGoroutine, session.SourcePprof)
		if !ok || g.Reads < 1 || !g.CPUMeasured || g.TargetCPUSeconds <= 0 || !g.PausesMeasured || g.Pauses < 1 {
			t.Errorf("goroutine profiles' cost %+v (found %v): want the target's CPU and its runtime's pauses (a goroutine profile stops its world)", g, ok)
		}
		if _, ok := costOf(s, session.AttemptGoroutineText, session.SourcePprof); !ok {
			t.Error("no goroutine dump with the stacks from pprof")
		}
		if _, ok := costOf(s, session.AttemptHeap, session.SourceMemory); !ok {
			t.Error("the heap profiles did not come from memory")
		}
		// The reader let go of the executable's DWARF: its profiles still name files and lines.
		heaps := s.ProfilesOf(session.KindHeap, false)
		if len(heaps) == 0 {
			t.Fatal("no heap profile")
		}
		if !namesFiles(t, heaps[len(heaps)-1].Path) {
			t.Errorf("the heap profile %s names no file of the program's code", heaps[len(heaps)-1].Path)
		}
	})

	t.Run("pprof only", func(t *testing.T) {
		s := watch(false, 0)
		if src := goSources(s); src[memread.Source] > 0 || src["memstats"] < 1 {
			t.Errorf("Go samples by source %v: want MemStats only", src)
		}
		for _, c := range s.Manifest.Costs {
			if c.Source != session.SourcePprof {
				t.Errorf("%s read from %s without ReadMemory", c.Data, c.Source)
			}
		}
		if h, ok := costOf(s, session.AttemptHeap, session.SourcePprof); !ok || h.Reads < 2 || !h.CPUMeasured || h.PausesMeasured {
			t.Errorf("heap profiles' cost %+v (found %v): want their CPU measured, their pauses not (its memory is not read)", h, ok)
		}
		if noted(s, "is also read from its memory") {
			t.Error("a note says the memory was read")
		}
	})
}

// TestWatchAStarvedService watches a local service whose pprof answers the probe and then
// nothing (starved of CPU by its own spinning goroutines, or stuck): its process is matched by
// its socket (it links net/http/pprof), its memory read, and once a goroutine profile is left
// unanswered its stacks are read from its memory without stopping it; the watch goes on to its
// end (a pprof that answers nothing is not a service gone while its process runs).
func TestWatchAStarvedService(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for requests to time out: 20 s")
	}
	// It mostly waits (for its window, or for requests to time out): beside another test.
	t.Parallel()
	s := watchStarved(t, 14*time.Second, "-stall-after", "1", "-spin", "3")
	if heap, ok := costOf(s, session.AttemptHeap, session.SourceMemory); !ok || heap.Reads < 2 {
		t.Errorf("heap profiles from memory: %+v (found %v)", heap, ok)
	}
	g, ok := costOf(s, session.AttemptGoroutine, session.SourceMemory)
	if !ok || g.Reads < 1 || g.Stops != 0 {
		t.Errorf("goroutine profiles from memory: %+v (found %v): want some, the process never stopped", g, ok)
	}
	if !noted(s, "left a request unanswered") {
		t.Errorf("no note says why the stacks come from memory: %q", s.Manifest.Notes)
	}
	gs := s.ProfilesOf(session.KindGoroutine, false)
	if len(gs) == 0 {
		t.Fatal("no goroutine profile")
	}
	p := readProfile(t, gs[len(gs)-1].Path)
	parked := int64(0)
	for _, smp := range p.Sample {
		for _, l := range smp.Location {
			if len(l.Line) > 0 && l.Line[len(l.Line)-1].Function.Name == "main.parked" {
				parked += smp.Value[0]
			}
		}
	}
	if parked != 7 {
		t.Errorf("the last goroutine profile holds %d goroutines parked in main.parked, want 7", parked)
	}
}

// watched watches url with cfg and opens the session it recorded, which must be complete and
// of process pid.
func watched(t *testing.T, cfg Config, url string, pid int) *session.Session {
	t.Helper()
	res, err := Watch(context.Background(), cfg, url)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != session.StatusComplete {
		t.Fatalf("status %s: %s", res.Status, res.Detail)
	}
	s, err := session.Open(cfg.Out)
	if err != nil {
		t.Fatal(err)
	}
	if s.Manifest.Target.PID != pid {
		t.Fatalf("watched pid %d, want %d", s.Manifest.Target.PID, pid)
	}
	return s
}

// watchStarved watches, for d, the test program started with args (a pprof that stalls), and
// checks that the watch completed on that process, matched by its socket.
func watchStarved(t *testing.T, d time.Duration, args ...string) *session.Session {
	t.Helper()
	needProc(t)
	pid, url := startWithPprof(t, args...)
	cfg := watchConfig(t)
	cfg.Duration, cfg.ReadMemory = d, true
	s := watched(t, cfg, url, pid)
	if !noted(s, "matched by its socket: process ") || !noted(s, "links net/http/pprof") {
		t.Errorf("no note says how the process was matched: %q", s.Manifest.Notes)
	}
	return s
}

// TestWatchAServiceThatAnswersNothing: a local service whose pprof answers nothing at all, not
// even the probe, is read from its memory, its process matched by its socket.
func TestWatchAServiceThatAnswersNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the probe to time out: 15 s")
	}
	// It mostly waits (for its window, or for requests to time out): beside another test.
	t.Parallel()
	s := watchStarved(t, 3*time.Second, "-stall-after", "0")
	if !noted(s, "did not answer") {
		t.Errorf("no note says its pprof did not answer: %q", s.Manifest.Notes)
	}
	if len(s.ProfilesOf(session.KindHeap, false)) < 1 {
		t.Error("no heap profile read from its memory")
	}
}

// TestStopBound: the stacks are read from memory while the stop is predicted within the bound
// (from the goroutine count, and the largest share per goroutine measured); one stop over it
// hands them to pprof for good, with a note.
func TestStopBound(t *testing.T) {
	w, err := session.Create(filepath.Join(t.TempDir(), "s"), session.Manifest{Mode: "watch"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close(session.StatusComplete, "")
	cfg := Config{StacksStop: 5 * time.Millisecond}
	cfg.defaults()
	r := newRecorder(cfg, w)
	ms := &memSource{besidePprof: true}
	if !r.stacksFromMemory(ms, 100) || r.stacksFromMemory(ms, 10000) {
		t.Errorf("predicted stops %v for 100 goroutines, %v for 10,000: want the first within %v, not the second",
			ms.predictStop(100), ms.predictStop(10000), cfg.StacksStop)
	}
	r.stopped(ms, 100, 4*time.Millisecond) // 20 µs a goroutine: 300 would take 8 ms
	if ms.stopsOff || !r.stacksFromMemory(ms, 100) || r.stacksFromMemory(ms, 300) {
		t.Errorf("after a 4 ms stop of 100 goroutines: off %v, predicted %v for 100 and %v for 300", ms.stopsOff, ms.predictStop(100), ms.predictStop(300))
	}
	r.stopped(ms, 100, 30*time.Millisecond) // over the bound
	if !ms.stopsOff || r.stacksFromMemory(ms, 1) {
		t.Error("a stop over the bound left the stacks to memory")
	}
	if r.stacksFromMemory(&memSource{}, 1) {
		t.Error("stacks from memory for a process read from memory alone (no pprof to ask instead)")
	}
	r.cfg.StacksStop = 0
	if r.stacksFromMemory(&memSource{besidePprof: true}, 1) {
		t.Error("stacks from memory with --stacks-stop 0")
	}
}

// TestIndexDue: the index page is read every sample, but beside a process read from its
// memory (which gives the goroutine count): then at the first sample and after each
// goroutineleak fetch only.
func TestIndexDue(t *testing.T) {
	r := &recorder{cfg: Config{Sample: time.Second, Interval: 10 * time.Second}}
	r.index.reads = 3
	if !r.indexDue() {
		t.Error("without the process's memory the page is not read every sample")
	}
	r.mem = &memSource{besidePprof: true}
	if r.indexDue() {
		t.Error("beside memory the page is read again with nothing new in it")
	}
	r.index.leakFetched = true
	if !r.indexDue() {
		t.Error("not read after a goroutineleak fetch")
	}
	r.index = indexState{}
	if !r.indexDue() {
		t.Error("the first page is not read")
	}
}

// TestCostTally: the costs are kept per kind of data and source, in the order first read;
// a request whose target's run time is unknown (no /proc) counts with its CPU unmeasured.
func TestCostTally(t *testing.T) {
	r := &recorder{}
	r.servedCost(session.DataIndex, costMark{ran: -1})
	r.memoryCost(session.AttemptHeap, 0)
	r.memoryCost(session.AttemptGoroutine, 3*time.Millisecond)
	r.memoryCost(session.AttemptGoroutine, 5*time.Millisecond)
	r.servedCost(session.DataIndex, costMark{ran: -1})
	got, gen := r.costs.snapshot()
	want := []session.Cost{
		{Data: session.DataIndex, Source: session.SourcePprof, Reads: 2},
		{Data: session.AttemptHeap, Source: session.SourceMemory, Reads: 1, CPUMeasured: true},
		{Data: session.AttemptGoroutine, Source: session.SourceMemory, Reads: 2, CPUMeasured: true, Stops: 2, StoppedSeconds: 0.008, LongestStopSeconds: 0.005},
	}
	if len(got) != len(want) {
		t.Fatalf("costs %+v, want %+v", got, want)
	}
	for i := range want {
		g := got[i]
		g.StoppedSeconds = float64(time.Duration(g.StoppedSeconds*1e9).Round(time.Microsecond)) / 1e9
		if g != want[i] {
			t.Errorf("cost %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if !r.costs.changed() {
		t.Error("new costs not seen as changed")
	}
	r.costs.written(gen)
	if r.costs.changed() {
		t.Error("written costs seen as changed")
	}
}

// TestAskedOneAtATime: requests to the service never overlap (one in flight stretches
// another's stop-the-world), and one whose turn does not come before its context ends is not
// made, and says so.
func TestAskedOneAtATime(t *testing.T) {
	r := &recorder{asking: make(chan struct{}, 1)}
	release := make(chan struct{})
	inFlight := make(chan struct{})
	go r.asked(context.Background(), session.DataGoroutineLeak, func() error {
		close(inFlight)
		<-release
		return nil
	})
	<-inFlight
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	ran := false
	err := r.asked(ctx, session.DataIndex, func() error { ran = true; return nil })
	if ran || !errors.Is(err, errNotAsked) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("beside a request in flight: ran %v, err %v; want not made, errNotAsked", ran, err)
	}
	close(release)
	if err := r.asked(context.Background(), session.DataIndex, func() error { ran = true; return nil }); err != nil || !ran {
		t.Errorf("after it: ran %v, err %v", ran, err)
	}
	if c, _ := r.costs.snapshot(); len(c) != 2 || c[1].Data != session.DataIndex || c[1].Reads != 1 {
		t.Errorf("costs %+v: want the leak fetch and one index page (the request not made is not counted)", c)
	}
}

// namesFiles reports whether a stored profile has a frame of the program's main package with
// its file and line.
func namesFiles(t *testing.T, path string) bool {
	t.Helper()
	for _, l := range readProfile(t, path).Location {
		for _, ln := range l.Line {
			if strings.HasPrefix(ln.Function.Name, "main.") && strings.HasSuffix(ln.Function.Filename, "main.go") && ln.Line > 0 {
				return true
			}
		}
	}
	return false
}

// TestLastRoundKeepsOldStacks: the last round of a recording takes no goroutine profile when
// the count, read every sample, has not moved since the last one, however old that one is; a
// round before the end refreshes stacks older than the leak check's period.
func TestLastRoundKeepsOldStacks(t *testing.T) {
	srv := httptest.NewServer(pprofMux())
	defer srv.Close()
	c, err := scrape.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		final bool
		want  int // goroutine profiles fetched
	}{{true, 0}, {false, 1}} {
		w, err := session.Create(filepath.Join(t.TempDir(), "s"), session.Manifest{Mode: "watch"})
		if err != nil {
			t.Fatal(err)
		}
		cfg := Config{}
		cfg.defaults()
		r := newRecorder(cfg, w)
		now := time.Now()
		r.goroutines, r.countedAt = 40, now
		r.stacks = stacksState{at: now.Add(-time.Hour), goroutines: 40, ran: -1}
		r.snapshot(context.Background(), c, true, tc.final)
		w.Close(session.StatusComplete, "")
		attempts, _ := r.tries.snapshot()
		if got := attempts[session.AttemptGoroutine].Tries; got != tc.want {
			t.Errorf("final %v: %d goroutine profile(s) fetched, want %d", tc.final, got, tc.want)
		}
	}
}

// TestStarvedIsNotGone: rounds in which the service's pprof answered nothing make it gone,
// unless its memory is read and its port accepts (its process is there: a pprof that answers
// nothing in time is starved); a port that refuses makes it gone either way.
func TestStarvedIsNotGone(t *testing.T) {
	for _, tc := range []struct{ mem, refused, gone bool }{
		{false, false, true}, {true, false, false}, {true, true, true}, {false, true, true},
	} {
		r := &recorder{unreachable: make(chan struct{})}
		if tc.mem {
			r.mem = &memSource{besidePprof: true}
		}
		for range unreachableRounds {
			r.roundDone(false, tc.refused)
		}
		gone := false
		select {
		case <-r.unreachable:
			gone = true
		default:
		}
		if gone != tc.gone {
			t.Errorf("memory read %v, refused %v: gone %v, want %v", tc.mem, tc.refused, gone, tc.gone)
		}
	}
}

// TestStacksSampled: a service's stacks are read from its memory without stopping it past
// manyStacks goroutines or once its pprof left one unanswered; a process read from its memory
// alone is stopped for them only while the stop is predicted within maxUnaskedStop.
func TestStacksSampled(t *testing.T) {
	r := &recorder{}
	beside := &memSource{besidePprof: true}
	if r.sampleStacks(beside, manyStacks-1) || !r.sampleStacks(beside, manyStacks) {
		t.Errorf("beside pprof: sampled at %d goroutines %v, at %d %v; want from %d on", manyStacks-1, r.sampleStacks(beside, manyStacks-1),
			manyStacks, r.sampleStacks(beside, manyStacks), manyStacks)
	}
	if r.sampleStacks(nil, manyStacks) || r.sampleStacks(&memSource{}, manyStacks) {
		t.Error("sampled without a reader beside pprof")
	}
	beside.pprofStarved = true
	if !r.sampleStacks(beside, 10) {
		t.Error("not sampled once pprof left a goroutine profile unanswered")
	}
	alone := &memSource{}
	if n := int((maxUnaskedStop - stopBase) / stopPerGoroutine); alone.predictStop(n) > maxUnaskedStop || alone.predictStop(n+1000) <= maxUnaskedStop {
		t.Errorf("predicted stops %s for %d goroutines, %s for %d: the bound %s falls between", alone.predictStop(n), n, alone.predictStop(n+1000), n+1000, maxUnaskedStop)
	}
}

// readProfile reads a stored profile.
func readProfile(t *testing.T, path string) *profile.Profile {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return p
}

// TestWatchAnIdleServiceOverPprof: a service whose GC does not run while it is watched (the
// target runs two GCs at its start, then idles), read over pprof alone (MemStats), spent no
// GC CPU in the window: MemStats' GC CPU fraction is of its last GC, not of the moment it is
// read. No gc-overhead finding comes of its start-up's share.
func TestWatchAnIdleServiceOverPprof(t *testing.T) {
	if testing.Short() {
		t.Skip("watches an idle service for 6 s")
	}
	// 80 MiB live: memdoctor's reads never reach the GC goal.
	d, ev := diagnosedOverPprof(t, 6*time.Second, "-churn", "0", "-retain", "20000")
	if ev.GCCPU.Src != evidence.SourceMemStats || ev.GCCPU.Len() < 2 {
		t.Fatalf("GC CPU %d readings from %s: want MemStats'", ev.GCCPU.Len(), ev.GCCPU.Src)
	}
	if n := ev.GCCycles.Increase(); n != 0 {
		t.Fatalf("%.0f GCs ran in the window (%d forced; %v): the target was meant to idle", n, int(ev.GCForced.Increase()), ev.GCCycles.Points)
	}
	if got := ev.GCCPU.Increase(); got != 0 {
		t.Errorf("no GC ran in the window, yet its GC CPU rose %.3f s: %v", got, ev.GCCPU.Points)
	}
	for _, f := range d.Findings {
		if f.Kind == diagnose.KindGCOverhead {
			t.Errorf("a gc-overhead finding on an idle service: %s", f.Title)
		}
	}
}

// TestWatchAServiceThatStopsAnswering: a service whose pprof answers a few seconds and then
// nothing, watched over pprof alone (as a remote one is: nothing read from its memory), is not
// called healthy: the goroutines it stopped showing are "not judged", with the readings' end.
func TestWatchAServiceThatStopsAnswering(t *testing.T) {
	if testing.Short() {
		t.Skip("watches a service that stops answering for 30 s")
	}
	// It mostly waits (for its window, or for requests to time out): beside another test.
	t.Parallel()
	d, _ := diagnosedOverPprof(t, 30*time.Second, "-stall-at", "14s") // 14 s of samples, then none
	for _, f := range d.Findings {
		if f.Kind == diagnose.KindGoroutineLeak {
			t.Errorf("a goroutine-leak finding: %s", f.Title)
		}
	}
	i := slices.IndexFunc(d.NotJudged, func(n diagnose.NotJudged) bool { return n.Kind == diagnose.KindGoroutineLeak })
	if i < 0 {
		t.Fatalf("goroutine-leak judged from readings that stopped early; not judged: %+v", d.NotJudged)
	}
	if r := d.NotJudged[i].Reason; !strings.Contains(r, "went unread for the window's last") {
		t.Errorf("goroutine-leak not judged because %q: want the readings' end said", r)
	}
}

// diagnosedOverPprof watches collect/memread's test program (started with args) for d over its
// pprof alone, as a remote service is watched (nothing read from its memory), and diagnoses
// the session.
func diagnosedOverPprof(t *testing.T, d time.Duration, args ...string) (*diagnose.Diagnosis, *evidence.Evidence) {
	t.Helper()
	pid, url := startWithPprof(t, args...)
	cfg := watchConfig(t)
	cfg.Duration, cfg.ReadMemory = d, false
	dg, ev, err := diagnose.DiagnoseSession(watched(t, cfg, url, pid), evidence.Options{}, diagnose.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return dg, ev
}

// TestRunReadsACrowdedProgramFromMemory runs collect/memread's test program with 60,000
// parked goroutines under memdoctor run: a goroutine profile over its pprof would make it
// allocate about 19 MiB and spend about 90 ms of its CPU each time, so its stacks are read
// from its memory without stopping it (a sample), and so are its figures and heap profiles,
// and the manifest says why. Before, every snapshot asked its pprof.
func TestRunReadsACrowdedProgramFromMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a program of 60,000 goroutines")
	}
	bin := buildProgram(t, "../../collect/memread/testdata/target", "-tags", "withpprof")
	cfg := Config{Mode: "run", Out: filepath.Join(t.TempDir(), "s"), Duration: 6 * time.Second,
		Sample: 250 * time.Millisecond, Interval: time.Second, ReadMemory: true,
		Command: []string{bin, "-parked", "60000", "-retain", "10", "-churn", "10", "-linger", "1m"}}
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	s := openSession(t, cfg.Out)
	if c, ok := costOf(s, session.AttemptGoroutine, session.SourcePprof); ok && c.Reads > 1 {
		t.Errorf("%d goroutine profiles asked of the program's pprof at 60,000 goroutines, want at most the first", c.Reads)
	}
	if c, ok := costOf(s, session.AttemptGoroutine, session.SourceMemory); !ok || c.Reads == 0 {
		t.Errorf("no goroutine profile read from the program's memory: costs %+v", s.Manifest.Costs)
	}
	if !slices.ContainsFunc(s.Manifest.Notes, func(n string) bool { return strings.Contains(n, "goroutines, 50000 or more") }) {
		t.Errorf("no note says why the program is read from its memory: %q", s.Manifest.Notes)
	}
}
