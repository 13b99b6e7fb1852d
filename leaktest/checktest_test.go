package leaktest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// checkTest runs CheckTest with leaktest's test options and logs its report.
func checkTest(t *testing.T, name string, test func(*testing.T), opts ...Option) *Report {
	t.Helper()
	rec := &recorder{TB: t}
	rep := CheckTest(rec, name, test, append([]Option{noHolders, shortRounds}, opts...)...)
	if rep == nil {
		t.Fatalf("CheckTest refused: %s", rec.failure())
	}
	t.Logf("%s: %s\n%s", rep.Verdict, rep.Reason, rep.Message)
	return rep
}

func wantVerdict(t *testing.T, rep *Report, want Verdict) {
	t.Helper()
	if rep.Verdict != want {
		t.Fatalf("verdict %s, want %s: %s %s", rep.Verdict, want, rep.Reason, rep.Message)
	}
}

// Tests that keep nothing pass: one that does nothing, one with subtests, a parallel one, one
// whose server a cleanup closes.
func TestCheckTestHealthy(t *testing.T) {
	for _, tc := range []struct {
		name string
		test func(*testing.T)
	}{
		{"TestNothing", func(t *testing.T) {}},
		{"TestSubtests", func(t *testing.T) {
			for _, n := range []string{"a", "b", "c"} {
				t.Run(n, func(t *testing.T) { _ = strings.Repeat(n, 100) })
			}
		}},
		{"TestParallel", func(t *testing.T) {
			t.Parallel()
			_ = make([]byte, 1024)
		}},
		{"TestServerClosed", func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
			t.Cleanup(srv.Close)
			resp, err := srv.Client().Get(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			srv.Client().CloseIdleConnections()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := checkTest(t, tc.name, tc.test)
			wantVerdict(t, rep, VerdictNoLeak)
			if rep.Unit != "run" || !strings.Contains(rep.Message, " runs (") {
				t.Errorf("the report counts calls, not runs: %s", rep.Message)
			}
		})
	}
}

var keptByTests [][]byte

// A test that keeps memory per run leaks, named at its line, in runs of the test.
func TestCheckTestHeapLeak(t *testing.T) {
	defer func() { keptByTests = nil }()
	rep := checkTest(t, "TestKeeps", func(t *testing.T) {
		t.Run("sub", func(t *testing.T) { keptByTests = append(keptByTests, make([]byte, 512)) })
	})
	wantVerdict(t, rep, VerdictLeak)
	if len(rep.HeapSites) == 0 || !rep.HeapSites[0].InFn || rep.HeapSites[0].Elsewhere != "" || rep.HeapSites[0].Program.Line != lineOfFile(t, "checktest_test.go", "keptByTests = append(keptByTests, make([]byte, 512))") {
		t.Errorf("the sites: %+v", rep.HeapSites)
	}
	for _, want := range []string{"the live heap keeps growing with the runs of TestKeeps: a leak", "B per run", "allocated under your code at leaktest/checktest_test.go:"} {
		if !strings.Contains(rep.Message, want) {
			t.Errorf("the failure does not say %q", want)
		}
	}
}

// A test that leaves a goroutine blocked per run leaks, naming the go statement.
func TestCheckTestGoroutineLeak(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	rep := checkTest(t, "TestLeavesGoroutine", func(t *testing.T) { go waitOn(block) }, GoroutinesOnly())
	wantVerdict(t, rep, VerdictLeak)
	if len(rep.Groups) == 0 || rep.Groups[0].State != "chan receive" || !strings.Contains(rep.Groups[0].CreatedBy.Function, "TestCheckTestGoroutineLeak") {
		t.Errorf("the groups: %+v", rep.Groups)
	}
}

// A run that fails, skips or panics stops the check, which says which run and how.
func TestCheckTestNotJudged(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		test       func(n *int) func(*testing.T)
	}{
		{"TestFailsLater", "TestFailsLater failed in its run 3 under the check", func(n *int) func(*testing.T) {
			return func(t *testing.T) {
				if *n++; *n == 3 {
					t.Fatal("port already in use")
				}
			}
		}},
		{"TestSkips", "TestSkips skipped in its run 1 under the check", func(n *int) func(*testing.T) {
			return func(t *testing.T) { t.Skip("needs a database") }
		}},
		{"TestPanics", "TestPanics panicked in its run 2 under the check: duplicate registration\ngithub.com/memdoctor/memdoctor/leaktest.TestCheckTestNotJudged", func(n *int) func(*testing.T) {
			return func(t *testing.T) {
				if *n++; *n == 2 {
					panic("duplicate registration")
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			rep := checkTest(t, tc.name, tc.test(&n))
			wantVerdict(t, rep, VerdictNotJudged)
			if !strings.HasPrefix(rep.Reason, tc.want) || rep.Heap.Verdict != VerdictNotJudged {
				t.Errorf("the reason %q does not start %q", rep.Reason, tc.want)
			}
		})
	}
}

// Select runs the subtests its patterns select.
func TestCheckTestSelect(t *testing.T) {
	ran := map[string]int{}
	test := func(t *testing.T) {
		for _, n := range []string{"small", "large"} {
			t.Run(n, func(t *testing.T) { ran[n]++ })
		}
	}
	wantVerdict(t, checkTest(t, "TestSizes", test, Select("TestSizes/small", "")), VerdictNoLeak)
	if ran["small"] == 0 || ran["large"] != 0 {
		t.Errorf("Select ran the subtests %v", ran)
	}
	ran = map[string]int{}
	wantVerdict(t, checkTest(t, "TestSizes", test, Select("", "TestSizes/large")), VerdictNoLeak)
	if ran["small"] == 0 || ran["large"] != 0 {
		t.Errorf("Select's skip pattern ran the subtests %v", ran)
	}
}

// lineOfFile is the line of a file of this package that holds text.
func lineOfFile(t *testing.T, file, text string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, text) && !strings.Contains(l, "lineOfFile") {
			return i + 1
		}
	}
	t.Fatalf("no line of %s holds %q", file, text)
	return 0
}
