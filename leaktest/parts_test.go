package leaktest

import (
	"bytes"
	"compress/gzip"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/leaktest/trend"
)

// series is n readings every step calls, valued f(i).
func series(n int, step int64, f func(i int) float64) []trend.Point {
	pts := make([]trend.Point, n)
	for i := range pts {
		pts[i] = trend.Point{At: int64(i) * step, V: f(i)}
	}
	return pts
}

// The judgement on series of known shape, against calls: what the statistics say of each.
func TestJudge(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	noise := func(sd float64) float64 { return rng.NormFloat64() * sd }
	const base = 4 << 20
	for _, tc := range []struct {
		name string
		pts  []trend.Point
		want confidence
	}{
		{"steady leak, 64 B per call", series(10, 10000, func(i int) float64 { return base + 64*10000*float64(i) + noise(4096) }), confirmed},
		{"steady leak seen over few calls", series(8, 100, func(i int) float64 { return base + 1000*100*float64(i) + noise(1024) }), confirmed},
		{"flat with noise", series(12, 10000, func(i int) float64 { return base + noise(32<<10) }), clear},
		{"step at the start", series(12, 10000, func(i int) float64 { return base + 8<<20*float64(min(i, 1)) + noise(4096) }), clear},
		{"fills then holds", series(14, 10000, func(i int) float64 { return base + 10<<20*(1-math.Exp(-float64(i)/1.5)) + noise(4096) }), clear},
		{"below the floor", series(12, 10000, func(i int) float64 { return base + 2000*float64(i) }), clear},
		{"below the bytes per call", series(12, 1e6, func(i int) float64 { return base + 0.5*1e6*float64(i) }), clear},
		{"decline", series(12, 10000, func(i int) float64 { return base - 1000*float64(i) }), clear},
		{"too few readings", series(2, 10000, func(i int) float64 { return base + 1<<20*float64(i) }), clear},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := judge(tc.pts, 1, minHeapGrowth)
			if g.conf != tc.want {
				t.Errorf("verdict %d, want %d (tau %.2f, p %.4f, late ratio %.2f, late share %.2f, snr %.1f, grew %.0f of %.0f)",
					g.conf, tc.want, g.tau, g.p, g.lateRatio, g.lateShare, g.snr, g.grew(), g.threshold)
			}
		})
	}
	// A consistent growth still too small to count is suspected: more rounds will tell.
	g := judge(series(12, 1000, func(i int) float64 { return base + 2000*float64(i) }), 1, minHeapGrowth)
	if g.conf != suspected {
		t.Errorf("a consistent growth of 22 KB (a third of the floor): verdict %d, want suspected", g.conf)
	}
}

const dump = `goroutine 1 [chan receive, 3 minutes]:
testing.(*T).Run(0xc000003a40, {0x5b2d5e?, 0x0?}, 0x5c7f08)
	/usr/local/go/src/testing/testing.go:1751 +0x3ab
main.main()
	_testmain.go:45 +0x9b

goroutine 7 [chan send]:
example.com/lib.(*controller).loop(0xc0000a0000)
	/root/go/pkg/mod/example.com/lib@v1.0.0/controller.go:64 +0x1e
created by example.com/lib.newController in goroutine 6
	/root/go/pkg/mod/example.com/lib@v1.0.0/controller.go:46 +0x4f

goroutine 8 [chan send]:
example.com/lib.(*controller).loop(0xc0000a0100)
	/root/go/pkg/mod/example.com/lib@v1.0.0/controller.go:64 +0x1e
created by example.com/lib.newController in goroutine 6
	/root/go/pkg/mod/example.com/lib@v1.0.0/controller.go:46 +0x4f

goroutine 9 [IO wait]:
internal/poll.runtime_pollWait(0x7f, 0x72)
	/usr/local/go/src/runtime/netpoll.go:351 +0x85
net.(*conn).Read(...)
	/usr/local/go/src/net/net.go:194
...additional frames elided...
created by net/http.(*Server).Serve in goroutine 1
	/usr/local/go/src/net/http/server.go:3454 +0x485
`

