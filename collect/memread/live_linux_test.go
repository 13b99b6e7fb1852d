package memread_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/memdoctor/memdoctor/collect/memread"
	"github.com/memdoctor/memdoctor/culprit"
	"github.com/memdoctor/memdoctor/internal/dev/gotool"
	"github.com/memdoctor/memdoctor/internal/dev/rsstest"
)

// target is a running testdata/target.
type target struct {
	cmd        *exec.Cmd
	stdin      io.WriteCloser
	lines      *bufio.Scanner
	pid        int
	goroutines int    // runtime.NumGoroutine() when it said ready
	pprof      string // its pprof address, "" when it links none
}

// build builds testdata/target with the toolchain ("" = the installed one), with pprof or not.
func build(t testing.TB, toolchain string, withPprof bool) string {
	t.Helper()
	var env []string
	if withPprof {
		env = append(env, "GOFLAGS=-tags=withpprof")
	}
	if toolchain != "" {
		return gotool.Build(t, toolchain, ".", "./testdata/target", env...)
	}
	bin := filepath.Join(t.TempDir(), "target")
	cmd := exec.Command("go", "build", "-o", bin, "./testdata/target")
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// start runs bin and waits for its ready line; the test's cleanup ends it and checks that it
// exited 0: reading it never harmed it.
func start(t testing.TB, bin string, args ...string) *target {
	t.Helper()
	cmd := exec.Command(bin, args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tg := &target{cmd: cmd, stdin: stdin, lines: bufio.NewScanner(out)}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("the target did not exit cleanly after being read: %v", err)
			}
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			t.Error("the target did not exit within 20s of the end of its input: left stopped?")
		}
	})
	f := strings.Fields(tg.line(t))
	if len(f) != 4 || f[0] != "ready" {
		t.Fatalf("target said %q, want ready PID GOROUTINES ADDR", f)
	}
	tg.pid, _ = strconv.Atoi(f[1])
	tg.goroutines, _ = strconv.Atoi(f[2])
	if f[3] != "-" {
		tg.pprof = f[3]
	}
	return tg
}

func (tg *target) line(t testing.TB) string {
	t.Helper()
	if !tg.lines.Scan() {
		t.Fatalf("the target ended: %v", tg.lines.Err())
	}
	return tg.lines.Text()
}

// alloc makes the target retain n objects from main.later and publish its profile.
func (tg *target) alloc(t *testing.T, n int) {
	t.Helper()
	fmt.Fprintf(tg.stdin, "alloc %d\n", n)
	if l := tg.line(t); l != "done" {
		t.Fatalf("target said %q after alloc", l)
	}
}

