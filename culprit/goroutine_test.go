package culprit

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/pprof/profile"
)

// groupsByCulprit indexes groups by their culprit function.
func groupsByCulprit(t *testing.T, groups []GoroutineGroup) map[string][]GoroutineGroup {
	t.Helper()
	m := make(map[string][]GoroutineGroup)
	keys := make(map[string]bool)
	for _, g := range groups {
		if keys[g.Key] {
			t.Errorf("duplicate key %q", g.Key)
		}
		keys[g.Key] = true
		m[g.Culprit.Function] = append(m[g.Culprit.Function], g)
	}
	return m
}

func totalCount(groups []GoroutineGroup) int {
	n := 0
	for _, g := range groups {
		n += g.Count
	}
	return n
}

// checkLive checks the groups of one live capture against liveCases.
// debug2 says whether wait states and creators are known; pkg is the package's path in the
// capture's frames (testPkg, or capturedPkg for the dumps in testdata).
func checkLive(t *testing.T, groups []GoroutineGroup, debug2 bool, pkg string) {
	t.Helper()
	by := groupsByCulprit(t, groups)
	for _, c := range liveCases {
		gs := by[pkg+c.fn]
		if len(gs) != 1 {
			t.Errorf("%s: %d groups, want 1: %+v", c.fn, len(gs), gs)
			continue
		}
		g := gs[0]
		if g.Count != c.count {
			t.Errorf("%s: count %d, want %d", c.fn, g.Count, c.count)
		}
		wantState, wantCreator := "", pkg+c.fn
		if debug2 {
			wantState, wantCreator = c.state, pkg+c.createdBy
		}
		if g.State != wantState {
			t.Errorf("%s: state %q, want %q", c.fn, g.State, wantState)
		}
		if g.CreatedBy != wantCreator {
			t.Errorf("%s: created by %q, want %q", c.fn, g.CreatedBy, wantCreator)
		}
		if !g.Culprit.Own || g.Culprit.Line == 0 || !strings.HasSuffix(g.Culprit.File, "live_test.go") {
			t.Errorf("%s: culprit %+v", c.fn, g.Culprit)
		}
		wantBlocking := c.blocking
		if wantBlocking == "" {
			wantBlocking = pkg + c.fn
		}
		if g.Blocking != wantBlocking {
			t.Errorf("%s: blocking %q, want %q", c.fn, g.Blocking, wantBlocking)
		}
		if !slicesContain(g.Stack, pkg+c.fn) || strings.Contains(g.Key, "0x") {
			t.Errorf("%s: stack %q key %q", c.fn, g.Stack, g.Key)
		}
	}
	// io.Copy is standard library only: in debug=2 its creator is the culprit.
	var copyGroup *GoroutineGroup
	for i, g := range groups {
		if slicesContain(g.Stack, "io.Copy") && !slicesContain(g.Stack, pkg+"blockIO") {
			if copyGroup != nil {
				t.Errorf("two io.Copy groups")
			}
			copyGroup = &groups[i]
		}
	}
	switch {
	case copyGroup == nil:
		t.Errorf("no io.Copy group")
	case copyGroup.Count != 1:
		t.Errorf("io.Copy count %d", copyGroup.Count)
	case debug2:
		if copyGroup.State != "IO wait" || copyGroup.CreatedBy != pkg+"startLive" ||
			copyGroup.Culprit.Function != pkg+"startLive" || !copyGroup.Culprit.Own {
			t.Errorf("io.Copy group: %+v", *copyGroup)
		}
	default:
		if copyGroup.Culprit.Own || IsStdlib(copyGroup.Culprit.Function) != true {
			t.Errorf("io.Copy group culprit should be stdlib, not own: %+v", copyGroup.Culprit)
		}
	}
	if copyGroup != nil && (strings.HasPrefix(copyGroup.Blocking, "runtime.") || !IsStdlib(copyGroup.Blocking)) {
		t.Errorf("io.Copy blocking frame %q", copyGroup.Blocking)
	}
}

