package recorder

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/memdoctor/memdoctor/internal/dev/gotool"
	"github.com/memdoctor/memdoctor/session"
)

// leakServer builds testdata/leakserver with Go 1.27 (skipping, and saying so, when the
// toolchain cannot be fetched).
func leakServer(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds a Go 1.27 program")
	}
	return gotool.Build(t, gotool.Go127, ".", "./testdata/leakserver")
}

// startLeakServer runs it and returns its base URL.
func startLeakServer(t *testing.T, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"-leaks", "100"}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("leakserver did not print its address: %v", err)
	}
	return "http://" + strings.TrimSpace(line)
}

// leakProfiles checks the session's goroutineleak profiles: at least want of them, each
// naming the leaking function and nothing else (the first may be empty: it is fetched at the
// start), the leaked count growing from one to the next. It returns the leaked counts.
func leakProfiles(t *testing.T, s *session.Session, want int) []int64 {
	t.Helper()
	refs := s.ProfilesOf(session.KindGoroutineLeak, false)
	if len(refs) < want {
		t.Fatalf("%d goroutineleak profile(s), want at least %d; notes %q", len(refs), want, s.Manifest.Notes)
	}
	var counts []int64
	for _, ref := range refs {
		f, err := os.Open(ref.Path)
		if err != nil {
			t.Fatal(err)
		}
		p, err := profile.Parse(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", ref.Path, err)
		}
		var leaked, atSite int64
		for _, smp := range p.Sample {
			leaked += smp.Value[0]
			if sampleNames(smp, "main.lookup.func1") {
				atSite += smp.Value[0]
			}
		}
		if (leaked == 0 && len(counts) > 0) || atSite != leaked { // the start's may precede the first leak
			t.Errorf("%s: %d leaked goroutines, %d of them in main.lookup.func1; want all of them", filepath.Base(ref.Path), leaked, atSite)
		}
		counts = append(counts, leaked)
	}
	for i := 1; i < len(counts); i++ {
		if counts[i] <= counts[i-1] {
			t.Errorf("leaked counts %v: want them growing (the server leaks 100/s)", counts)
		}
	}
	return counts
}

func sampleNames(s *profile.Sample, fn string) bool {
	for _, loc := range s.Location {
		for _, l := range loc.Line {
			if l.Function != nil && l.Function.Name == fn {
				return true
			}
		}
	}
	return false
}

// TestWatchGoroutineLeakGo127 watches a Go 1.27 server that leaks goroutines blocked on a
// channel nobody can reach: the session holds goroutineleak profiles that name the leaking
// function, one at the start and more as the count climbs, and per-sample counts whose
// goroutineleak figure follows the last detection.
func TestWatchGoroutineLeakGo127(t *testing.T) {
	base := startLeakServer(t, leakServer(t))
	cfg := watchConfig(t)
	cfg.Duration = 6 * time.Second
	cfg.Interval = 2 * time.Second
	cfg.leakMinGap = time.Second // the climb (20% and 50 goroutines) then comes within seconds
	cfg.LeakCheckEvery = time.Hour
	if _, err := Watch(context.Background(), cfg, base); err != nil {
		t.Fatal(err)
	}
	s := openSession(t, cfg.Out)
	counts := leakProfiles(t, s, 2)
	var maxLeak, first, last int
	for _, smp := range samplesOf(t, s) {
		if p := smp.Pprof; p != nil {
			if first == 0 {
				first = p.Goroutines
			}
			last = p.Goroutines
			maxLeak = max(maxLeak, p.GoroutineLeak)
			if p.GoroutineLeak < 0 {
				t.Errorf("a Go 1.27 target's index without goroutineleak: %+v", *p)
			}
		}
	}
	t.Logf("leaked per profile %v; goroutines %d -> %d; highest goroutineleak count in the index %d", counts, first, last, maxLeak)
	if last-first < 300 || maxLeak == 0 || int64(maxLeak) > counts[len(counts)-1] {
		t.Errorf("goroutines %d -> %d (want 300 more in 6 s), highest goroutineleak count %d (want > 0 and at most the last profile's %d)",
			first, last, maxLeak, counts[len(counts)-1])
	}
	if !hasNote(s, "fetched the goroutineleak profile") {
		t.Errorf("no note of the forced GCs: %q", s.Manifest.Notes)
	}
}

// TestRunGoroutineLeakGo127 runs the same server under memdoctor run: each goroutineleak
// fetch shows in gctrace.log as a cycle checking for goroutine leaks, marked forced.
func TestRunGoroutineLeakGo127(t *testing.T) {
	bin := leakServer(t)
	cfg := Config{Mode: "run", Out: filepath.Join(t.TempDir(), "s"), Duration: 7 * time.Second,
		Sample: 200 * time.Millisecond, Interval: 2 * time.Second, Command: []string{bin, "-leaks", "100"},
		LeakCheckEvery: time.Hour, leakMinGap: time.Second}
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	s := openSession(t, cfg.Out)
	counts := leakProfiles(t, s, 2)
	checks := 0
	for _, ev := range gcOf(t, s) {
		if ev.LeakCheck {
			checks++
			if !ev.Forced {
				t.Errorf("gc %d checked for leaks, not marked forced", ev.N)
			}
		}
	}
	if checks != len(counts) {
		t.Errorf("%d leak-checking GC cycles in gctrace.log, %d goroutineleak profiles: want one cycle per fetch", checks, len(counts))
	}
}

// TestWatchAgentGoroutineLeakGo127 watches a go1.27.0 service that embeds the agent (and
// pprof beside it): the agent's goroutineleak profile reaches the session under its own
// name, and in auto mode memdoctor does not fetch another over pprof (one forced GC, not two).
func TestWatchAgentGoroutineLeakGo127(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a Go 1.27 program")
	}
	bin := gotool.Build(t, gotool.Go127, ".", "../dev/agenttest/testdata/leakagent")
	for _, source := range []string{SourceAuto, SourceAgent} {
		t.Run(source, func(t *testing.T) {
			base := startLeakServer(t, bin, "-first", "200")
			cfg := watchConfig(t)
			cfg.Source = source
			cfg.Duration = 3 * time.Second
			cfg.leakMinGap = time.Second // would let memdoctor's own fetches come fast, were it fetching
			if _, err := Watch(context.Background(), cfg, base); err != nil {
				t.Fatal(err)
			}
			s := openSession(t, cfg.Out)
			counts := leakProfiles(t, s, 1)
			refs := s.ProfilesOf(session.KindGoroutineLeak, false)
			if len(refs) != 1 || counts[0] < 200 {
				t.Errorf("%d goroutineleak profile(s) holding %v leaked goroutines; want the agent's one (a minute before its next), with the 200 leaked before it started", len(refs), counts)
			}
			if s.Manifest.Target.AgentURL == "" || hasNote(s, "fetched the goroutineleak profile") {
				t.Errorf("agent %q; notes %q: memdoctor fetched over pprof beside the agent", s.Manifest.Target.AgentURL, s.Manifest.Notes)
			}
		})
	}
}
