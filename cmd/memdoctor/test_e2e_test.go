package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// suiteResult is what the e2e tests read of memdoctor test's --json (docs/formats.md).
type suiteResult struct {
	Schema   string `json:"schema"`
	Packages []struct {
		Package string `json:"package"`
		Status  string `json:"status"`
		Tests   []struct {
			Name      string `json:"name"`
			File      string `json:"file"`
			Line      int    `json:"line"`
			Verdict   string `json:"verdict"`
			Reason    string `json:"reason"`
			GoVerdict string `json:"go_verdict"`
			Parallel  bool   `json:"parallel"`
			Message   string `json:"message"`
		} `json:"tests"`
	} `json:"packages"`
}

// leakSuite copies testdata/leaksuite into a git repository of its own, committed, and returns
// its directory and a fresh temporary directory for memdoctor's TMPDIR.
func leakSuite(t *testing.T) (repo, tmp string) {
	t.Helper()
	root := t.TempDir()
	repo, tmp = filepath.Join(root, "leaksuite"), filepath.Join(root, "tmp")
	if err := os.CopyFS(repo, os.DirFS("testdata/leaksuite")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "suite"}} {
		if out, err := exec.Command("git", append([]string{"-C", repo}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return repo, tmp
}

// treeHash hashes every file of a tree, its path, mode and content: the user's tree byte for
// byte.
func treeHash(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %v\n", strings.TrimPrefix(p, dir), info.Mode())
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// untouched checks that a run left the repository as committed and the temporary directory
// empty.
func untouched(t *testing.T, repo, tmp, hash string) {
	t.Helper()
	if got := treeHash(t, repo); got != hash {
		t.Error("memdoctor test changed the tree under test")
	}
	if out, err := exec.Command("git", "-C", repo, "status", "--porcelain", "--ignored").CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("git status after memdoctor test: %v\n%s", err, out)
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		var names []string
		for _, e := range left {
			names = append(names, e.Name())
		}
		t.Errorf("memdoctor test left %v in its temporary directory", names)
	}
}

func suiteCommand(ctx context.Context, repo, tmp string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, memdoctorBin, append([]string{"test"}, args...)...)
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "NO_COLOR=1", "GITHUB_ACTIONS=true", "GITHUB_WORKSPACE="+repo)
	return cmd
}

// lineOfSuite is the number of the first line of a file of the suite that holds text.
func lineOfSuite(t *testing.T, file, text string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata/leaksuite", file))
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, text) {
			return i + 1
		}
	}
	t.Fatalf("no line of %s holds %q", file, text)
	return 0
}

