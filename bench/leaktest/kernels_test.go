package proof

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// go127 is the toolchain the kernels run on: Go 1.27's goroutineleak profile is what
// leaktest is compared with.
const go127 = "go1.27.0"

// TestGoroutineLeakKernels runs testdata/kernels, goroutine leaks with the shapes of real
// concurrency bugs of large Go projects, each in a process of its own built with Go 1.27:
// leaktest must find each, naming the leaked goroutine's own function, the line of its
// definition and its go statement; the table it logs says, beside, how many of each kernel's
// goroutines Go's goroutineleak profile proves leaked, and how long each test took.
// KERNELS_LEAKTEST=DIR tests another leaktest tree (an older commit's, to compare);
// KERNELS_RUNS=N runs each kernel N times.
func TestGoroutineLeakKernels(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the kernels with Go 1.27 and runs each for seconds")
	}
	if out, err := exec.Command("env", "GOTOOLCHAIN="+go127, "go", "version").CombinedOutput(); err != nil || !strings.Contains(string(out), go127) {
		t.Skipf("the %s toolchain cannot be fetched here (%v): %s", go127, err, out)
	}
	leaktestDir, err := filepath.Abs("../../leaktest")
	if err != nil {
		t.Fatal(err)
	}
	if d := os.Getenv("KERNELS_LEAKTEST"); d != "" {
		leaktestDir = d
	}
	runs := 1
	if n, err := strconv.Atoi(os.Getenv("KERNELS_RUNS")); err == nil && n > 0 {
		runs = n
	}
	bin := buildKernels(t, leaktestDir)
	list, err := exec.Command(bin, "-test.list", "^Test").Output()
	if err != nil {
		t.Fatalf("%s -test.list: %v", bin, err)
	}
	names := strings.Fields(string(list))
	var results []kernelResult
	for _, name := range names {
		for range runs {
			res := runKernel(t, bin, name)
			results = append(results, res)
			if !res.found || !res.own || !res.def || !res.goStmt {
				t.Errorf("%s: found %v, its own function named %v, its definition's line %v, the go statement %v:\n%s", name, res.found, res.own, res.def, res.goStmt, res.out)
			}
		}
	}
	t.Logf("leaktest %s, %d kernels, %d runs each:\n%s", leaktestDir, len(names), runs, kernelTable(results))
}

// buildKernels builds testdata/kernels' test binary with Go 1.27 against leaktestDir.
func buildKernels(t *testing.T, leaktestDir string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "kernels") // the failures name files by their directory
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join("testdata", "kernels", "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no kernels in testdata/kernels: %v", err)
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, filepath.Base(f)), src)
	}
	write(t, filepath.Join(dir, "go.mod"), []byte("module example.com/kernels\n\ngo 1.25.0\n\nrequire "+leaktestModule+" v0.0.0\n\nreplace "+leaktestModule+" => "+leaktestDir+"\n"))
	bin := filepath.Join(dir, "kernels.test")
	cmd := exec.Command("go", "test", "-c", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN="+go127)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the kernels with %s: %v\n%s", go127, err, out)
	}
	return bin
}

// kernelResult is one run of a kernel, as its KERNEL line says.
type kernelResult struct {
	name, family               string
	found, own, def, goStmt    bool
	proven                     int // goroutines the goroutineleak profile proves leaked (-1: no profile)
	verdict, wall, processWall time.Duration
	out                        string
}

var kernelLine = regexp.MustCompile(`KERNEL (\S+) family=(\S+) found=(\w+) own=(\w+) def=(\w+) go=(\w+) leakprof=(-?\d+) verdict=(\S+) wall=(\S+)`)

// runKernel runs one kernel's test in a process of its own, within a minute.
func runKernel(t *testing.T, bin, name string) kernelResult {
	t.Helper()
	start := time.Now()
	cmd := exec.Command(bin, "-test.run", "^"+name+"$", "-test.v", "-test.timeout", "1m")
	cmd.Dir = filepath.Dir(bin)
	outb, _ := cmd.CombinedOutput()
	res := kernelResult{name: strings.TrimPrefix(name, "Test"), processWall: time.Since(start), out: string(outb), proven: -1}
	m := kernelLine.FindStringSubmatch(res.out)
	if m == nil {
		t.Errorf("%s printed no KERNEL line:\n%s", name, res.out)
		return res
	}
	res.family = m[2]
	res.found, res.own, res.def, res.goStmt = m[3] == "true", m[4] == "true", m[5] == "true", m[6] == "true"
	res.proven, _ = strconv.Atoi(m[7])
	res.verdict, _ = time.ParseDuration(m[8])
	res.wall, _ = time.ParseDuration(m[9])
	return res
}

// kernelTable is the results as a table, with the counts of each column.
func kernelTable(results []kernelResult) string {
	var b strings.Builder
	yes := func(v bool) string {
		if v {
			return "yes"
		}
		return "no"
	}
	fmt.Fprintf(&b, "%-32s %-6s %-5s %-4s %-4s %-4s %-14s %-8s %-8s\n", "kernel", "family", "found", "own", "def", "go", "goroutineleak", "verdict", "Loop")
	var found, own, def, goStmt, proven int
	var maxWall time.Duration
	for _, r := range results {
		fmt.Fprintf(&b, "%-32s %-6s %-5s %-4s %-4s %-4s %-14d %-8s %-8s\n", r.name, r.family, yes(r.found), yes(r.own), yes(r.def), yes(r.goStmt), r.proven, r.verdict.Round(10*time.Millisecond), r.wall.Round(10*time.Millisecond))
		for _, c := range []struct {
			v bool
			n *int
		}{{r.found, &found}, {r.own, &own}, {r.def, &def}, {r.goStmt, &goStmt}, {r.proven > 0, &proven}} {
			if c.v {
				*c.n++
			}
		}
		maxWall = max(maxWall, r.wall)
	}
	fmt.Fprintf(&b, "found %d/%d, own function named %d, its definition's line %d, the go statement %d; the goroutineleak profile proves %d; the longest Loop %s\n",
		found, len(results), own, def, goStmt, proven, maxWall.Round(10*time.Millisecond))
	return b.String()
}