func TestParseGoroutines(t *testing.T) {
	gs := parseGoroutines([]byte(dump))
	if len(gs) != 4 {
		t.Fatalf("%d goroutines, want 4", len(gs))
	}
	g := gs[1]
	if g.id != 7 || g.state != "chan send" || g.top() != "example.com/lib.(*controller).loop" ||
		g.stack[0].file != "/root/go/pkg/mod/example.com/lib@v1.0.0/controller.go" || g.stack[0].line != 64 ||
		g.createdBy.fn != "example.com/lib.newController" || g.createdBy.line != 46 || g.parent != 6 {
		t.Errorf("goroutine 7: %+v", g)
	}
	if gs[0].state != "chan receive" || len(gs[0].stack) != 2 || gs[0].stack[1].file != "_testmain.go" {
		t.Errorf("goroutine 1: %+v", gs[0])
	}
	if gs[3].state != "IO wait" || len(gs[3].stack) != 2 || gs[3].createdBy.fn != "net/http.(*Server).Serve" {
		t.Errorf("goroutine 9: %+v", gs[3])
	}
	groups := groupGoroutines(gs, nil)
	if len(groups) != 3 {
		t.Errorf("%d groups, want 3", len(groups))
	}
	grown := grownGroups(groupGoroutines(gs[:1], nil), groups)
	if len(grown) != 2 || grown[0].added != 2 || grown[0].wait.line != 64 {
		t.Errorf("grown groups: %+v", grown)
	}
	if n := countNotIgnored([]byte(dump), []string{"example.com/lib.(*controller).loop"}); n != 2 {
		t.Errorf("%d goroutines not ignored, want 2", n)
	}
}

func FuzzParseGoroutines(f *testing.F) {
	f.Add([]byte(dump))
	f.Add([]byte("goroutine x [\n\n\ncreated by in goroutine \n\t:"))
	f.Fuzz(func(t *testing.T, text []byte) {
		for _, g := range parseGoroutines(text) {
			_ = g.top()
		}
	})
}

func TestDiffHeap(t *testing.T) {
	key := func(pcs ...uintptr) (k [32]uintptr) { copy(k[:], pcs); return k }
	before := map[[32]uintptr]heapRecord{key(1, 2): {inUseBytes: 256, inUseObjects: 1, allocBytes: 768, allocObjects: 3}}
	after := map[[32]uintptr]heapRecord{
		key(1, 2): {inUseBytes: 1024, inUseObjects: 4, allocBytes: 2304, allocObjects: 9},
		key(3):    {inUseBytes: 8, inUseObjects: 1, allocBytes: 8, allocObjects: 1},
		key(4):    {inUseBytes: 8, inUseObjects: 1, allocBytes: 8, allocObjects: 1}, // unchanged
	}
	before[key(4)] = after[key(4)]
	d := diffHeap(before, after)
	if len(d) != 2 {
		t.Fatalf("diff %+v", d)
	}
	for _, x := range d {
		if len(x.stack) == 2 && (x.stack[0] != 1 || x.inUseBytes != 768 || x.inUseObjects != 3 || x.allocObjects != 6 || x.allocBytes != 1536) {
			t.Errorf("diff of 1 2: %+v", x)
		}
		if len(x.stack) == 1 && x.inUseBytes != 8 {
			t.Errorf("diff of 3: %+v", x)
		}
	}
}

