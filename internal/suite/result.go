package suite

import (
	"encoding/json"
	"time"
)

// Result is a whole run of memdoctor test.
type Result struct {
	Packages []*PackageResult
	Elapsed  time.Duration
	// Notes say what the run changed of how the tests are built (a go line raised).
	Notes []string
}

// Package statuses.
const (
	StatusOK          = "ok"            // every test checked had no leak
	StatusLeak        = "leak"          // a test leaks
	StatusNoTests     = "no-test-files" // nothing to check
	StatusBuildFailed = "build-failed"  // go could not build its tests: Error is go's message
	StatusError       = "error"         // it could not be checked: Error says why
	StatusInterrupted = "interrupted"   // the run was interrupted before it was done
)

// PackageResult is what memdoctor test found in one package.
type PackageResult struct {
	Package string
	Dir     string
	Status  string
	Error   string
	Tests   []*TestResult
	Elapsed time.Duration
	// Restarts is how many times its test process was started again, after a test ended it
	// or ran past its budget.
	Restarts int
}

// Test verdicts.
const (
	VerdictLeak      = "leak"
	VerdictNoLeak    = "no-leak"
	VerdictSuspected = "suspected"  // a growth not confirmed within the time limit: not failed
	VerdictNotJudged = "not-judged" // Reason says why
)

// TestResult is what memdoctor test found of one test.
type TestResult struct {
	Name string
	File string // absolute
	Line int
	// Verdict is the check's; Reason says why a test is not judged or what stayed a suspicion.
	Verdict string
	Reason  string
	// GoVerdict is go test's verdict of the test's first run: pass, fail, skip, panic (or
	// "" when it did not finish).
	GoVerdict string
	Parallel  bool
	// Elapsed is the whole time of its first run and its check.
	Elapsed time.Duration
	// Message is leaktest's: the failure for a leak, else its summary line.
	Message string
	// Output is what its first run printed (go test -v), and for a run that failed later,
	// what the runs printed; bounded.
	Output string
	// Report is leaktest's report as the harness wrote it (docs/formats.md), or nil.
	Report json.RawMessage
}

// leaks counts the tests that leak.
func (p *PackageResult) leaks() int {
	n := 0
	for _, t := range p.Tests {
		if t.Verdict == VerdictLeak {
			n++
		}
	}
	return n
}

// Counts are the tests of a result by verdict.
type Counts struct {
	Tests, Leaks, NoLeak, Suspected, NotJudged int
	Packages, Failed                           int // packages, those that could not be checked
}

// Count counts the tests and packages of a result.
func (r *Result) Count() Counts {
	var c Counts
	for _, p := range r.Packages {
		if p.Status == StatusNoTests {
			continue
		}
		c.Packages++
		if p.Status == StatusBuildFailed || p.Status == StatusError || p.Status == StatusInterrupted {
			c.Failed++
		}
		for _, t := range p.Tests {
			c.Tests++
			switch t.Verdict {
			case VerdictLeak:
				c.Leaks++
			case VerdictNoLeak:
				c.NoLeak++
			case VerdictSuspected:
				c.Suspected++
			default:
				c.NotJudged++
			}
		}
	}
	return c
}

// harnessEvent is what memdoctor reads of the harness's events (leaktest/harness.Event),
// tolerantly: a field it does not know is skipped.
type harnessEvent struct {
	Event string `json:"event"`
	Test  string `json:"test"`
	Plain *struct {
		Verdict  string        `json:"verdict"`
		Parallel bool          `json:"parallel"`
		Panic    string        `json:"panic"`
		Elapsed  time.Duration `json:"elapsed_ns"`
		Output   string        `json:"output"`
	} `json:"plain"`
	Report     json.RawMessage `json:"report"`
	Output     string          `json:"output"`
	InRun      bool            `json:"in_run"`
	NotChecked string          `json:"not_checked"`
}

// reportFields are the fields of leaktest's report memdoctor shows.
type reportFields struct {
	Verdict string        `json:"verdict"`
	Reason  string        `json:"reason"`
	Message string        `json:"message"`
	Elapsed time.Duration `json:"elapsed_ns"`
}