func open(t testing.TB, pid int) *memread.Reader {
	t.Helper()
	r, err := memread.Open(pid)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// TestHeapProfileIsPprofs reads an idle program's heap profile from its memory and fetches it
// from its /debug/pprof/heap: every sample, stack (inlined frames in one location), file,
// line, value and label must be the same, for Go 1.26 and Go 1.27 (whose buckets count no
// bytes).
func TestHeapProfileIsPprofs(t *testing.T) {
	for _, tc := range []string{"", gotool.Go127} {
		name := tc
		if name == "" {
			name = "installed"
		}
		t.Run(name, func(t *testing.T) {
			tg := start(t, build(t, tc, true))
			r := open(t, tg.pid)
			if !r.LinksProfiling() {
				t.Error("a program serving net/http/pprof reads as linking no profiling")
			}
			p, hr, err := r.HeapProfile()
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.Get("http://" + tg.pprof + "/debug/pprof/heap")
			if err != nil {
				t.Fatal(err)
			}
			want, err := profile.Parse(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if hr.Rate != 512*1024 || p.Period != want.Period {
				t.Errorf("rate %d, period %d; pprof's period %d", hr.Rate, p.Period, want.Period)
			}
			got, exp := samples(p), samples(want)
			if strings.Join(got, "\n") != strings.Join(exp, "\n") {
				t.Errorf("read from memory:\n%s\nserved by pprof:\n%s", strings.Join(got, "\n"), strings.Join(exp, "\n"))
			}
			if !hasFrames(p, "main.newBuf", "main.retain") || !hasFrames(p, "main.churn") {
				t.Errorf("no sample of main.retain (with main.newBuf inlined) or of main.churn:\n%s", strings.Join(got, "\n"))
			}
			if hr.Skipped != 0 || hr.Records < len(exp) {
				t.Errorf("reading: %v", hr)
			}
		})
	}
}

// hasFrames says whether a sample's leaf location holds these functions, innermost first.
func hasFrames(p *profile.Profile, fns ...string) bool {
	for _, s := range p.Sample {
		if len(s.Location) == 0 || len(s.Location[0].Line) != len(fns) {
			continue
		}
		ok := true
		for i, ln := range s.Location[0].Line {
			ok = ok && ln.Function.Name == fns[i]
		}
		if ok {
			return true
		}
	}
	return false
}

// TestStatsAreTheRuntimes compares the figures read from memory with what the idle program's
// runtime reports: its goroutine count, and the MemStats block of heap?debug=1 (read after,
// so the figures the fetch itself moves are compared loosely).
func TestStatsAreTheRuntimes(t *testing.T) {
	tg := start(t, build(t, "", true))
	r := open(t, tg.pid)
	g, err := r.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if g.Source != memread.Source || g.Goroutines != tg.goroutines {
		t.Errorf("source %q, goroutines %d; the program counted %d", g.Source, g.Goroutines, tg.goroutines)
	}
	ms := memStats(t, tg.pprof)
	exact := map[string][2]uint64{
		"NumGC":        {g.GCCycles, ms["NumGC"]},
		"NumForcedGC":  {g.GCForcedCycles, ms["NumForcedGC"]},
		"NextGC":       {g.HeapGoalBytes, ms["NextGC"]},
		"PauseTotalNs": {uint64(g.PauseTotalSeconds*1e9 + 0.5), ms["PauseTotalNs"]},
	}
	for k, v := range exact {
		if v[0] != v[1] {
			t.Errorf("%s: read %d, MemStats %d", k, v[0], v[1])
		}
	}
	near := map[string][2]uint64{
		"HeapAlloc":  {g.HeapObjectsBytes, ms["HeapAlloc"]},
		"TotalAlloc": {g.AllocBytesTotal, ms["TotalAlloc"]},
		"Sys":        {g.TotalBytes, ms["Sys"]},
		"HeapInuse":  {g.HeapObjectsBytes + g.HeapUnusedBytes, ms["HeapInuse"]},
		"StackInuse": {g.HeapStacksBytes, ms["StackInuse"]},
	}
	for k, v := range near {
		if d := float64(v[0]) - float64(v[1]); d < -0.05*float64(v[1])-256<<10 || d > 0.05*float64(v[1])+256<<10 {
			t.Errorf("%s: read %d, MemStats %d: more than 5%% apart", k, v[0], v[1])
		}
	}
	if g.HeapLiveBytes < 2000*4096 || g.HeapLiveBytes > g.HeapObjectsBytes+1<<20 || g.GOGC != 100 || g.GOMAXPROCS <= 0 || g.CPUTotalSeconds <= 0 || g.GCTotalSeconds <= 0 {
		t.Errorf("live %d (retains 8 MiB), in use %d, GOGC %d, GOMAXPROCS %d, CPU %.3fs, GC CPU %.3fs",
			g.HeapLiveBytes, g.HeapObjectsBytes, g.GOGC, g.GOMAXPROCS, g.CPUTotalSeconds, g.GCTotalSeconds)
	}
}

// memStats fetches the MemStats block of heap?debug=1 ("# Name = value" lines).
func memStats(t *testing.T, addr string) map[string]uint64 {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/debug/pprof/heap?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]uint64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimPrefix(sc.Text(), "# "), " = ")
		switch {
		case !ok:
		case k == "PauseNs": // the last 256 pauses: all of them in a young program
			for _, f := range strings.Fields(strings.Trim(v, "[]")) {
				n, _ := strconv.ParseUint(f, 10, 64)
				out["PauseTotalNs"] += n
			}
		case k == "Stack": // "inuse / sys"
			inuse, _, _ := strings.Cut(v, " / ")
			out["StackInuse"], _ = strconv.ParseUint(inuse, 10, 64)
		default:
			if n, err := strconv.ParseUint(v, 10, 64); err == nil {
				out[k] = n
			}
		}
	}
	return out
}

