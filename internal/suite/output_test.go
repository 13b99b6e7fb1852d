package suite

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "write the golden files again")

// sampleResult is a run with every kind of package and test: a leak, a package with a test
// not judged, one with no tests, one that did not build.
func sampleResult() *Result {
	leak := `{"test":"TestSubscribe","verdict":"leak","unit":"run","message":"leaktest: goroutines keep growing with the runs of TestSubscribe: a leak\n  measured over 7 rounds of 146 runs"}`
	return &Result{
		Elapsed: 12 * time.Second,
		Notes:   []string{"the module says go 1.20: its tests are built in a workspace whose go line is 1.22"},
		Packages: []*PackageResult{
			{Package: "example.com/m/broker", Dir: "/src/m/broker", Status: StatusLeak, Elapsed: 3 * time.Second, Tests: []*TestResult{
				{Name: "TestSubscribe", File: "/src/m/broker/broker_test.go", Line: 12, Verdict: VerdictLeak, GoVerdict: "pass", Elapsed: 1200 * time.Millisecond,
					Message: "leaktest: goroutines keep growing with the runs of TestSubscribe: a leak\n  measured over 7 rounds of 146 runs", Report: json.RawMessage(leak)},
				{Name: "TestPublish", File: "/src/m/broker/broker_test.go", Line: 30, Verdict: VerdictNoLeak, GoVerdict: "pass", Parallel: true, Elapsed: 300 * time.Millisecond,
					Message: "leaktest: no leak in 9 rounds of 35 runs (147ms)", Output: "=== RUN   TestPublish\n=== PAUSE TestPublish\n=== CONT  TestPublish\n--- PASS: TestPublish (0.00s)\n"},
			}},
			{Package: "example.com/m/store", Dir: "/src/m/store", Status: StatusOK, Elapsed: 2 * time.Second, Restarts: 1, Tests: []*TestResult{
				{Name: "TestDB", File: "/src/m/store/db_test.go", Line: 8, Verdict: VerdictNotJudged, GoVerdict: "skip", Reason: "it skips (go test: SKIP): db_test.go:9: needs a database",
					Output: "=== RUN   TestDB\n    db_test.go:9: needs a database\n--- SKIP: TestDB (0.00s)\n"},
				{Name: "TestExit", File: "/src/m/store/db_test.go", Line: 20, Verdict: VerdictNotJudged, GoVerdict: "pass", Reason: "it ended the test process (exit status 3)"},
				{Name: "TestCache", File: "/src/m/store/cache_test.go", Line: 5, Verdict: VerdictSuspected, GoVerdict: "pass", Elapsed: 10 * time.Second,
					Reason: "within the time limit, the live heap's growth stayed a suspicion", Message: "leaktest: no leak in 30 rounds of 5 runs (10s); stopped at the time limit (10s)"},
			}},
			{Package: "example.com/m/cmd/tool", Dir: "/src/m/cmd/tool", Status: StatusNoTests},
			{Package: "example.com/m/broken", Dir: "/src/m/broken", Status: StatusBuildFailed,
				Error: "# example.com/m/broken [example.com/m/broken.test]\nbroken/broken_test.go:5:34: undefined: undefinedThing"},
		},
	}
}

// golden compares got with testdata/NAME, or writes it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v: run go test ./internal/suite -update", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test ./internal/suite -update):\n%s", name, got)
	}
}

func TestTextOutput(t *testing.T) {
	for _, verbose := range []bool{false, true} {
		var b bytes.Buffer
		r := sampleResult()
		for _, p := range r.Packages {
			WritePackage(&b, p, verbose)
		}
		WriteSummary(&b, r)
		name := "text.golden"
		if verbose {
			name = "text-v.golden"
		}
		golden(t, name, b.Bytes())
	}
}

func TestJUnit(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJUnit(&b, sampleResult(), "/src/m"); err != nil {
		t.Fatal(err)
	}
	golden(t, "junit.golden.xml", b.Bytes())
	var parsed struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Errors   int `xml:"errors,attr"`
		Skipped  int `xml:"skipped,attr"`
	}
	if err := xml.Unmarshal(b.Bytes(), &parsed); err != nil {
		t.Fatal(err)
	}
	if parsed.Tests != 6 || parsed.Failures != 1 || parsed.Errors != 1 || parsed.Skipped != 2 {
		t.Errorf("JUnit counts %+v, want 6 tests (a build error among them), 1 failure, 1 error, 2 skipped", parsed)
	}
}

func TestJSONOutput(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, sampleResult(), "/src/m"); err != nil {
		t.Fatal(err)
	}
	golden(t, "result.golden.json", b.Bytes())
	var back map[string]any
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || back["schema"] != Schema {
		t.Errorf("the JSON does not read back: %v", err)
	}
}

func TestAnnotations(t *testing.T) {
	var b bytes.Buffer
	r := sampleResult()
	r.Packages[0].Tests[0].Message = "a, b: 100%\nnext line"
	WriteAnnotations(&b, r, "/src/m")
	want := "::error file=broker/broker_test.go,line=12,title=leak in TestSubscribe::a, b: 100%25%0Anext line\n"
	if b.String() != want {
		t.Errorf("annotations %q, want %q", b.String(), want)
	}
	if got := ghProperty("a:b,c%\n"); got != "a%3Ab%2Cc%25%0A" {
		t.Errorf("ghProperty: %q", got)
	}
}

func TestCountText(t *testing.T) {
	for _, tc := range []struct {
		c    Counts
		want string
	}{
		{Counts{Tests: 1, NoLeak: 1}, "1 test: 1 no leak"},
		{Counts{Tests: 0}, "0 tests"},
		{Counts{Tests: 5, Leaks: 2, NotJudged: 1, NoLeak: 2}, "5 tests: 2 leak, 1 not judged, 2 no leak"},
	} {
		if got := countText(tc.c); got != tc.want {
			t.Errorf("countText(%+v) = %q, want %q", tc.c, got, tc.want)
		}
	}
	if !strings.HasPrefix(lastN("a\nb\nc\n", 2), "[... 1 lines before ...]\nb\nc") {
		t.Errorf("lastN: %q", lastN("a\nb\nc\n", 2))
	}
}
