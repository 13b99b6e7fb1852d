package mcpserver

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/memdoctor/memdoctor/holders"
	"github.com/memdoctor/memdoctor/report"
)

// verdict is what the short text reads of a diagnosis (memdoctor/diagnosis/v1): the schema's
// JSON, not the diagnose package's types, so that the text follows the contract.
type verdict struct {
	Schema string `json:"schema"`
	Source string `json:"source"`
	Target struct {
		Name string `json:"name"`
		PID  int    `json:"pid"`
	} `json:"target"`
	Window struct {
		Seconds float64 `json:"seconds"`
	} `json:"window"`
	Summary struct {
		RSSPeak     uint64  `json:"rss_peak_bytes"`
		HeapPeak    uint64  `json:"heap_live_peak_bytes"`
		GCPerSecond float64 `json:"gc_per_second"`
		Goroutines  int     `json:"goroutines_peak"`
	} `json:"summary"`
	Findings []struct {
		Kind       string `json:"kind"`
		Severity   string `json:"severity"`
		Confidence string `json:"confidence"`
		Title      string `json:"title"`
		Culprits   []struct {
			Function string           `json:"function"`
			File     string           `json:"file"`
			Line     int64            `json:"line"`
			HeldBy   *holders.Culprit `json:"held_by"`
		} `json:"culprits"`
		Advice []string `json:"advice"`
	} `json:"findings"`
	Snapshots []json.RawMessage `json:"snapshots"`
	NotJudged []struct {
		Kind string `json:"kind"`
	} `json:"not_judged"`
	Notes []string `json:"notes"`
}

// maxFindings bounds the findings the short text lists (the JSON has them all).
const maxFindings = 8

// summarize writes the short text of a diagnosis: what was judged, each finding in one line
// with its first culprit and first advice, and what could not be judged.
func summarize(diagnosis []byte, what string) (string, error) {
	var v verdict
	if err := json.Unmarshal(diagnosis, &v); err != nil {
		return "", fmt.Errorf("the diagnosis of %s: %w", what, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "memdoctor diagnosis of %s", what)
	if v.Target.Name != "" {
		fmt.Fprintf(&b, " (%s", v.Target.Name)
		if v.Target.PID != 0 {
			fmt.Fprintf(&b, ", pid %d", v.Target.PID)
		}
		b.WriteString(")")
	}
	if v.Window.Seconds > 0 {
		fmt.Fprintf(&b, ", %.0f s of %s", v.Window.Seconds, v.Source)
	}
	b.WriteString("\n")
	var figures []string
	if v.Summary.RSSPeak > 0 {
		figures = append(figures, "RSS peak "+report.Bytes(v.Summary.RSSPeak))
	}
	if v.Summary.HeapPeak > 0 {
		figures = append(figures, "live heap peak "+report.Bytes(v.Summary.HeapPeak))
	}
	if v.Summary.GCPerSecond > 0 {
		figures = append(figures, fmt.Sprintf("GC %.2f/s", v.Summary.GCPerSecond))
	}
	if v.Summary.Goroutines > 0 {
		figures = append(figures, fmt.Sprintf("goroutines peak %d", v.Summary.Goroutines))
	}
	if len(figures) > 0 {
		b.WriteString(strings.Join(figures, ", ") + "\n")
	}
	if len(v.Findings) == 0 {
		if len(v.NotJudged) == 0 {
			b.WriteString("No memory problem found.\n")
		} else {
			b.WriteString("No finding.\n")
		}
	}
	for i, f := range v.Findings {
		if i == maxFindings {
			fmt.Fprintf(&b, "... and %d more findings (in the JSON)\n", len(v.Findings)-maxFindings)
			break
		}
		fmt.Fprintf(&b, "%s %s (%s): %s\n", strings.ToUpper(f.Severity), f.Kind, f.Confidence, f.Title)
		if len(f.Culprits) > 0 {
			c := f.Culprits[0]
			fmt.Fprintf(&b, "  culprit: %s", c.Function)
			if c.File != "" {
				fmt.Fprintf(&b, " %s:%d", c.File, c.Line)
			}
			b.WriteString("\n")
			if c.HeldBy != nil {
				for _, l := range c.HeldBy.Lines(3) {
					fmt.Fprintf(&b, "    %s\n", l)
				}
			}
		}
		if len(f.Advice) > 0 {
			fmt.Fprintf(&b, "  fix: %s\n", f.Advice[0])
		}
	}
	if n := len(v.Snapshots); n > 0 {
		fmt.Fprintf(&b, "%d single-profile snapshot view(s) (what a profile holds at its instant): in the JSON's snapshots\n", n)
	}
	if len(v.NotJudged) > 0 {
		var kinds []string
		for _, n := range v.NotJudged {
			kinds = append(kinds, n.Kind)
		}
		fmt.Fprintf(&b, "Not judged (the data could not show them): %s\n", strings.Join(kinds, ", "))
	}
	if len(v.Notes) > 0 {
		fmt.Fprintf(&b, "%d note(s) on the data in the JSON's notes\n", len(v.Notes))
	}
	b.WriteString("The structured content is the whole diagnosis (" + v.Schema + ").")
	return b.String(), nil
}
