package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/holders"
	"github.com/memdoctor/memdoctor/internal/dev/advice"
	"github.com/memdoctor/memdoctor/lab"
)

// TestHolderScenarios runs every holder scenario, reads it with memdoctor holders while it
// runs, checks the named path, then crashes it with GOTRACEBACK=crash and checks that its core
// names the same path: the same, or, where a function's goroutine holds the records while it
// runs (lab.HolderExpect.Running), the same variable of that function.
func TestHolderScenarios(t *testing.T) {
	defer parallel(t)() // given back when the subtests are registered: they take slots of their own
	for _, sc := range lab.HolderScenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			defer parallel(t)()
			dir := t.TempDir()
			cmd, pid := startHolderScenario(t, dir, sc.Name)
			time.Sleep(2500 * time.Millisecond) // about 250 records, nearly all sampled
			live := readHolders(t, sc.Holder.Site, strconv.Itoa(pid))
			if st := procState(pid); st == 't' || st == 'T' {
				t.Fatalf("process %d is left stopped (state %c)", pid, st)
			}
			p := checkHolderPath(t, "live", live, sc.Holder)

			// The core of the same process names the same path.
			cmd.Process.Signal(syscall.SIGQUIT)
			cmd.Wait()
			core := findCore(t, dir, pid)
			fromCore := readHolders(t, sc.Holder.Site, core, memdoctorBin)
			if c := checkHolderPath(t, "core", fromCore, sc.Holder); heldAs(c.Expr, sc.Holder) != heldAs(p.Expr, sc.Holder) {
				t.Errorf("the core names %q, the live process %q", c.Expr, p.Expr)
			}
		})
	}
}

