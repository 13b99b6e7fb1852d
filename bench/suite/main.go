// Command suite is memdoctor test's proof on real third-party test suites, unchanged: each
// release fetched through the module proxy (go mod download -json MODULE@VERSION), copied into
// a temporary git repository, checked with memdoctor test, and judged:
//
//   - a leak that shipped in a release and was fixed in a later one: on the release that
//     leaked, the tests that exercise it are flagged, naming the library's line; on the release
//     that fixed it, no test is;
//   - healthy suites (a cache, a concurrency package, an HTTP router): no test flagged, in
//     -runs runs each;
//   - a suite of about a hundred tests: memdoctor test's wall time beside plain go test's.
//
// After every run the copy must be byte for byte as committed (git status clean). It prints a
// Markdown table (bench/suite/RESULTS.md holds one) and exits 1 when an expectation fails.
//
//	go run ./bench/suite                      # every case; about 20 minutes on two cores
//	go run ./bench/suite -cases health-go -runs 1
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"
)

// A suiteCase is a module's suite at a release, and what memdoctor test must find in it.
type suiteCase struct {
	name            string
	module, version string
	args            []string // memdoctor test's arguments (packages last)
	// leaks are the tests that must be flagged, each with what its failure must say; none else
	// may be. An empty map: no test may be flagged.
	leaks map[string][]string
	// repeat runs it -runs times (the healthy suites).
	repeat bool
	// others allows more tests than leaks to be flagged, when each says what leaks say.
	others bool
	// timed also times plain go test on the same packages.
	timed bool
	note  string
}

var cases = []suiteCase{
	{
		name: "gorilla-sessions", module: "github.com/gorilla/sessions", version: "v1.1.3", args: []string{"."},
		leaks: map[string][]string{"TestFlashes": {"the live heap keeps growing with the runs of TestFlashes", "allocated under your code at gorilla-sessions-v1.1.3/sessions.go:119", "github.com/gorilla/context.Set"}},
		note:  "sessions kept in gorilla/context's package map keyed by *http.Request, never cleared without context.ClearHandler; v1.2.0 keeps them in the request's context",
	},
	{name: "gorilla-sessions", module: "github.com/gorilla/sessions", version: "v1.2.0", args: []string{"."}, leaks: map[string][]string{}},
	{
		name: "health-go", module: "github.com/hellofresh/health-go/v5", version: "v5.5.4", args: []string{"--time-limit", "20s", "."},
		leaks: map[string][]string{
			"TestHealthHandler":  {"more goroutines [chan send]", "waiting at health-go-v5.5.4/health.go:199", "started by the go statement at health-go-v5.5.4/health.go:198"},
			"TestHealth_Measure": {"more goroutines [chan send]", "waiting at health-go-v5.5.4/health.go:199"},
		},
		note: "a check that times out leaves its goroutine blocked for ever on an unbuffered channel (hellofresh/health-go#225, fixed in v5.5.5)",
	},
	{name: "health-go", module: "github.com/hellofresh/health-go/v5", version: "v5.5.5", args: []string{"--time-limit", "20s", "."}, leaks: map[string][]string{}},
	{name: "golang-lru", module: "github.com/hashicorp/golang-lru/v2", version: "v2.0.7", args: []string{".", "./simplelru"}, leaks: map[string][]string{}, repeat: true, note: "a widely used cache"},
	{
		name: "golang-lru-expirable", module: "github.com/hashicorp/golang-lru/v2", version: "v2.0.7", args: []string{"./expirable"},
		// Its NewLRU starts a goroutine that never ends, by design, as its source says ("done
		// channel is never closed, so deleteExpired() goroutine will never exit"): each test that
		// makes one with a TTL leaks it. The one flagged every time; a test whose expiry
		// timing fails under load, or that allocates less, may be not judged instead.
		leaks:  map[string][]string{"TestLRUWithPurgeEnforcedBySize": {"more goroutines [select]", "started by the go statement at expirable/expirable_lru.go:82"}},
		others: true, note: "expirable.NewLRU's cleanup goroutine, which never ends (documented in its source)",
	},
	{name: "x-sync", module: "golang.org/x/sync", version: "v0.16.0", args: []string{"./..."}, leaks: map[string][]string{}, repeat: true, note: "errgroup, semaphore, singleflight, syncmap"},
	{name: "gorilla-mux", module: "github.com/gorilla/mux", version: "v1.8.1", args: []string{"./..."}, leaks: map[string][]string{}, repeat: true, note: "an HTTP router"},
	{
		name: "chi", module: "github.com/go-chi/chi/v5", version: "v5.2.3", args: []string{"./..."}, timed: true,
		// Two of its tests leave responses unread and unclosed: each keeps its connection's
		// two goroutines for good (the test's own missing resp.Body.Close()).
		leaks: map[string][]string{
			"TestThrottleRetryAfter":       {"net/http.(*persistConn).readLoop", "net/http.(*persistConn).writeLoop"},
			"TestThrottleCustomStatusCode": {"net/http.(*persistConn).readLoop"},
		},
		note: "an HTTP router of 86 tests, timed",
	},
}

