package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/internal/dev/sim"
	"github.com/memdoctor/memdoctor/session"
	"github.com/memdoctor/memdoctor/source/pprofdir"
)

// A figure a person cannot read: each check names the defect, matches the figure, and says
// whether the matched number is implausible.
var figureChecks = []struct {
	defect string
	re     *regexp.Regexp
	bad    func(v float64) bool
}{
	// 2.8e-06, 1.0223616e+07: no person reads these.
	{"a number in scientific notation", regexp.MustCompile(`\b\d+(?:\.\d+)?[eE][+-]?\d+\b`), nil},
	{"not a number", regexp.MustCompile(`\b(?:NaN|[+-]?Inf)\b`), nil},
	// "allocates 23304177.0 times what it did": a ratio from a near-zero start, which should
	// read "from next to nothing to 22 MiB/s". Rates ("12.7 times per second") are not ratios.
	{"a ratio from a near-zero start", regexp.MustCompile(`(\d+(?:\.\d+)?) ?(?:times\b(?: (?:per|a) second\b)?|×)`), func(v float64) bool { return v >= 1000 }},
	// Shares of a whole: a change ("+416%") may exceed 100%, a share may not.
	{"a share over 100%", regexp.MustCompile(`(?:^|[^+\-\d.])(\d+(?:\.\d+)?)%`), func(v float64) bool { return v > 100.05 }},
	{"a change from a near-zero start", regexp.MustCompile(`[+-](\d+(?:\.\d+)?)%`), func(v float64) bool { return v >= 100000 }},
	{"a p-value out of (0, 1]", regexp.MustCompile(`\bp ?[=<] ?(\d+(?:\.\d+)?)\b`), func(v float64) bool { return v <= 0 || v > 1 }},
	{"a negative duration", regexp.MustCompile(`(?:^|[\s(])-\d+(?:\.\d+)?(?:ns|µs|ms|s|m|h)\b`), nil},
	// "spike duration median 0 s": a duration nothing measured.
	{"a duration of nothing", regexp.MustCompile(`\bduration\b[^,.;]*?(?:^|\s)0 ?s\b`), nil},
	// Go's own format for a duration that was not rounded: 1m23.456789s.
	{"an unrounded duration", regexp.MustCompile(`(?:^|[^\d.])\d+\.\d{4,}(?:ms|s)\b`), nil},
}

// unreadable returns the figures of text that fail a check, each with its defect.
func unreadable(text string) []string {
	var out []string
	for _, c := range figureChecks {
		for _, m := range c.re.FindAllStringSubmatch(text, -1) {
			if strings.HasSuffix(m[0], " second") {
				continue // a rate, not a ratio
			}
			if c.bad != nil {
				if v, err := strconv.ParseFloat(m[len(m)-1], 64); err != nil || !c.bad(v) {
					continue
				}
			}
			out = append(out, fmt.Sprintf("%s: %q", c.defect, strings.TrimSpace(m[0])))
		}
	}
	return out
}

// TestFigureChecks: each check rejects the defect it names and passes the figures people
// read.
func TestFigureChecks(t *testing.T) {
	for _, bad := range []string{
		"allocates 23304177.0 times what it did", "Mann-Kendall p=2.8e-06 over 9 slices", "From 1.0223616e+07", "spike duration median 0 s",
		"made 140% of the climb", "a burst of NaN MiB", "p=0 over 5 lows", "over -3s", "over 1m23.456789s", "rose +2500000%",
	} {
		if len(unreadable(bad)) == 0 {
			t.Errorf("%q passes", bad)
		}
	}
	for _, good := range []string{
		"allocates 44.6 times what it did", "Mann-Kendall p<0.001 over 9 slices", "p=0.014", "made 94% of the climb",
		"the GC runs 12.7 times per second", "heap goal rose +416% within 1m0s", "over 1m15s", "window 3.99 s", "late slope 0.19×",
		"from next to nothing (12 B/s) to 22.0 MiB/s", "-1.5 MiB", "100.0%", "spike duration median 10 s", "window 60 s",
	} {
		if u := unreadable(good); len(u) > 0 {
			t.Errorf("%q fails: %v", good, u)
		}
	}
}

// TestFiguresAreReadable renders the report of every kept recording (the golden sessions,
// the recorded sessions and folders of profiles in diagnose/testdata, and the other
// packages' sessions), whole and, unless -short, cut every 10 s from its start as the
// accuracy matrix cuts them, and of the simulator's sessions (one of each shape and vantage
// point, unless -short), and rejects every figure a person cannot read.
func TestFiguresAreReadable(t *testing.T) {
	roots := []string{"../diagnose/testdata", "testdata", "../session/testdata", "../tune/testdata"}
	var sessions, folders []string
	for _, root := range roots {
		err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			switch {
			case err != nil || !d.IsDir():
				return err
			case session.IsDir(p):
				sessions = append(sessions, p)
				return filepath.SkipDir
			case strings.HasPrefix(filepath.Base(p), "burst-"):
				folders = append(folders, p)
				return filepath.SkipDir
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(sessions) < 10 || len(folders) < 2 {
		t.Fatalf("found %d sessions and %d folders of profiles: the testdata moved", len(sessions), len(folders))
	}
	check := func(name string, d *diagnose.Diagnosis) {
		t.Helper()
		var b bytes.Buffer
		if err := Text(&b, d, TextOptions{}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, u := range unreadable(b.String()) {
			t.Errorf("%s: %s", name, u)
		}
	}
	step := 10 * time.Second
	for _, dir := range sessions {
		s, err := session.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		d, ev, err := diagnose.DiagnoseSession(s, evidence.Options{}, diagnose.Options{})
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		check(dir, d)
		if testing.Short() || ev.End.IsZero() {
			continue
		}
		for w := step; s.Manifest.Start.Add(w).Before(ev.End); w += step {
			d, _, err := diagnose.DiagnoseSession(s, evidence.Options{Until: s.Manifest.Start.Add(w)}, diagnose.Options{})
			if err != nil {
				t.Fatalf("%s at %v: %v", dir, w, err)
			}
			check(fmt.Sprintf("%s at %v", dir, w), d)
		}
	}
	for _, dir := range folders {
		ev, err := pprofdir.Load([]string{dir}, pprofdir.Options{})
		if err != nil {
			t.Fatal(err)
		}
		check(dir, diagnose.Diagnose(ev, diagnose.Options{}))
	}
	if testing.Short() {
		return
	}
	for _, sh := range sim.Shapes {
		for _, v := range sim.Vantages {
			ws := sim.WindowsOf(sh)
			spec := sim.Spec{Shape: sh, Vantage: v, Window: ws[len(ws)-1]}
			dir := t.TempDir()
			if _, err := sim.Generate(dir, 1, spec); err != nil {
				t.Fatal(err)
			}
			s, err := session.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			d, _, err := diagnose.DiagnoseSession(s, evidence.Options{}, diagnose.Options{})
			if err != nil {
				t.Fatal(err)
			}
			check(fmt.Sprintf("sim %s/%s/%v", sh, v, spec.Window), d)
		}
	}
}