// startHolderScenario starts memdoctor lab run NAME in dir, able to leave a core there, and
// waits until it leaks.
func startHolderScenario(t *testing.T, dir, name string) (*exec.Cmd, int) {
	t.Helper()
	cmd := exec.Command("sh", "-c", "ulimit -c unlimited && exec \"$0\" lab run \"$1\"", memdoctorBin, name)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOTRACEBACK=crash")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = nil
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.Contains(line, "leaking") {
		t.Fatalf("lab run %s: %q, %v", name, line, err)
	}
	go func() { bufio.NewReader(out).WriteTo(discard{}) }()
	return cmd, cmd.Process.Pid
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// readHolders runs memdoctor holders --site SITE --json on a PID or a CORE EXECUTABLE.
func readHolders(t *testing.T, site string, target ...string) *holders.Result {
	t.Helper()
	out := filepath.Join(t.TempDir(), "holders.json")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := append([]string{"holders", "--site", site, "--json", out}, target...)
	r := memdoctor(t, ctx, args...)
	if r.code != 0 {
		t.Fatalf("memdoctor %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var res holders.Result
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if len(target) == 1 && !strings.Contains(r.stderr, "stopped for") {
		t.Errorf("memdoctor holders did not say how long it stopped the process:\n%s", r.stderr)
	}
	return &res
}

// checkHolderPath checks that the heaviest path of the site's culprit is the expected one.
func checkHolderPath(t *testing.T, what string, res *holders.Result, want *lab.HolderExpect) holders.Path {
	t.Helper()
	if len(res.Culprits) != 1 || len(res.Culprits[0].Paths) == 0 {
		t.Fatalf("%s: no path for %s: %+v", what, want.Site, res)
	}
	c := res.Culprits[0]
	if c.Samples < 20 {
		t.Errorf("%s: only %d sampled objects of %s", what, c.Samples, want.Site)
	}
	p := c.Paths[0]
	root := p.Root.Kind == want.Root || want.Running != "" && p.Root.Kind == "goroutine" && strings.HasPrefix(p.Expr, want.Running)
	if !root || !strings.Contains(plainSteps(p.Expr, want), want.Path) || p.Share < 0.5 {
		var got []string
		for _, q := range c.Paths {
			got = append(got, fmt.Sprintf("%.2f %s %s", q.Share, q.Root.Kind, q.Expr))
		}
		t.Errorf("%s: want a %s root and a path with %q holding most of %s; got:\n%s", what, want.Root, want.Path, want.Site, strings.Join(got, "\n"))
	}
	// Every step is named: no object of unknown type, no word named by its offset.
	for _, h := range p.Hops {
		if strings.HasSuffix(h.Type, "-byte object") || hasOffset(h.Expr) {
			t.Errorf("%s: a step of %s is not named: %+v", what, p.Expr, p.Hops)
			break
		}
	}
	checkCut(t, what, c, want)
	return p
}

// checkCut checks what to cut: the expected object first, holding most of the culprit and
// freeing at least half of its reachable sampled bytes; none where nothing holds the records
// alone. A cut never frees nothing.
func checkCut(t *testing.T, what string, c holders.Culprit, want *lab.HolderExpect) {
	t.Helper()
	reachable := c.Bytes - c.GarbageBytes
	for _, cut := range c.Cuts {
		if cut.Frees == 0 || cut.Share <= 0 {
			t.Errorf("%s: a cut that frees nothing: %+v", what, cut)
		}
	}
	if want.Cut == "" {
		if len(c.Cuts) > 0 && c.Cuts[0].Share > 0.5 {
			t.Errorf("%s: no one object holds the records, yet the first cut is %s (%.0f%%)", what, c.Cuts[0].Expr, 100*c.Cuts[0].Share)
		}
		return
	}
	if len(c.Cuts) == 0 {
		t.Errorf("%s: no cut; want %s", what, want.Cut)
		return
	}
	cut := c.Cuts[0]
	if !strings.HasSuffix(plainSteps(cut.Expr, want), want.Cut) || cut.Share < 0.9 || float64(cut.Frees) < reachable/2 {
		t.Errorf("%s: want first to cut %s, holding most of the %.0f reachable sampled bytes; got %s (%.0f%%, frees %d)",
			what, want.Cut, reachable, cut.Expr, 100*cut.Share, cut.Frees)
	}
}

// heldAs is what a path names the records by: the whole path, or, for a scenario whose
// records a running function's goroutine holds (want.Running), the path from that function
// on, in plain steps: the runtime's timer heap reaches the callback's closure
// ("...timer.arg.(func()){F}.reports[i]") and the callback's frame its own ("F.reports[i]").
func heldAs(expr string, want *lab.HolderExpect) string {
	if want.Running == "" {
		return expr
	}
	if i := strings.LastIndex(expr, want.Running); i >= 0 {
		expr = expr[i:]
	}
	return strings.NewReplacer("{", "", "}", "").Replace(plainSteps(expr, want))
}

// plainSteps is a path without the ellipsis that marks a step taken twice, for a scenario
// whose records a running function's goroutine holds: read from the frame of the callback, a
// CI run's core named the captured variable so ("F.reports…[i]", a variable captured by
// reference). Other paths are as named.
func plainSteps(expr string, want *lab.HolderExpect) string {
	if want.Running == "" {
		return expr
	}
	return strings.ReplaceAll(expr, "…", "")
}

// hasOffset says whether a path's step names a word by its offset ("+24").
func hasOffset(expr string) bool {
	for i := 0; i+1 < len(expr); i++ {
		if expr[i] == '+' && expr[i+1] >= '0' && expr[i+1] <= '9' {
			return true
		}
	}
	return false
}

// procState reads a process's state letter from /proc/PID/stat.
func procState(pid int) byte {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return 0
	}
	return s[i+2]
}

// findCore finds the core the kernel wrote for pid in dir.
func findCore(t *testing.T, dir string, pid int) string {
	t.Helper()
	for _, name := range []string{"core", "core." + strconv.Itoa(pid)} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return filepath.Join(dir, name)
		}
	}
	pattern, _ := os.ReadFile("/proc/sys/kernel/core_pattern")
	t.Fatalf("no core in %s (kernel.core_pattern is %q: memdoctor's tests need cores written as files)", dir, strings.TrimSpace(string(pattern)))
	return ""
}

// TestHoldersGcore reads a core that gdb's gcore wrote of a running process (the process
// keeps running), and finds the same path as in the live process.
func TestHoldersGcore(t *testing.T) {
	if _, err := exec.LookPath("gcore"); err != nil {
		t.Fatal("gcore (Debian's gdb) is not installed; .ci/run installs it")
	}
	pid, heartbeat := startHoldersTarget(t, holdersTargetBin, 20000)
	live := readHolders(t, "main.build", strconv.Itoa(pid))
	prefix := filepath.Join(t.TempDir(), "core")
	if out, err := exec.Command("gcore", "-o", prefix, strconv.Itoa(pid)).CombinedOutput(); err != nil {
		t.Fatalf("gcore: %v\n%s", err, out)
	}
	core := prefix + "." + strconv.Itoa(pid)
	defer os.Remove(core)
	fromCore := readHolders(t, "main.build", core, holdersTargetBin)
	os.Remove(core)
	runsAgain(t, pid, heartbeat)
	l, c := live.Culprits[0], fromCore.Culprits[0]
	if len(l.Paths) == 0 || len(c.Paths) == 0 || l.Paths[0].Expr != c.Paths[0].Expr || c.Paths[0].Expr != "main.registry[value].payload" {
		t.Fatalf("live %+v\ncore %+v", l.Paths, c.Paths)
	}
	// The process runs between the two readings (its heartbeat allocates): the counts agree
	// within a few objects.
	if d := fromCore.Heap.Objects - live.Heap.Objects; d < -100 || d > 100 {
		t.Errorf("the live process had %d objects reachable, its core %d", live.Heap.Objects, fromCore.Heap.Objects)
	}
}

