package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
)

// diagnosis is the part of memdoctor's diagnosis JSON (schema memdoctor/diagnosis/v1) the
// judge reads. It is decoded loosely, so that fields added by a redesign do not break it.
type diagnosis struct {
	Schema   string  `json:"schema"`
	Summary  summary `json:"summary"`
	Findings []struct {
		Kind     string `json:"kind"`
		Severity string `json:"severity"`
		Title    string `json:"title"`
		Culprits []struct {
			Function string  `json:"function"`
			File     string  `json:"file"`
			Line     int     `json:"line"`
			Share    float64 `json:"share"`
		} `json:"culprits"`
	} `json:"findings"`
}

// summary holds the headline figures of a diagnosis worth printing beside a verdict.
type summary struct {
	RSSPeakBytes      uint64  `json:"rss_peak_bytes"`
	HeapLivePeakBytes uint64  `json:"heap_live_peak_bytes"`
	GoroutinesPeak    int     `json:"goroutines_peak"`
	GoroutinesLatest  int     `json:"goroutines_latest"`
	GCCPUFraction     float64 `json:"gc_cpu_fraction"`
	Samples           int     `json:"samples"`
	HeapProfiles      int     `json:"heap_profiles"`
	GoroutineProfiles int     `json:"goroutine_profiles"`
}

// finding is one finding as the table shows it.
type finding struct {
	Kind       string `json:"kind"`
	Severity   string `json:"severity"`
	Title      string `json:"title"`
	TopCulprit string `json:"top_culprit,omitempty"`
}

func readDiagnosis(path string) (*diagnosis, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var d diagnosis
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if !strings.HasPrefix(d.Schema, "memdoctor/diagnosis/") {
		return nil, fmt.Errorf("%s: not a memdoctor diagnosis (schema %q)", path, d.Schema)
	}
	return &d, nil
}

// severe reports whether a severity is warning or above.
func severe(sev string) bool { return sev == "warning" || sev == "critical" }

// judge fills r's findings and verdict from d. A version with the bug is judged right when
// memdoctor reports the expected kind at warning or above with an expected culprit in its top
// three; a fixed version when nothing is reported at warning or above.
func judge(r *result, d *diagnosis, v version) {
	r.Summary = d.Summary
	r.Found = nil
	for _, f := range d.Findings {
		ff := finding{Kind: f.Kind, Severity: f.Severity, Title: f.Title}
		if len(f.Culprits) > 0 {
			ff.TopCulprit = f.Culprits[0].Function
		}
		r.Found = append(r.Found, ff)
	}
	if len(v.expect) == 0 {
		r.Verdict = true
		for _, f := range d.Findings {
			if severe(f.Severity) {
				r.Verdict = false
			}
		}
		r.Right = r.Verdict
		return
	}
	r.Verdict, r.CulpritRank = false, 0
	for _, f := range d.Findings {
		if !v.expect.has(f.Kind) || !severe(f.Severity) {
			continue
		}
		r.Verdict = true
		for i, c := range f.Culprits {
			if matchesCulprit(c.Function, v.culprits) {
				r.CulpritRank, r.CulpritLine = i+1, c.Line
				break
			}
		}
		break
	}
	r.ExpectLine = v.line
	r.Right = r.Verdict && (len(v.culprits) == 0 || (r.CulpritRank >= 1 && r.CulpritRank <= 3)) && (v.line == 0 || r.CulpritLine == v.line)
}

// foundString lists the findings as kind/severity, "none" when there are none.
func foundString(fs []finding) string {
	if len(fs) == 0 {
		return "none"
	}
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.Kind + "/" + f.Severity
	}
	return strings.Join(parts, " ")
}

// printTable prints one row per result and the totals.
func printTable(w io.Writer, results []result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PROGRAM\tVERSION\tROLE\tEXPECTED\tFOUND\tTOP CULPRIT\tCULPRIT\tGOROUTINES\tHEAP\tRSS (HWM)\tRESULT\tWATCHED\tVERDICT AT")
	right, judged := 0, 0
	for _, r := range results {
		if r.Skipped != "" {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\tskipped: %s\t\t\t\t\t\t-\t\t\n", r.Program, r.Version, r.Role, r.Expect, oneLine(r.Skipped, 80))
			continue
		}
		if r.WatchError != "" && r.Found == nil && r.Summary.Samples == 0 {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\terror: %s\t\t\t\t\t\twrong\t\t\n", r.Program, r.Version, r.Role, r.Expect, oneLine(r.WatchError, 80))
			judged++
			continue
		}
		judged++
		res := "wrong"
		if r.Right {
			res = "right"
			right++
		}
		gs := fmt.Sprintf("%d->%d", r.Before.Goroutines, r.After.Goroutines)
		if r.After.LeakServed {
			gs += fmt.Sprintf(" (%d proven)", r.After.ProvenLeaked)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s->%s\t%s (%s)\t%s\t%.0fs\t%s\n",
			r.Program, r.Version, r.Role, r.Expect, foundString(r.Found), topCulprit(r), culpritCell(r),
			gs, mib(r.Before.HeapAlloc), mib(r.After.HeapAlloc), mib(r.After.RSS), mib(r.After.HWM), res, r.Watched, verdictCell(r))
	}
	tw.Flush()
	fmt.Fprintf(w, "\n%d of %d judged cases right\n", right, judged)
	printHolders(w, results)
}

// printHolders says, for each case whose holders were read, what memdoctor holders named and
// whether it is the truth.
func printHolders(w io.Writer, results []result) {
	right, judged := 0, 0
	for _, r := range results {
		if r.Holders == nil {
			continue
		}
		if judged == 0 {
			fmt.Fprintln(w, "\nholders (who keeps the leak alive, read from the live process):")
		}
		judged++
		if r.Holders.Right {
			right++
		}
		want, _ := holdersExpectation(r.Program, r.Version)
		fmt.Fprintf(w, "  %s@%s: %s\n", r.Program, r.Version, r.Holders.line(want))
	}
	if judged > 0 {
		fmt.Fprintf(w, "%d of %d holders right\n", right, judged)
	}
}

// topCulprit is the expected finding's top culprit for a buggy version, else the first
// culprit of the most severe finding.
func topCulprit(r result) string {
	for _, f := range r.Found {
		if kinds(r.ExpectKinds).has(f.Kind) && f.TopCulprit != "" {
			return shortFunc(f.TopCulprit)
		}
	}
	for _, sev := range []string{"critical", "warning", "info"} {
		for _, f := range r.Found {
			if f.Severity == sev && f.TopCulprit != "" {
				return shortFunc(f.TopCulprit)
			}
		}
	}
	return "-"
}

func culpritCell(r result) string {
	switch {
	case r.Expect == "none" || len(r.Culprits) == 0:
		return "-"
	case r.CulpritRank == 0:
		return "absent"
	case r.ExpectLine > 0:
		return fmt.Sprintf("#%d line %d (want %d)", r.CulpritRank, r.CulpritLine, r.ExpectLine)
	default:
		return fmt.Sprintf("#%d", r.CulpritRank)
	}
}

// shortFunc drops the module path from a function name: the last path element stays.
func shortFunc(fn string) string {
	if i := strings.LastIndex(fn, "/"); i >= 0 {
		return fn[i+1:]
	}
	return fn
}

func mib(b uint64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0fM", float64(b)/(1<<20))
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = s[:n] + "..."
	}
	return s
}
