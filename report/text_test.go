package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/holders"
)

// hostile strings a profile or a target may carry: a window retitle (OSC ... BEL) and a
// screen clear (CSI 2J).
const (
	retitle = "\x1b]0;pwned\x07"
	clear   = "\x1b[2J"
)

// withoutOwnColours removes the colour codes the printer writes itself.
func withoutOwnColours(s string) string {
	for _, c := range []string{ansiBold, ansiDim, ansiRed, ansiYellow, ansiCyan, ansiReset} {
		s = strings.ReplaceAll(s, c, "")
	}
	return s
}

// TestTextSanitizes prints a diagnosis whose target, culprits, stacks, details, titles and
// notes carry escape sequences: none reaches the output, each is shown escaped, in colour
// or not.
func TestTextSanitizes(t *testing.T) {
	d := &diagnose.Diagnosis{
		Target: diagnose.Target{Name: "svc" + retitle, GoVersion: "go1.26" + clear},
		Findings: []diagnose.Finding{{
			Kind: diagnose.KindHeapLeak, Severity: diagnose.Critical, Title: "main.leak" + retitle + " grows",
			Detail: "held by main.leak" + clear + " and more",
			Culprits: []diagnose.Culprit{{
				Function: "main.leak" + retitle, File: "/src/app/" + clear + "leak.go", Line: 7, Bytes: 1 << 20, Share: 1,
				Stack:  []string{"main.leak" + retitle, "main.serve" + clear},
				HeldBy: &holders.Culprit{Site: "main.leak", Samples: 1, Covered: 1, Paths: []holders.Path{{Expr: "main.registry" + retitle, Share: 1, Bytes: 1 << 20}}},
			}},
			Advice:    []string{"stop calling main.leak" + retitle},
			AdviceEnv: map[string]string{"GOGC": "50" + clear},
		}},
		Notes: []string{"the agent's trigger said " + retitle + clear},
	}
	for _, color := range []bool{false, true} {
		var out bytes.Buffer
		if err := Text(&out, d, TextOptions{Color: color}); err != nil {
			t.Fatal(err)
		}
		s := withoutOwnColours(out.String())
		if strings.ContainsAny(s, "\x1b\x07") {
			t.Errorf("color %v: a raw escape reached the output:\n%q", color, s)
		}
		for _, want := range []string{`main.leak\x1b]0;pwned\a`, `\x1b[2J`, `svc\x1b]0;pwned\a`, `the agent's trigger said \x1b]0;pwned\a\x1b[2J`, `held by main.registry\x1b]0;pwned\a, 100.0%, 1.0 MiB`} {
			if !strings.Contains(s, want) {
				t.Errorf("color %v: the output lacks %s:\n%s", color, want, s)
			}
		}
	}
}

// TestTextHeldBy: who holds a heap leak's culprit's objects is printed under the culprit, one
// path a line, at most three, the JSON having the rest.
func TestTextHeldBy(t *testing.T) {
	var paths []holders.Path
	for i, e := range []string{"main.registry[value].history[i]", "main.(*worker).run.pending[i]", "main.a", "main.b"} {
		paths = append(paths, holders.Path{Expr: e, Share: []float64{0.6, 0.2, 0.1, 0.05}[i], Bytes: 48 << 20})
	}
	d := &diagnose.Diagnosis{Findings: []diagnose.Finding{{
		Kind: diagnose.KindHeapLeak, Severity: diagnose.Warning, Title: "grows",
		Culprits: []diagnose.Culprit{{Function: "main.(*registry).remember", Share: 1,
			HeldBy: &holders.Culprit{Site: "main.(*registry).remember", Samples: 40, Covered: 0.95, Paths: paths}}},
	}}}
	var out bytes.Buffer
	if err := Text(&out, d, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	want := `      culprit: main.(*registry).remember (100.0%)
        held by main.registry[value].history[i], 60.0%, 48.0 MiB
        held by main.(*worker).run.pending[i], 20.0%, 48.0 MiB
        held by main.a, 10.0%, 48.0 MiB
        … 1 more path(s)
        (these paths hold 95.0% of its reachable sampled bytes)
`
	if !strings.Contains(out.String(), want) {
		t.Errorf("got\n%s\nwant in it\n%s", out.String(), want)
	}
}