// TestHoldersCapturedServer: nats-server's shape. One large struct in a larger size class is
// one value, not an array; a closure's temporary copy of what it captured is named by the
// captured variable; a site named twice counts once; a site that allocated nothing sampled
// is an error.
func TestHoldersCapturedServer(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "holders-captured")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/holders-captured").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	pid := strconv.Itoa(cmd.Process.Pid)
	once := readHolders(t, "main.keyOf", pid)
	twice := readHolders(t, "main.keyOf", "--site", "main.keyOf", pid)
	c := once.Culprits[0]
	if len(c.Paths) == 0 || c.Paths[0].Expr != "main.(*Server).handleSignals.func1.s.gacc.lqws[key]" {
		t.Fatalf("want main.(*Server).handleSignals.func1.s.gacc.lqws[key] first; got %+v", c.Paths)
	}
	for _, h := range c.Paths[0].Hops {
		if strings.HasPrefix(h.Type, "[]main.Server") {
			t.Errorf("the one Server is read as an array: %+v", c.Paths[0].Hops)
		}
	}
	if n := len(twice.Culprits); n != 1 || twice.Culprits[0].Samples > c.Samples*11/10 {
		t.Errorf("a site named twice: %d culprits, %d samples (once: %d)", n, twice.Culprits[0].Samples, c.Samples)
	}
	r := memdoctor(t, context.Background(), "holders", "--site", "main.nosuch", pid)
	if r.code != 1 || !strings.Contains(r.stdout, "no sampled object was allocated there") {
		t.Errorf("an unknown site: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestWatchHolders: watch --holders reads who holds a confirmed heap leak at the end of the
// watch, prints it after the diagnosis, and keeps it in the session for report and serve.
func TestWatchHolders(t *testing.T) {
	if testing.Short() {
		t.Skip("records a leaking lab scenario for 40 s or more")
	}
	defer parallel(t)()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	lab := exec.CommandContext(ctx, memdoctorBin, "lab", "run", "tcp-reassembly")
	out, _ := lab.StdoutPipe()
	if err := lab.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lab.Process.Kill(); lab.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	i := strings.Index(line, "http://")
	if err != nil || i < 0 {
		t.Fatalf("lab run tcp-reassembly: %q %v", line, err)
	}
	url := strings.Fields(line[i:])[0]
	dir := filepath.Join(t.TempDir(), "s")
	r := memdoctor(t, ctx, "watch", "--duration", "40s", "--interval", "3s", "--holders", "--out", dir, url)
	if r.code != 0 {
		t.Fatalf("watch --holders: exit %d\n%s", r.code, r.stderr)
	}
	res, ok, err := holders.Load(dir)
	if !ok || err != nil {
		t.Fatalf("no holders in the session (%v):\n%s\n%s", err, r.stdout, r.stderr)
	}
	if len(res.Culprits) == 0 || len(res.Culprits[0].Paths) == 0 || !strings.Contains(res.Culprits[0].Paths[0].Expr, ".streams[value].pending[i].data") {
		t.Errorf("watch --holders named %+v", res.Culprits)
	}
	if !strings.Contains(r.stdout, "Holders in process") || !strings.Contains(r.stderr, "stopped for") {
		t.Errorf("the holders are not printed after the diagnosis:\n%s", r.stdout)
	}
	checkHeldInFinding(t, "watch --holders", r.stdout, r.stderr, loadDiagnosis(t, filepath.Join(dir, "diagnosis.json")), false)

	// Once the service is gone, a report of the session still shows who held it, and names no
	// command for the process.
	lab.Process.Kill()
	lab.Wait()
	html, js := filepath.Join(t.TempDir(), "r.html"), filepath.Join(t.TempDir(), "d.json")
	rr := memdoctor(t, ctx, "report", "--html", html, "--json", js, dir)
	if rr.code != 0 {
		t.Fatalf("report --html: %s", rr.stderr)
	}
	b, _ := os.ReadFile(html)
	if !strings.Contains(string(b), "Who holds it") {
		t.Error("the HTML report has no Who holds it section")
	}
	if !strings.Contains(string(b), `<ul class="held"><li>held by github.com/memdoctor/memdoctor/`+reassemblyHolder) {
		t.Error("the HTML report's heap-leak card does not say who holds it")
	}
	d := loadDiagnosis(t, js)
	heapLeakOf(t, d, "")
	for _, a := range advice.Dead(d, true) {
		t.Errorf("report of the watch once the service is gone: %s", a)
	}
}