// TestGoroutineProfile stops the program to list its goroutines' stacks: the parked ones form
// one sample, labelled with the function that started them, and the program runs on (it allocates and exits cleanly afterwards).
func TestGoroutineProfile(t *testing.T) {
	tg := start(t, build(t, "", false), "-parked", "25")
	r := open(t, tg.pid)
	p, gr, err := r.GoroutineProfile()
	if err != nil {
		t.Fatal(err)
	}
	if gr.Stopped <= 0 || gr.Goroutines != tg.goroutines {
		t.Errorf("stopped %s, %d goroutines; the program counts %d", gr.Stopped, gr.Goroutines, tg.goroutines)
	}
	found := false
	for _, s := range p.Sample {
		for _, l := range s.Location {
			for _, ln := range l.Line {
				if ln.Function.Name == "main.parked" {
					found = found || s.Value[0] == 25
					// The runtime's profile does not say who started them; this one does.
					if c := s.Label[culprit.CreatedByLabel]; len(c) != 1 || c[0] != "main.main" {
						t.Errorf("the goroutines parked in main.parked are labelled created by %q, want main.main", c)
					}
				}
			}
		}
	}
	if !found {
		t.Errorf("no sample of the 25 goroutines parked in main.parked")
	}
	// A go statement with arguments runs a compiler-generated wrapper (main.main.gowrap1)
	// that calls main.parkedOn: the runtime's stacks leave wrappers out, and so do these.
	var on *profile.Sample
	for _, s := range p.Sample {
		names := sampleFuncs(s)
		if slices.ContainsFunc(names, func(n string) bool { return strings.Contains(n, "gowrap") }) {
			t.Errorf("a stack holds a go statement's wrapper: %v", names)
		}
		if slices.Contains(names, "main.parkedOn") {
			on = s
		}
	}
	if on == nil || on.Value[0] != 3 || sampleFuncs(on)[len(sampleFuncs(on))-1] != "main.parkedOn" || on.Label[culprit.CreatedByLabel][0] != "main.main" {
		t.Errorf("the 3 goroutines parked in main.parkedOn: %v", on)
	}
	tg.alloc(t, 10) // it runs
}

// sampleFuncs are a sample's functions, leaf first.
func sampleFuncs(s *profile.Sample) []string {
	var out []string
	for _, l := range s.Location {
		for _, ln := range l.Line {
			out = append(out, ln.Function.Name)
		}
	}
	return out
}

// TestEnableHeapProfiling turns on the sampling of a program that links no profiling: its
// profile is empty of its own code before, and shows what it allocates after, at the default
// rate; the program runs on and exits cleanly.
func TestEnableHeapProfiling(t *testing.T) {
	tg := start(t, build(t, "", false))
	r := open(t, tg.pid)
	if r.LinksProfiling() {
		t.Error("a program without pprof reads as linking profiling")
	}
	p, hr, err := r.HeapProfile()
	if err != nil {
		t.Fatal(err)
	}
	if hr.Rate != 0 || hasFrames(p, "main.retain") {
		t.Fatalf("rate %d before enabling; main.retain sampled: %v", hr.Rate, hasFrames(p, "main.newBuf", "main.retain"))
	}
	on, err := r.EnableHeapProfiling(512 << 10)
	if err != nil || !on {
		t.Fatalf("EnableHeapProfiling: %v, %v", on, err)
	}
	if again, err := r.EnableHeapProfiling(1); again || err != nil {
		t.Errorf("a second EnableHeapProfiling changed the rate again: %v, %v", again, err)
	}
	tg.alloc(t, 4000) // 32 MiB from main.later
	p, hr, err = r.HeapProfile()
	if err != nil {
		t.Fatal(err)
	}
	var later int64
	for _, s := range p.Sample {
		if len(s.Location) > 0 && s.Location[0].Line[0].Function.Name == "main.later" {
			later += s.Value[3]
		}
	}
	if hr.Rate != 512<<10 || later < 16<<20 || later > 64<<20 {
		t.Errorf("rate %d; main.later holds %d bytes in use by the profile, want about 32 MiB", hr.Rate, later)
	}
}