// Attribution: the program's line is the innermost frame of the main module; the library's
// line, the innermost frame in the module the program called.
func TestAttribute(t *testing.T) {
	a := attributor{
		mods:     modules{main: "example.com/app", deps: []string{"github.com/valyala/fasthttp", "golang.org/x/net", "example.com/app"}},
		loopCall: frame{fn: "example.com/app.TestX", file: "/app/x_test.go", line: 9},
	}
	f := func(fn string, line int) frame { return frame{fn: fn, file: "/src/" + fn, line: line} }
	for _, tc := range []struct {
		name       string
		frames     []frame
		fromFn     bool
		program    string
		inFn       bool
		lib        string
		elsewhere  bool
		libNoFrame bool
	}{
		{
			name: "a library's line under the program's",
			frames: []frame{f("runtime.mallocgc", 1), f("net/url.Parse", 2), f("golang.org/x/net/http/httpproxy.parse", 3),
				f("github.com/valyala/fasthttp/fasthttpproxy.(*Dialer).GetDialFunc", 88), f("github.com/valyala/fasthttp/fasthttpproxy.FasthttpHTTPDialer", 30),
				f("example.com/app.TestX.func1", 13)},
			fromFn: true, program: "example.com/app.TestX.func1", inFn: true, lib: "github.com/valyala/fasthttp/fasthttpproxy.(*Dialer).GetDialFunc",
		},
		{
			name:   "the program allocates itself",
			frames: []frame{f("runtime.mallocgc", 1), f("runtime.growslice", 2), f("example.com/app/store.(*S).add", 40), f("example.com/app.TestX.func1", 13)},
			fromFn: true, program: "example.com/app/store.(*S).add", inFn: true, libNoFrame: true,
		},
		{
			name:   "the standard library's allocating line",
			frames: []frame{f("runtime.mallocgc", 1), f("bytes.growSlice", 2), f("bytes.(*Buffer).grow", 3), f("example.com/app.handle", 7)},
			fromFn: true, program: "example.com/app.handle", inFn: true, lib: "bytes.growSlice",
		},
		{
			name:   "fn is a library's function",
			frames: []frame{f("runtime.mallocgc", 1), f("github.com/valyala/fasthttp.acquire", 5)},
			fromFn: true, program: "example.com/app.TestX", lib: "github.com/valyala/fasthttp.acquire",
		},
		{
			name:    "another goroutine, in a library",
			frames:  []frame{f("runtime.mallocgc", 1), f("github.com/valyala/fasthttp.(*Server).serve", 5)},
			program: "another goroutine", lib: "github.com/valyala/fasthttp.(*Server).serve", elsewhere: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := a.attribute(tc.frames, tc.fromFn)
			if s.program.fn != tc.program || s.inFn != tc.inFn || (s.elsewhere != "") != tc.elsewhere {
				t.Errorf("program %q (in fn %v, elsewhere %q), want %q (%v, %v)", s.program.fn, s.inFn, s.elsewhere, tc.program, tc.inFn, tc.elsewhere)
			}
			if tc.libNoFrame && s.lib.fn != "" || !tc.libNoFrame && s.lib.fn != tc.lib {
				t.Errorf("library line %q, want %q", s.lib.fn, tc.lib)
			}
		})
	}
	if c := a.mods.classify("example.com/app_test.TestY"); c != classMain {
		t.Errorf("an external test package: class %d", c)
	}
	if got := a.mods.module("golang.org/x/net/http/httpproxy"); got != "golang.org/x/net" {
		t.Errorf("module of x/net/http/httpproxy: %q", got)
	}
	if got := (modules{}).module("github.com/a/b/c/d"); got != "github.com/a/b" {
		t.Errorf("module of an unknown package: %q", got)
	}
}

func TestBytesText(t *testing.T) {
	for v, want := range map[float64]string{12: "12 B", 1536: "1.5 KiB", 3 << 20: "3 MiB", 5 << 30: "5 GiB", -2048: "-2 KiB"} {
		if got := bytesText(v); got != want {
			t.Errorf("bytesText(%g) = %q, want %q", v, got, want)
		}
	}
	if !strings.HasPrefix(signedBytes(3), "+") {
		t.Error("signedBytes(3) has no sign")
	}
}

func TestParseLeakProfile(t *testing.T) {
	const text = "goroutineleak profile: total 5\n" +
		"3 @ 0x47d82a 0x41421c 0x413e17 0x4de808 0x483561\n" +
		"#\t0x4de807\tmain.leak.func1+0x27\t/src/main.go:9\n" +
		"#\t0x4de900\tmain.caller+0x10\t/src/main.go:20\n" +
		"\n" +
		"2 @ 0x47d82a 0x4de999\n" +
		"#\t0x4de998\texample.com/lib.(*c).loop+0x1e\t/mod/lib/c.go:64\n"
	got := parseLeakProfile(text)
	if len(got) != 2 || got[frame{fn: "main.leak.func1", file: "/src/main.go", line: 9}] != 3 ||
		got[frame{fn: "example.com/lib.(*c).loop", file: "/mod/lib/c.go", line: 64}] != 2 {
		t.Errorf("parseLeakProfile: %v", got)
	}
	if got := parseLeakProfile("goroutineleak profile: total 0\n"); len(got) != 0 {
		t.Errorf("an empty profile: %v", got)
	}
}

const spinDump = `goroutine 21 [runnable]:
example.com/k8s.(*informer).resync(...)
	/src/k8s/informer.go:40
example.com/k8s.until(0x1, 0x0, 0xc000010000)
	/src/k8s/wait.go:22 +0x2e
created by example.com/k8s.(*informer).start in goroutine 7
	/src/k8s/informer.go:31 +0x4f

goroutine 22 [running]:
example.com/k8s.until(0x1, 0x0, 0xc000010100)
	/src/k8s/wait.go:17 +0x12
created by example.com/k8s.(*informer).start in goroutine 7
	/src/k8s/informer.go:31 +0x4f

goroutine 23 [runnable]:
example.com/k8s.(*informer).start.gowrap1()
	/src/k8s/informer.go:31
runtime.goexit({})
	/usr/local/go/src/runtime/asm_amd64.s:1771 +0x1
created by example.com/k8s.(*informer).start in goroutine 7
	/src/k8s/informer.go:31 +0x4f

goroutine 24 [select]:
example.com/moby.(*stream).next(...)
	/src/moby/stream.go:12
example.com/moby.(*container).attach.func1()
	/src/moby/attach.go:30 +0x5c
created by example.com/moby.(*container).attach in goroutine 7
	/src/moby/attach.go:28 +0x9a
`