func slicesContain(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

var totalRE = regexp.MustCompile(`^goroutine profile: total (\d+)\n`)

func TestGoroutineGroupsLive(t *testing.T) {
	more := startLive(t)
	opts := Options{MainModule: testModule}

	d1 := captureGoroutines(t, 1)
	d2 := captureGoroutines(t, 2)
	pb := captureGoroutines(t, 0)
	if *capture {
		writeTestdata(t, "goroutines.debug1.txt", d1)
		writeTestdata(t, "goroutines.debug2.txt", d2)
		writeTestdata(t, "goroutines.pb.gz", pb)
	}

	t.Run("debug=1", func(t *testing.T) {
		groups, err := ParseGoroutineText(bytes.NewReader(d1), opts)
		if err != nil {
			t.Fatal(err)
		}
		checkLive(t, groups, false, testPkg)
		m := totalRE.FindSubmatch(d1)
		if m == nil {
			t.Fatalf("no total header in:\n%s", d1)
		}
		if want, _ := strconv.Atoi(string(m[1])); totalCount(groups) != want {
			t.Errorf("groups count %d goroutines, header says %d", totalCount(groups), want)
		}
		if !bytes.Contains(d1, []byte("# labels: {\"tenant\":\"acme\"}")) {
			t.Errorf("expected labeled records in debug=1 output (merged by grouping)")
		}
	})
	t.Run("debug=2", func(t *testing.T) {
		groups, err := ParseGoroutineText(bytes.NewReader(d2), opts)
		if err != nil {
			t.Fatal(err)
		}
		checkLive(t, groups, true, testPkg)
		if want := bytes.Count(d2, []byte("\ngoroutine ")) + 1; totalCount(groups) != want {
			t.Errorf("groups count %d goroutines, dump has %d", totalCount(groups), want)
		}
		if !bytes.Contains(d2, []byte(", locked to thread]")) {
			t.Errorf("expected a locked-to-thread header in the dump")
		}
	})
	t.Run("proto", func(t *testing.T) {
		p, err := profile.ParseData(pb)
		if err != nil {
			t.Fatal(err)
		}
		groups, err := GroupGoroutineProfile(p, opts)
		if err != nil {
			t.Fatal(err)
		}
		checkLive(t, groups, false, testPkg)
		var want int64
		for _, s := range p.Sample {
			want += s.Value[0]
		}
		if int64(totalCount(groups)) != want {
			t.Errorf("groups count %d goroutines, profile has %d", totalCount(groups), want)
		}
	})
	// debug=1 and proto record the same things (no state, no creator), so
	// they give the same keys.
	t.Run("debug=1 and proto agree", func(t *testing.T) {
		p, err := profile.ParseData(pb)
		if err != nil {
			t.Fatal(err)
		}
		fromProto, err := GroupGoroutineProfile(p, opts)
		if err != nil {
			t.Fatal(err)
		}
		fromText, err := ParseGoroutineText(bytes.NewReader(d1), opts)
		if err != nil {
			t.Fatal(err)
		}
		pk, tk := groupsByCulprit(t, fromProto), groupsByCulprit(t, fromText)
		for _, c := range liveCases {
			a, b := pk[testPkg+c.fn], tk[testPkg+c.fn]
			if len(a) != 1 || len(b) != 1 || a[0].Key != b[0].Key {
				t.Errorf("%s: proto %+v, debug=1 %+v", c.fn, a, b)
			}
		}
	})
	// Keys are stable across snapshots: one more goroutine in a group
	// shows as that group's count going up by one, nothing else changing.
	t.Run("snapshots", func(t *testing.T) {
		before, err := ParseGoroutineText(bytes.NewReader(d2), opts)
		if err != nil {
			t.Fatal(err)
		}
		more()
		after, err := ParseGoroutineText(bytes.NewReader(captureGoroutines(t, 2)), opts)
		if err != nil {
			t.Fatal(err)
		}
		counts := func(gs []GoroutineGroup) map[string]int {
			m := make(map[string]int)
			for _, g := range gs {
				if strings.HasPrefix(g.Culprit.Function, testPkg+"block") {
					m[g.Key] = g.Count
				}
			}
			return m
		}
		b, a := counts(before), counts(after)
		if len(a) != len(b) {
			t.Fatalf("groups of this test: before %v, after %v", b, a)
		}
		grew := 0
		for k, n := range a {
			switch {
			case n == b[k]+1 && strings.Contains(k, testPkg+"blockRecv:"):
				grew++
			case n != b[k]:
				t.Errorf("group %q: %d -> %d", k, b[k], n)
			}
		}
		if grew != 1 {
			t.Errorf("%d groups grew by one, want exactly the blockRecv group", grew)
		}
	})
}

// TestGoroutineProfileRealFiles groups the goroutine profiles of other
// programs (see the repository's testdata/profiles/PROVENANCE.tsv).
func TestGoroutineProfileRealFiles(t *testing.T) {
	for _, name := range []string{"node_exporter_goroutine.pb.gz", "goroutine_unnamed_sampletype.pb.gz", "goroutine_small_req2.pb"} {
		t.Run(name, func(t *testing.T) {
			p := sharedProfile(t, name)
			groups, err := GroupGoroutineProfile(p, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var want int64
			for _, s := range p.Sample {
				want += s.Value[0]
			}
			if int64(totalCount(groups)) != want || len(groups) == 0 || len(groups) > len(p.Sample) {
				t.Errorf("%d groups counting %d goroutines; profile has %d samples, %d goroutines", len(groups), totalCount(groups), len(p.Sample), want)
			}
			for _, g := range groups {
				if g.CreatedBy == "" || g.CreatedBy == goexitFunc || g.CreatedBy != g.Stack[len(g.Stack)-1] {
					t.Errorf("created by %q, stack %q", g.CreatedBy, g.Stack)
				}
				if g.Blocking == "" || (isRuntimeFunc(g.Blocking, PackagePath(g.Blocking)) && !allRuntime(g.Stack)) {
					t.Errorf("blocking %q for stack %q", g.Blocking, g.Stack)
				}
			}
		})
	}
	t.Run("not a goroutine profile", func(t *testing.T) {
		_, err := GroupGoroutineProfile(sharedProfile(t, "prometheus_heap_4types.pb.gz"), Options{})
		if err == nil || !strings.Contains(err.Error(), "inuse_space/bytes") {
			t.Errorf("error %v should list the available sample types", err)
		}
	})
}

func allRuntime(stack []string) bool {
	for _, f := range stack {
		if !isRuntimeFunc(f, PackagePath(f)) {
			return false
		}
	}
	return true
}

// TestParseGoroutineTextFormats covers header and frame variants that a
// healthy test process does not produce.
func TestParseGoroutineTextFormats(t *testing.T) {
	groups, err := ParseGoroutineText(strings.NewReader(variantsDump), Options{MainModule: "github.com/acme/svc"})
	if err != nil {
		t.Fatal(err)
	}
	got := make([]string, len(groups))
	for i, g := range groups {
		got[i] = fmt.Sprintf("%d leaked=%d wait=%d state=%q blocking=%q created=%q culprit=%s:%d own=%v stack=%q",
			g.Count, g.Leaked, g.WaitMinutes, g.State, g.Blocking, g.CreatedBy, g.Culprit.Function, g.Culprit.Line, g.Culprit.Own, g.Stack)
	}
	want := []string{
		`2 leaked=1 wait=12 state="chan receive" blocking="github.com/acme/svc/worker.(*Pool[...]).run" created="github.com/acme/svc/worker.New[...]" culprit=github.com/acme/svc/worker.(*Pool[...]).run:40 own=true stack=["github.com/acme/svc/worker.(*Pool[...]).run" "github.com/acme/svc/worker.New[...].func1"]`,
		`1 leaked=0 wait=0 state="IO wait" blocking="net/http.(*persistConn).readLoop" created="net/http.(*Transport).queueForDial" culprit=net/http.(*persistConn).readLoop:2205 own=false stack=["internal/poll.runtime_pollWait" "net/http.(*persistConn).readLoop" "...frames elided..." "net/http.(*Transport).dialConnFor"]`,
		`1 leaked=0 wait=0 state="running" blocking="main.main" created="" culprit=main.main:12 own=true stack=["runtime.gopanic" "main.main"]`,
		`1 leaked=0 wait=0 state="running" blocking="(unknown)" created="main.main" culprit=main.main:10 own=true stack=[]`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if groups[2].Culprit.File != "/home/me/my project/main.go" {
		t.Errorf("file with a space: %q", groups[2].Culprit.File)
	}

	groups, err = ParseGoroutineText(strings.NewReader(leakDebug1), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(groups) != 2 || groups[0].Count != 3 || groups[0].Leaked != 3 || groups[0].CreatedBy != "main.main.gowrap1" ||
		groups[0].Culprit != (Site{Function: "main.worker", File: "/src/main.go", Line: 20, Own: true}) ||
		groups[1].Blocking != "0x4b3dd5" || groups[1].Culprit.Own {
		t.Errorf("debug=1 groups: %+v", groups)
	}

	for _, bad := range []string{"", "hello\nworld\n", "\x00\x01"} {
		if _, err := ParseGoroutineText(strings.NewReader(bad), Options{}); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// variantsDump has header and frame variants a healthy test process does
// not produce: a crash, GOTRACEBACK=system headers, annotations, labels,
// elided frames, ancestors, a goroutine without a stack.
const variantsDump = `panic: boom

goroutine 1 gp=0xc000002380 m=0 mp=0x5f4b60 [running]:
panic({0x4a1b20?, 0xc000012345?})
	/usr/local/go/src/runtime/panic.go:792 +0x132 fp=0xc000067f50 sp=0xc000067ea0 pc=0x43a2b2
main.main()
	/home/me/my project/main.go:12 +0x1d fp=0xc000067f80 sp=0xc000067f50 pc=0x49b1bd

goroutine 19 [chan receive (leaked) (scan), 12 minutes, locked to thread labels:{"a": "b], c"}]:
github.com/acme/svc/worker.(*Pool[...]).run(0xc000010000)
	/src/worker/pool.go:40 +0x34
github.com/acme/svc/worker.New[...].func1()
	/src/worker/pool.go:20 +0x25
created by github.com/acme/svc/worker.New[...] in goroutine 1
	/src/worker/pool.go:18 +0x99

goroutine 20 [chan receive, 3 minutes]:
github.com/acme/svc/worker.(*Pool[...]).run(0xc000010010)
	/src/worker/pool.go:40 +0x34
github.com/acme/svc/worker.New[...].func1()
	/src/worker/pool.go:20 +0x25
created by github.com/acme/svc/worker.New[...]
	/src/worker/pool.go:18 +0x99

goroutine 21 [running]:
	goroutine running on other thread; stack unavailable
created by main.main in goroutine 1
	/home/me/my project/main.go:10 +0x45

goroutine 22 [IO wait]:
internal/poll.runtime_pollWait(0x7f, 0x72)
	/usr/local/go/src/runtime/netpoll.go:351 +0x85
net/http.(*persistConn).readLoop(0xc0001)
	/usr/local/go/src/net/http/transport.go:2205 +0x1d
...7 frames elided...
net/http.(*Transport).dialConnFor(0x1)
	/usr/local/go/src/net/http/transport.go:1500 +0x1d
created by net/http.(*Transport).queueForDial in goroutine 8
	/usr/local/go/src/net/http/transport.go:1463 +0x41
[originating from goroutine 8]:
github.com/acme/svc/client.Fetch(...)
	/src/client/fetch.go:9 +0x1
created by main.main
	/home/me/my project/main.go:11 +0x45
exit status 2
`

// leakDebug1 is a debug=1 goroutineleak profile with labels and an
// unsymbolized frame.
const leakDebug1 = "goroutineleak profile: total 3\n" +
	"2 @ 0x43a8d6 0x406e4c 0x4b3dd5 0x471c21\n" +
	"# labels: {\"k\":\"v\"}\n" +
	"#\t0x4b3dd4\tmain.worker+0x34\t\t/src/main.go:20\n" +
	"#\t0x4b3e00\tmain.main.gowrap1+0x20\t/src/main.go:9\n\n" +
	"1 @ 0x43a8d6 0x406e4c 0x4b3dd5 0x471c21\n" +
	"#\t0x4b3dd4\tmain.worker+0x34\t\t/src/main.go:20\n" +
	"#\t0x4b3e00\tmain.main.gowrap1+0x20\t/src/main.go:9\n\n" +
	"1 @ 0x4b3dd5\n" +
	"#\t0x4b3dd5\n"

func TestParseGoroutineTextReadError(t *testing.T) {
	boom := errors.New("connection reset")
	r := io.MultiReader(strings.NewReader(leakDebug1+"\n5 @ 0x1\n#\t0x1\tmain.partial+0x1\t/x.go:1\n"), iotest.ErrReader(boom))
	groups, err := ParseGoroutineText(r, Options{})
	if !errors.Is(err, boom) {
		t.Fatalf("error %v, want %v", err, boom)
	}
	// The complete records survive; the one being read when the error hit
	// does not count.
	if len(groups) != 2 || totalCount(groups) != 4 {
		t.Errorf("partial groups %+v", groups)
	}
	if groups, err := ParseGoroutineText(strings.NewReader("goroutine profile: total 0\n"), Options{}); err != nil || len(groups) != 0 {
		t.Errorf("empty profile: %v, %v", groups, err)
	}
}

// TestGroupLimit checks that a dump of more distinct stacks than maxGroups
// is counted in full with bounded groups.
func TestGroupLimit(t *testing.T) {
	const n = maxGroups + 100
	pr, pw := io.Pipe()
	go func() {
		w := bufio.NewWriter(pw)
		fmt.Fprintf(w, "goroutine profile: total %d\n", 2*n)
		for i := range n {
			fmt.Fprintf(w, "2 @ 0x1\n#\t0x1\tmain.f%d+0x1\t/x.go:%d\n\n", i, i)
		}
		_ = w.Flush()
		_ = pw.Close()
	}()
	groups, err := ParseGoroutineText(pr, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(groups) != maxGroups+1 || totalCount(groups) != 2*n {
		t.Fatalf("%d groups counting %d goroutines", len(groups), totalCount(groups))
	}
	var overflow *GoroutineGroup
	for i := range groups {
		if groups[i].Key == overflowKey {
			overflow = &groups[i]
		}
	}
	if overflow == nil || overflow.Count != 2*(n-maxGroups) || groups[0].Key != overflowKey {
		t.Errorf("overflow group %+v", overflow)
	}
}

// TestCreatorRecorded: a debug=2 dump's "created by" and the creator label of a profile read
// from memory are the runtime's record of who started the goroutines (Created); a proto
// profile without the label names the start function, and says it is not a record.
func TestCreatorRecorded(t *testing.T) {
	dump := "goroutine 7 [select]:\n" +
		"database/sql.(*DB).connectionOpener(0xc000100000, {0x7a1b40, 0xc0000a0000})\n" +
		"\t/usr/local/go/src/database/sql/sql.go:1261 +0x87\n" +
		"created by database/sql.OpenDB in goroutine 6\n" +
		"\t/usr/local/go/src/database/sql/sql.go:841 +0x130\n\n"
	groups, err := ParseGoroutineText(strings.NewReader(dump), Options{})
	if err != nil || len(groups) != 1 {
		t.Fatalf("%v, %d groups", err, len(groups))
	}
	if g := groups[0]; g.CreatedBy != "database/sql.OpenDB" || !g.Created {
		t.Errorf("debug=2: created by %q (recorded %v), want database/sql.OpenDB, recorded", g.CreatedBy, g.Created)
	}
	fn := &profile.Function{ID: 1, Name: "database/sql.(*DB).connectionOpener"}
	loc := &profile.Location{ID: 1, Line: []profile.Line{{Function: fn, Line: 1261}}}
	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "goroutine", Unit: "count"}}, Function: []*profile.Function{fn}, Location: []*profile.Location{loc},
		Sample: []*profile.Sample{{Location: []*profile.Location{loc}, Value: []int64{3}}}}
	for _, label := range []string{"", "database/sql.OpenDB"} {
		p.Sample[0].Label = nil
		if label != "" {
			p.Sample[0].Label = map[string][]string{CreatedByLabel: {label}}
		}
		groups, err := GroupGoroutineProfile(p, Options{})
		if err != nil || len(groups) != 1 {
			t.Fatalf("%v, %d groups", err, len(groups))
		}
		want, recorded := "database/sql.(*DB).connectionOpener", false
		if label != "" {
			want, recorded = label, true
		}
		if g := groups[0]; g.CreatedBy != want || g.Created != recorded {
			t.Errorf("label %q: created by %q (recorded %v), want %q (%v)", label, g.CreatedBy, g.Created, want, recorded)
		}
		back := GroupsProfile(groups, "goroutine")
		if got := back.Sample[0].Label[CreatedByLabel]; recorded != (len(got) == 1 && got[0] == label) {
			t.Errorf("label %q: the groups' profile labels %v", label, got)
		}
	}
}