// TestSuiteEndToEnd runs memdoctor test on a module of its own with a test per leak shape, per
// healthy shape and per way a test cannot be judged: each leak flagged with its culprit line,
// each healthy test passed, each other said why, the JUnit and JSON files and the GitHub
// annotations written, the tree byte for byte as it was and nothing left in TMPDIR.
func TestSuiteEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("checks 22 tests of a suite, about two minutes")
	}
	repo, tmp := leakSuite(t)
	hash := treeHash(t, repo)
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := suiteCommand(ctx, repo, tmp, "--time-limit", "2s", "--junit", filepath.Join(out, "junit.xml"), "--json", filepath.Join(out, "result.json"), "./...")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	t.Logf("memdoctor test:\n%s\n%s", stdout.String(), stderr.String())
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 {
		t.Fatalf("memdoctor test on a suite with leaks: %v, want exit status 3", err)
	}
	untouched(t, repo, tmp, hash)

	var res suiteResult
	data, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &res); err != nil || res.Schema != "memdoctor/test/v1" {
		t.Fatalf("--json: %v (schema %q)", err, res.Schema)
	}
	type want struct {
		verdict string
		says    []string
	}
	lf := func(text string) string {
		return "leaks/leaks.go:" + strconv.Itoa(lineOfSuite(t, "leaks/leaks.go", text))
	}
	wants := map[string]want{
		"TestSubscribe":  {"leak", []string{"[chan receive]", "waiting at " + lf("func receive("), "started by the go statement at " + lf("go receive(")}},
		"TestCompute":    {"leak", []string{"[chan send]", "waiting at " + lf("ch <- 42"), "started by the go statement at " + lf("go send(")}},
		"TestFlush":      {"leak", []string{"[sync.Mutex.Lock]", "their function, defined at " + lf("func flush("), "example.com/leaksuite/leaks.flush", "started by the go statement at " + lf("go flush(")}},
		"TestStartBatch": {"leak", []string{"[sync.WaitGroup.Wait]", "started by the go statement at " + lf("go awaitBatch(")}},
		"TestWatch":      {"leak", []string{"[select]", "waiting at " + lf("select {"), "started by the go statement at " + lf("go watch(")}},
		"TestAwaitReady": {"leak", []string{"[sync.Cond.Wait]", "started by the go statement at " + lf("go awaitReady(")}},
		"TestPoll":       {"leak", []string{"goroutines keep growing", "[running]", "their function, defined at " + lf("func spin("), "example.com/leaksuite/leaks.spin", "started by the go statement at " + lf("go spin(")}},
		"TestRecord":     {"leak", []string{"the live heap keeps growing with the runs of TestRecord", "allocated under your code at " + lf("history = append(")}},
		"TestConnect":    {"leak", []string{"[select]", "database/sql.(*DB).connectionOpener", "made by your code at " + lf(`sql.Open("nop"`)}},

		"TestOnce":         {"no-leak", nil},
		"TestPool":         {"no-leak", nil},
		"TestBoundedCache": {"no-leak", nil},
		"TestServerClosed": {"no-leak", nil},
		"TestEndsLate":     {"no-leak", nil},
		"TestParallel":     {"no-leak", nil},

		"TestSkips":                {"not-judged", []string{"it skips (go test: SKIP): notjudged_test.go:", "needs a database"}},
		"TestFails":                {"not-judged", []string{"it fails on its first run (go test: FAIL)"}},
		"TestFailsWhenRunAgain":    {"not-judged", []string{"it passed its first run (go test: PASS), then: TestFailsWhenRunAgain failed in its run 1 under the check"}},
		"TestPanicsOnItsSecondRun": {"not-judged", []string{"panicked in its run 1 under the check: duplicate collector", "notjudged_test.go:"}},
		"TestExitsOnItsSecondRun":  {"not-judged", []string{"it ended the test process (exit status 3)"}},
		"TestHangsOnItsSecondRun":  {"not-judged", []string{"has not returned within the time limit (2s)", "a run that never returns is a deadlock"}},
		"TestAfterTheOthers":       {"no-leak", nil},
	}
	seen := 0
	for _, p := range res.Packages {
		for _, tr := range p.Tests {
			w, ok := wants[tr.Name]
			if !ok {
				t.Errorf("unexpected test %s in %s", tr.Name, p.Package)
				continue
			}
			seen++
			if tr.Verdict != w.verdict {
				t.Errorf("%s: %s (%s), want %s\n%s", tr.Name, tr.Verdict, tr.Reason, w.verdict, tr.Message)
				continue
			}
			text := tr.Message + "\n" + tr.Reason
			for _, s := range w.says {
				if !strings.Contains(text, s) {
					t.Errorf("%s does not say %q:\n%s", tr.Name, s, text)
				}
			}
			if tr.File == "" || tr.Line == 0 || filepath.IsAbs(tr.File) {
				t.Errorf("%s is at %s:%d, want its test file relative to the module", tr.Name, tr.File, tr.Line)
			}
			if tr.Name == "TestParallel" && !tr.Parallel {
				t.Error("TestParallel is not said to be parallel")
			}
		}
	}
	if seen != len(wants) {
		t.Errorf("%d tests in the result, want %d", seen, len(wants))
	}
	// go test-like lines, and an annotation on each leaking test's line.
	for _, s := range []string{"LEAK\texample.com/leaksuite/leaks\t", "ok  \texample.com/leaksuite/healthy\t", "--- LEAK: TestSubscribe (",
		"--- NOT JUDGED: TestHangsOnItsSecondRun (",
		fmt.Sprintf("::error file=leaks/leaks_test.go,line=%d,title=leak in TestSubscribe::leaktest: goroutines", lineOfSuite(t, "leaks/leaks_test.go", "func TestSubscribe"))} {
		if !strings.Contains(stdout.String(), s) {
			t.Errorf("the output does not say %q", s)
		}
	}
	// JUnit: a testcase per test, a failure per leak, skipped per test not judged.
	var ju struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Skipped  int `xml:"skipped,attr"`
		Suites   []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name    string    `xml:"name,attr"`
				File    string    `xml:"file,attr"`
				Failure *struct{} `xml:"failure"`
				Skipped *struct {
					Message string `xml:"message,attr"`
				} `xml:"skipped"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	data, err = os.ReadFile(filepath.Join(out, "junit.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(data, &ju); err != nil {
		t.Fatalf("--junit: %v", err)
	}
	if ju.Tests != 22 || ju.Failures != 9 || ju.Skipped != 6 || len(ju.Suites) != 3 {
		t.Errorf("JUnit: %d tests, %d failures, %d skipped in %d suites; want 22, 9, 6 in 3", ju.Tests, ju.Failures, ju.Skipped, len(ju.Suites))
	}
}

// TestSuiteInterrupted interrupts memdoctor test in the middle of a package's check (SIGINT, as
// Ctrl-C): it stops, says so, and leaves the tree as it was and nothing in TMPDIR.
func TestSuiteInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and checks a suite")
	}
	repo, tmp := leakSuite(t)
	hash := treeHash(t, repo)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := suiteCommand(ctx, repo, tmp, "--time-limit", "20s", "./healthy", "./leaks")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until a test's check is under way: its "check" event in memdoctor's directory.
	checking := regexp.MustCompile(`"event":"check"`)
	deadline := time.Now().Add(3 * time.Minute)
	for {
		events, _ := filepath.Glob(filepath.Join(tmp, "memdoctor-test-*", "p*", "events-*.jsonl"))
		found := false
		for _, e := range events {
			if b, _ := os.ReadFile(e); checking.Match(b) {
				found = true
			}
		}
		if found {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no check began within 3 minutes:\n%s\n%s", stdout.String(), stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	t.Logf("memdoctor test, interrupted:\n%s\n%s", stdout.String(), stderr.String())
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("interrupted memdoctor test: %v, want exit status 1", err)
	}
	if !strings.Contains(stderr.String(), "interrupted") || !strings.Contains(stdout.String(), "interrupted") {
		t.Error("an interrupted run does not say so")
	}
	untouched(t, repo, tmp, hash)
}

// TestSuiteCannotCheck: a package whose tests do not build is go's own message, once, and exit
// status 1; a usage error is exit status 2; outside a module, one line and exit status 1.
func TestSuiteCannotCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a suite")
	}
	repo, tmp := leakSuite(t)
	broken := filepath.Join(repo, "broken")
	os.Mkdir(broken, 0o755)
	os.WriteFile(filepath.Join(broken, "broken_test.go"), []byte("package broken\n\nimport \"testing\"\n\nfunc TestBroken(t *testing.T) { undefinedThing() }\n"), 0o644)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := suiteCommand(ctx, repo, tmp, "./broken")
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("a package that does not build: %v, want exit status 1\n%s", err, out)
	}
	if n := strings.Count(string(out), "undefined: undefinedThing"); n != 1 || !strings.Contains(string(out), "FAIL\texample.com/leaksuite/broken [build failed]") {
		t.Errorf("go's message %d times, want once, and the package failed:\n%s", n, out)
	}
	for _, args := range [][]string{{"--time-limit", "0s"}, {"-p", "0"}, {"--nope"}} {
		out, err := suiteCommand(ctx, repo, tmp, args...).CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
			t.Errorf("memdoctor test %v: %v, want exit status 2\n%s", args, err, out)
		}
	}
	cmd = suiteCommand(ctx, t.TempDir(), tmp)
	out, err = cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "not in a Go module") || strings.Count(strings.TrimSpace(string(out)), "\n") > 0 {
		t.Errorf("outside a module: %v\n%s", err, out)
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("memdoctor test left %d files in its temporary directory", len(left))
	}
}