func main() {
	memdoctor := flag.String("memdoctor", "", "the memdoctor binary (default: built from this repository)")
	runs := flag.Int("runs", 3, "runs of each healthy suite")
	only := flag.String("cases", "", "run only the cases whose name matches this `regexp`")
	flag.StringVar(&logs, "logs", "", "also keep what memdoctor test printed for each run in `DIR`")
	flag.Parse()
	if err := run(*memdoctor, *runs, *only); err != nil {
		fmt.Fprintln(os.Stderr, "suite:", err)
		os.Exit(1)
	}
}

// logs is the directory -logs names, or "".
var logs string

func run(memdoctor string, runs int, only string) error {
	tmp, err := os.MkdirTemp("", "memdoctor-suite-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if memdoctor == "" {
		memdoctor = filepath.Join(tmp, "memdoctor")
		if out, err := exec.Command("go", "build", "-o", memdoctor, "./cmd/memdoctor").CombinedOutput(); err != nil {
			return fmt.Errorf("building memdoctor (run from the repository's root): %v\n%s", err, out)
		}
	}
	filter := regexp.MustCompile(only)
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("memdoctor test on real suites, %s, %d cores, load %s\n\n", time.Now().UTC().Format("2006-01-02"), runtime.NumCPU(), strings.Join(strings.Fields(string(load))[:min(3, len(strings.Fields(string(load))))], " "))
	fmt.Println("| suite | release | run | tests | flagged | not judged | memdoctor test | plain go test | result |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	failed := 0
	for _, c := range cases {
		if !filter.MatchString(c.name) {
			continue
		}
		n := 1
		if c.repeat {
			n = runs
		}
		for i := 1; i <= n; i++ {
			row, err := check(c, memdoctor, tmp, i)
			if err != nil {
				failed++
				row += " **FAILED: " + strings.ReplaceAll(err.Error(), "\n", " ") + "**"
			} else {
				row += " as expected"
			}
			fmt.Println(row + " |")
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d runs did not find what they should", failed)
	}
	return nil
}

// result is what bench/suite reads of memdoctor test's --json.
type result struct {
	Summary struct {
		Tests     int `json:"tests"`
		Leaks     int `json:"leaks"`
		NotJudged int `json:"not_judged"`
	} `json:"summary"`
	Packages []struct {
		Status string `json:"status"`
		Tests  []struct {
			Name    string `json:"name"`
			Verdict string `json:"verdict"`
			Reason  string `json:"reason"`
			Message string `json:"message"`
		} `json:"tests"`
	} `json:"packages"`
}

// check copies the release into a git repository, runs memdoctor test on it, and returns its
// table row and whether it found what it should.
func check(c suiteCase, memdoctor, tmp string, runIndex int) (string, error) {
	row := fmt.Sprintf("| %s | %s | %d |", c.module, c.version, runIndex)
	repo := filepath.Join(tmp, fmt.Sprintf("%s-%s", c.name, c.version))
	if err := fetch(c.module+"@"+c.version, repo); err != nil {
		return row, err
	}
	defer os.RemoveAll(repo)
	jsonOut := filepath.Join(tmp, "result.json")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	start := time.Now()
	cmd := exec.CommandContext(ctx, memdoctor, append([]string{"test", "--json", jsonOut}, c.args...)...)
	cmd.Dir = repo
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stdout
	err := cmd.Run()
	took := time.Since(start)
	if logs != "" {
		os.MkdirAll(logs, 0o755)
		os.WriteFile(filepath.Join(logs, fmt.Sprintf("%s-%s-%d.txt", c.name, c.version, runIndex)), stdout.Bytes(), 0o644)
	}
	if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() != 3 && ee.ExitCode() != 0) {
		return row, fmt.Errorf("memdoctor test: %v\n%s", err, stdout.String())
	}
	if out, err := exec.Command("git", "-C", repo, "status", "--porcelain", "--ignored").CombinedOutput(); err != nil || len(out) > 0 {
		return row, fmt.Errorf("the tree changed: %v %s", err, out)
	}
	var res result
	data, err := os.ReadFile(jsonOut)
	if err == nil {
		err = json.Unmarshal(data, &res)
	}
	if err != nil {
		return row, fmt.Errorf("reading memdoctor test's --json: %v", err)
	}
	var flagged, problems []string
	for _, p := range res.Packages {
		for _, t := range p.Tests {
			if t.Verdict != "leak" {
				continue
			}
			flagged = append(flagged, t.Name)
			says, want := c.leaks[t.Name]
			if !want && c.others {
				for _, s := range c.leaks {
					says = s
				}
			} else if !want {
				problems = append(problems, t.Name+" flagged:\n"+t.Message)
			}
			for _, s := range says {
				if !strings.Contains(t.Message, s) {
					problems = append(problems, fmt.Sprintf("%s does not say %q", t.Name, s))
				}
			}
		}
	}
	for name := range c.leaks {
		if !contains(flagged, name) {
			problems = append(problems, name+" not flagged")
		}
	}
	plain := ""
	if c.timed {
		start := time.Now()
		cmd := exec.CommandContext(ctx, "go", append([]string{"test", "-count=1"}, packagesOf(c.args)...)...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GOFLAGS=")
		cmd.Run() // its verdict is not ours to judge; its time is
		plain = time.Since(start).Round(100 * time.Millisecond).String()
	}
	row += fmt.Sprintf(" %d | %s | %d | %s | %s |", res.Summary.Tests, strings.Join(flagged, ", "), res.Summary.NotJudged, took.Round(100*time.Millisecond), plain)
	if len(problems) > 0 {
		fmt.Fprintln(os.Stderr, stdout.String())
		return row, fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return row, nil
}

// fetch copies a module's release from the module proxy into dir, writable, as a git
// repository with one commit.
func fetch(modVersion, dir string) error {
	out, err := exec.Command("go", "mod", "download", "-json", modVersion).Output()
	if err != nil {
		return fmt.Errorf("go mod download %s: %v", modVersion, err)
	}
	var dl struct{ Dir, Error string }
	if err := json.Unmarshal(out, &dl); err != nil || dl.Dir == "" {
		return fmt.Errorf("go mod download %s: %v %s", modVersion, err, dl.Error)
	}
	if err := os.CopyFS(dir, os.DirFS(dl.Dir)); err != nil {
		return err
	}
	if err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Chmod(p, info.Mode()|0o200)
	}); err != nil {
		return err
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=suite", "-c", "user.email=suite@localhost", "commit", "-qm", modVersion}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			return fmt.Errorf("git %v: %v %s", args, err, out)
		}
	}
	return nil
}

// packagesOf is the packages among memdoctor test's arguments.
func packagesOf(args []string) []string {
	var pkgs []string
	for i := 0; i < len(args); i++ {
		switch {
		case args[i] == "--time-limit", args[i] == "-run", args[i] == "-skip":
			i++
		case !strings.HasPrefix(args[i], "-"):
			pkgs = append(pkgs, args[i])
		}
	}
	return pkgs
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
