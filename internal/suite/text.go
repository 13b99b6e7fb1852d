package suite

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"
)

// WritePackage writes a package's result as go test writes a package's: a block per test that
// leaks or could not be judged (with -v, per test), then the package's line.
func WritePackage(w io.Writer, p *PackageResult, verbose bool) {
	switch p.Status {
	case StatusNoTests:
		fmt.Fprintf(w, "?   \t%s\t[no test files]\n", p.Package)
		return
	case StatusBuildFailed:
		fmt.Fprintf(w, "%s\n", strings.TrimRight(p.Error, "\n"))
		fmt.Fprintf(w, "FAIL\t%s [build failed]\n", p.Package)
		return
	}
	interrupted := 0
	for _, t := range p.Tests {
		if t.Verdict == VerdictNotJudged && t.Reason == reasonInterrupted {
			interrupted++ // said once, on the package's line
			continue
		}
		writeTest(w, t, verbose)
	}
	c := (&Result{Packages: []*PackageResult{p}}).Count()
	switch p.Status {
	case StatusError:
		fmt.Fprintf(w, "FAIL\t%s\t%s\t[could not check: %s]\n", p.Package, seconds(p.Elapsed), firstLine(p.Error))
		return
	case StatusInterrupted:
		if len(p.Tests) == 0 {
			fmt.Fprintf(w, "FAIL\t%s\t%s\t[interrupted before its tests ran]\n", p.Package, seconds(p.Elapsed))
			return
		}
		fmt.Fprintf(w, "FAIL\t%s\t%s\t[interrupted: %d of %d tests checked]\n", p.Package, seconds(p.Elapsed), len(p.Tests)-interrupted, len(p.Tests))
		return
	}
	head := "ok  "
	if p.Status == StatusLeak {
		head = "LEAK"
	}
	fmt.Fprintf(w, "%s\t%s\t%s\t%s", head, p.Package, seconds(p.Elapsed), countText(c))
	switch {
	case p.Restarts == 1:
		fmt.Fprintf(w, " (its test process started once more, after a test that ended it)")
	case p.Restarts > 1:
		fmt.Fprintf(w, " (its test process started %d more times, after tests that ended it)", p.Restarts)
	}
	fmt.Fprintln(w)
}

// writeTest writes one test's verdict: always for a leak, a suspicion or a test not judged,
// and with verbose for every test, its first run's output first.
func writeTest(w io.Writer, t *TestResult, verbose bool) {
	if verbose && t.Output != "" && t.Verdict != VerdictNotJudged {
		io.WriteString(w, strings.TrimRight(t.Output, "\n")+"\n")
	}
	parallel := ""
	if t.Parallel {
		parallel = ", parallel: judged alone"
	}
	switch t.Verdict {
	case VerdictLeak:
		fmt.Fprintf(w, "--- LEAK: %s (%s%s)\n", t.Name, seconds(t.Elapsed), parallel)
		writeIndented(w, t.Message)
	case VerdictSuspected:
		fmt.Fprintf(w, "--- SUSPECTED: %s (%s%s)\n", t.Name, seconds(t.Elapsed), parallel)
		writeIndented(w, t.Message)
		writeIndented(w, "(not failed; --time-limit sets leaktest's TimeLimit)")
	case VerdictNotJudged:
		fmt.Fprintf(w, "--- NOT JUDGED: %s (%s%s)\n", t.Name, seconds(t.Elapsed), parallel)
		writeIndented(w, t.Reason)
		if t.Output != "" && t.GoVerdict != "skip" {
			writeIndented(w, lastN(t.Output, 20))
		}
	default:
		if verbose {
			fmt.Fprintf(w, "--- NO LEAK: %s (%s%s)\n", t.Name, seconds(t.Elapsed), parallel)
			writeIndented(w, t.Message)
		}
	}
}

func writeIndented(w io.Writer, text string) {
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		fmt.Fprintf(w, "    %s\n", l)
	}
}

// lastN is the last n lines of text.
func lastN(text string, n int) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("[... %d lines before ...]", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}

// countText is the tests of a count by verdict, in words.
func countText(c Counts) string {
	s := fmt.Sprintf("%d tests", c.Tests)
	if c.Tests == 1 {
		s = "1 test"
	}
	var parts []string
	for _, p := range []struct {
		n    int
		what string
	}{{c.Leaks, "leak"}, {c.Suspected, "suspected"}, {c.NotJudged, "not judged"}, {c.NoLeak, "no leak"}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, p.what))
		}
	}
	if len(parts) == 0 {
		return s
	}
	return s + ": " + strings.Join(parts, ", ")
}

// WriteSummary writes the last line: every package's tests by verdict.
func WriteSummary(w io.Writer, r *Result) {
	c := r.Count()
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	pk := fmt.Sprintf("%d packages", c.Packages)
	if c.Packages == 1 {
		pk = "1 package"
	}
	fmt.Fprintf(w, "memdoctor test: %s in %s (%s)", countText(c), pk, r.Elapsed.Round(100*time.Millisecond))
	if c.Failed > 0 {
		fmt.Fprintf(w, "; %d could not be checked", c.Failed)
	}
	fmt.Fprintln(w)
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.2fs", d.Seconds()) }

// relPath is a file's path relative to base when it is under it, else as it is, with forward
// slashes (as CI systems name files).
func relPath(base, file string) string {
	if base != "" {
		if rel, err := filepath.Rel(base, file); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.ToSlash(rel)
		}
	}
	return filepath.ToSlash(file)
}
