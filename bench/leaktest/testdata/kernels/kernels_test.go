// Package kernels holds goroutine-leak kernels: small programs with the shape of real
// concurrency bugs of large Go projects (etcd, grpc-go, kubernetes, moby, cockroach), written
// for memdoctor, each tested as its project's test could have tested it, with leaktest.Loop.
// Each test prints one KERNEL line: whether leaktest found the leak, whether its failure
// names the leaked goroutine's own function, the line of its definition and the go statement,
// how long it took, and how many of the kernel's goroutines Go's goroutineleak profile (Go
// 1.27) proves leaked. bench/leaktest's TestGoroutineLeakKernels builds and runs each in a
// process of its own (kernels_test.go there).
package kernels

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/leaktest"
)

// A kernel is one leak: the function its test loops, and what its failure must name.
type kernel struct {
	family string // the issue-30 family it stands for, if one
	fn     func()
	own    string // the leaked goroutine's own function (the one its go statement starts)
	// file, and the text of the line where the own function is defined and of the go
	// statement that starts it.
	file, def, goStmt string
	opts              []leaktest.Option
}

// recorder keeps what Loop reports instead of failing the test: the campaign measures.
type recorder struct {
	testing.TB
	errors, logs []string
}

func (r *recorder) Helper()                           {}
func (r *recorder) Error(args ...any)                 { r.errors = append(r.errors, fmt.Sprint(args...)) }
func (r *recorder) Errorf(format string, args ...any) { r.Error(fmt.Sprintf(format, args...)) }
func (r *recorder) Fatal(args ...any)                 { r.Error(args...) }
func (r *recorder) Fatalf(format string, args ...any) { r.Errorf(format, args...) }
func (r *recorder) Log(args ...any)                   { r.logs = append(r.logs, fmt.Sprint(args...)) }
func (r *recorder) Logf(format string, args ...any)   { r.Log(fmt.Sprintf(format, args...)) }

// run loops the kernel's function and prints its KERNEL line.
func run(t *testing.T, k kernel) {
	rec := &recorder{TB: t}
	start := time.Now()
	leaktest.Loop(rec, k.fn, k.opts...)
	wall := time.Since(start)
	failure := strings.Join(rec.errors, "\n")
	def, goStmt := where(t, k.file, k.def), where(t, k.file, k.goStmt)
	found := strings.Contains(failure, "goroutines") && strings.Contains(failure, "growing with the calls of fn: a leak")
	fmt.Printf("KERNEL %s family=%s found=%v own=%v def=%v go=%v leakprof=%d verdict=%s wall=%s\n",
		strings.TrimPrefix(t.Name(), "Test"), or(k.family, "-"), found, strings.Contains(failure, k.own),
		strings.Contains(failure, "their function, defined at "+def), strings.Contains(failure, "started by the go statement at "+goStmt),
		provenLeaked(k.own), verdict(failure+strings.Join(rec.logs, "\n")), wall.Round(time.Millisecond))
	t.Logf("%s\n%s", failure, strings.Join(rec.logs, "\n"))
}

// where is "kernels/FILE:LINE" of the line of the file that holds text.
func where(t *testing.T, file, text string) string {
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(src), "\n") {
		if strings.Contains(l, text) {
			return fmt.Sprintf("kernels/%s:%d", file, i+1)
		}
	}
	t.Fatalf("no line of %s holds %q", file, text)
	return ""
}

// provenLeaked is how many goroutines running fn (anywhere on their stack) Go's goroutineleak
// profile proves leaked, or -1 without the profile (before Go 1.27).
func provenLeaked(fn string) int {
	p := pprof.Lookup("goroutineleak")
	if p == nil {
		return -1
	}
	var buf bytes.Buffer
	if err := p.WriteTo(&buf, 1); err != nil {
		return -1
	}
	n, count := 0, 0
	for _, l := range strings.Split(buf.String(), "\n") {
		if c, _, ok := strings.Cut(l, " @ "); ok {
			fmt.Sscan(c, &count)
			continue
		}
		if strings.HasPrefix(l, "#\t") && strings.Contains(l, "\t"+fn+"+0x") {
			n += count
			count = 0 // once per record
		}
	}
	return n
}

// verdict is the test time leaktest reports until its verdict.
func verdict(out string) string {
	if m := verdictTime.FindStringSubmatch(out); m != nil {
		return m[1]
	}
	return "-"
}

var verdictTime = regexp.MustCompile(`(?:measured over|leaktest: no leak in|leaktest: not judged in) [^\n]*?\(([0-9.]+m?s)\)`)

func or(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}