// Goroutines that do not wait are grouped by their go statement wherever they were; the others
// by where they wait; each group names its own function (the bottom of the stack, the
// wrapper of a go statement with arguments left out).
func TestGroupOwnFunction(t *testing.T) {
	gs := parseGoroutines([]byte(spinDump))
	if own := gs[0].own(); own.fn != "example.com/k8s.until" {
		t.Errorf("own function of a spinner: %+v", own)
	}
	if own := gs[2].own(); own.fn != "" {
		t.Errorf("own function of a goroutine caught in its go statement's wrapper: %+v", own)
	}
	groups := groupGoroutines(gs, nil)
	if len(groups) != 2 {
		t.Fatalf("%d groups, want 2: %+v", len(groups), groups)
	}
	for _, g := range groups {
		switch g.state {
		case "running":
			if g.count != 3 || g.fn.fn != "example.com/k8s.until" || g.createdBy.line != 31 || g.fn.line != 0 {
				t.Errorf("the spinners' group: %+v", g)
			}
		case "select":
			if g.count != 1 || g.fn.fn != "example.com/moby.(*container).attach.func1" || g.wait.fn != "example.com/moby.(*stream).next" {
				t.Errorf("the waiting group: %+v", g)
			}
		default:
			t.Errorf("a group in state %q", g.state)
		}
	}
	var list []*goroutineGroup
	for _, g := range groups {
		list = append(list, g)
	}
	defineFuncs(list, map[string]frame{"example.com/k8s.until": {fn: "example.com/k8s.until", file: "/src/k8s/wait.go", line: 14}})
	for _, g := range list {
		if g.state == "running" && g.fn.where() != "k8s/wait.go:14" {
			t.Errorf("the spinners' function defined at %s", g.fn.where())
		}
	}
	for fn, want := range map[string]bool{"a.F.gowrap1": true, "a.(*T).Start.gowrap12": true, "a.gowrapper": false, "a.F.gowrapx": false, "a.F.func1": false} {
		if isGoWrapper(fn) != want {
			t.Errorf("isGoWrapper(%q) = %v", fn, !want)
		}
	}
}

// started is a goroutine's function, defined on the line after the comment.
func started(c chan struct{}) {
	<-c
}

// funcStarts reads where each function on a goroutine's stack is defined from the goroutine
// profile: a function inlined in the wrapper of its go statement included.
func TestFuncStarts(t *testing.T) {
	c := make(chan struct{})
	defer close(c)
	go started(c)
	go func(c chan struct{}) { <-c }(c)
	runtime.Gosched()
	time.Sleep(10 * time.Millisecond)
	starts := funcStarts()
	if len(starts) == 0 {
		t.Fatal("no function read from the goroutine profile")
	}
	self := "github.com/memdoctor/memdoctor/leaktest.started"
	if got := starts[self]; got.line != lineIn(t, "parts_test.go", "func started(c chan struct{}) {") || !strings.HasSuffix(got.file, "leaktest/parts_test.go") {
		t.Errorf("%s defined at %s:%d", self, got.file, got.line)
	}
	closure := "github.com/memdoctor/memdoctor/leaktest.TestFuncStarts.func1"
	if got := starts[closure]; got.line != lineIn(t, "parts_test.go", "go func(c chan struct{}) { <-c }(c)") {
		t.Errorf("%s defined at %s:%d", closure, got.file, got.line)
	}
}

func FuzzParseFuncStarts(f *testing.F) {
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 0); err != nil {
		f.Fatal(err)
	}
	zr, err := gzip.NewReader(&buf)
	if err != nil {
		f.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw)
	f.Add([]byte{0x2a, 0x05, 0x10, 0x01, 0x28, 0x07, 0x32, 0x01, 'x'})
	f.Add([]byte{0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		starts, err := parseFuncStarts(b)
		if err == nil {
			for name, fr := range starts {
				if fr.fn != name || fr.line <= 0 {
					t.Errorf("%q: %+v", name, fr)
				}
			}
		}
	})
}