// TestRefusals: what memdoctor cannot read is refused in one line, saying why.
func TestRefusals(t *testing.T) {
	sleep := exec.Command("sleep", "30")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	defer sleep.Process.Kill()
	if _, err := memread.Open(sleep.Process.Pid); err == nil || !strings.Contains(err.Error(), "not a Go program") {
		t.Errorf("sleep: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "stripped")
	if out, err := exec.Command("go", "build", "-ldflags=-s -w", "-o", bin, "./testdata/target").CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	tg := start(t, bin)
	if _, err := memread.Open(tg.pid); err == nil || !strings.Contains(err.Error(), "rebuild without -s and -w") {
		t.Errorf("stripped: %v", err)
	}
}

// TestPausesAreTheRuntimes reads an idle program's stop-the-world pause histograms before and
// after what stops its world: a runtime.ReadMemStats (its heap?debug=1 page), which is not the
// GC's, and two GC cycles (its "alloc" command), each stopping it twice.
func TestPausesAreTheRuntimes(t *testing.T) {
	tg := start(t, build(t, "", true))
	r := open(t, tg.pid)
	p0, err := r.Pauses()
	if err != nil {
		t.Fatal(err)
	}
	memStats(t, tg.pprof)
	p1, err := r.Pauses()
	if err != nil {
		t.Fatal(err)
	}
	if n, longest := p1.TotalOther.Since(p0.TotalOther); n < 1 || longest <= 0 {
		t.Errorf("after a ReadMemStats: %d pause(s) other than the GC's, the longest under %v; want one at least", n, longest)
	}
	if n, _ := p1.StoppingOther.Since(p0.StoppingOther); n < 1 {
		t.Errorf("after a ReadMemStats: %d time(s) stopping the world other than the GC's; want one at least", n)
	}
	if n, _ := p1.TotalGC.Since(p0.TotalGC); n != 0 {
		t.Errorf("an idle program with no GC: %d GC pause(s)", n)
	}
	tg.alloc(t, 10)
	p2, err := r.Pauses()
	if err != nil {
		t.Fatal(err)
	}
	if n, longest := p2.TotalGC.Since(p1.TotalGC); n < 4 || longest <= 0 || longest > 10*time.Second {
		t.Errorf("after two GC cycles: %d GC pause(s), the longest under %v; want 4 at least", n, longest)
	}
}

// TestDetach: a reader that let go of the executable's debugging information reads the same
// heap profile (files and lines included), figures and pauses through /proc/PID/mem alone,
// refuses goroutine profiles, and no longer holds what it let go of.
func TestDetach(t *testing.T) {
	tg := start(t, build(t, "", true))
	want, _, err := open(t, tg.pid).HeapProfile()
	if err != nil {
		t.Fatal(err)
	}
	held := heapInUse()
	r := open(t, tg.pid)
	opened := heapInUse()
	if err := r.Detach(); err != nil {
		t.Fatal(err)
	}
	if r.Target() != nil {
		t.Error("a detached reader still holds its target")
	}
	if detached := heapInUse(); detached-held > (opened-held)/2 {
		t.Errorf("the reader held %.1f MiB more once open, %.1f MiB detached: want less than half", mib(opened-held), mib(detached-held))
	}
	got, _, err := r.HeapProfile() // its first: the files' names are read after the detach
	if err != nil {
		t.Fatal(err)
	}
	if g, w := samples(got), samples(want); strings.Join(g, "\n") != strings.Join(w, "\n") || !hasFrames(got, "main.newBuf", "main.retain") {
		t.Errorf("detached, the heap profile reads:\n%s\nattached:\n%s", strings.Join(g, "\n"), strings.Join(w, "\n"))
	}
	g, err := r.Stats()
	if err != nil || g.Goroutines != tg.goroutines || g.HeapLiveBytes < 2000*4096 {
		t.Errorf("detached: figures %+v, %v; want %d goroutines and the 8 MiB it retains live", g, err, tg.goroutines)
	}
	p0, err := r.Pauses()
	if err != nil {
		t.Fatal(err)
	}
	memStats(t, tg.pprof)
	p1, err := r.Pauses()
	if n, _ := p1.TotalOther.Since(p0.TotalOther); err != nil || n < 1 {
		t.Errorf("detached: %d pause(s) after a ReadMemStats (%v)", n, err)
	}
	if _, _, err := r.GoroutineProfile(); !errors.Is(err, memread.ErrDetached) {
		t.Errorf("a detached reader's goroutine profile: %v, want ErrDetached", err)
	}
}

// heapInUse is this test's own heap in use after two GCs, in bytes.
func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// TestReadingLeavesTheProcessAsItWas reads an idle program's heap profile, figures, pauses and
// goroutines from its memory, over and over, attached and detached: none of it makes the
// program bigger (its anonymous memory within 1 MiB, or 1%, of what it was).
func TestReadingLeavesTheProcessAsItWas(t *testing.T) {
	tg := start(t, build(t, "", false))
	before := rsstest.Settled(t, tg.pid)
	r := open(t, tg.pid)
	read := func(what string, goroutines bool) {
		for range 10 {
			if _, _, err := r.HeapProfile(); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if _, err := r.Stats(); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if _, err := r.Pauses(); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if goroutines {
				if _, _, err := r.GoroutineProfile(); err != nil {
					t.Fatalf("%s: %v", what, err)
				}
			}
		}
		rsstest.Check(t, tg.pid, before, what)
	}
	read("reading it attached", true)
	if err := r.Detach(); err != nil {
		t.Fatal(err)
	}
	read("reading it detached", false)
}
