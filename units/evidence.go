package units

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// A finding's evidence names each figure with its unit at the end ("growth_bytes_per_minute",
// "gc_cpu_fraction", "spikes_count"), optionally followed by a qualifier
// ("gomemlimit_bytes_recommended", "predicted_gc_per_second_after"). Evidence reads the unit
// from the name and formats the figure for people; the text and HTML reports both use it.

// evidenceUnits are the units a name may end in, longest first, each with its formatter.
var evidenceUnits = []struct {
	suffix string
	format func(float64) string
}{
	{"bytes_per_second", func(v float64) string { return Bytes(v) + "/s" }},
	{"bytes_per_minute", func(v float64) string { return Bytes(v) + "/min" }},
	{"bytes_per_goroutine", func(v float64) string { return Bytes(v) + " per goroutine" }},
	{"share_of_rss", func(v float64) string { return Percent(v) + " of RSS" }},
	{"of_budget", func(v float64) string { return Percent(v) + " of the budget" }},
	{"per_second", func(v float64) string { return Number(v) + "/s" }},
	{"per_minute", func(v float64) string { return Number(v) + "/min" }},
	{"bytes", Bytes},
	{"seconds", Seconds},
	{"fraction", Percent},
	{"share", Percent},
	{"percent", func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) + "%" }},
	{"ratio", func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) + "×" }},
	{"count", func(v float64) string { return strconv.FormatFloat(math.Round(v), 'f', 0, 64) }},
	{"cores", func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) + " cores" }},
	{"gogc", gogc},
	{"p", pValue},
	{"z", func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }},
	{"tau", func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }},
}

// evidenceQualifiers may follow the unit; the label keeps them in parentheses.
var evidenceQualifiers = []string{"recommended", "current", "now", "before", "after"}

// Evidence returns the label and the formatted value of one evidence figure:
// ("growth_bytes_per_minute", 2.232e8) -> ("growth", "212.9 MiB/min"). A name whose unit it
// does not know keeps its words as the label and the number with at most three significant
// decimals: nothing is hidden, and the unit test lists every name the rules produce.
func Evidence(name string, v float64) (label, value string) {
	base, qual := splitQualifier(name)
	unit, ok := evidenceUnit(base)
	if !ok {
		return evidenceLabel(name), Number(v)
	}
	label = evidenceLabel(strings.TrimSuffix(strings.TrimSuffix(base, unit.suffix), "_"))
	if label == "" || unit.suffix == "p" || unit.suffix == "z" || unit.suffix == "tau" { // "gogc", and a test's statistics, keep their name
		label = evidenceLabel(base)
	}
	if qual != "" {
		label += " (" + qual + ")"
	}
	return label, unit.format(v)
}

// EvidenceUnit returns the unit Evidence reads in name, "" when it knows none.
func EvidenceUnit(name string) string {
	base, _ := splitQualifier(name)
	if u, ok := evidenceUnit(base); ok {
		return u.suffix
	}
	return ""
}

func splitQualifier(name string) (base, qual string) {
	for _, q := range evidenceQualifiers {
		if b, ok := strings.CutSuffix(name, "_"+q); ok {
			if _, known := evidenceUnit(b); known {
				return b, q
			}
		}
	}
	return name, ""
}

func evidenceUnit(name string) (struct {
	suffix string
	format func(float64) string
}, bool) {
	for _, u := range evidenceUnits {
		if name == u.suffix || strings.HasSuffix(name, "_"+u.suffix) {
			return u, true
		}
	}
	return evidenceUnits[0], false
}

// labelWords are the words of evidence names that people write otherwise.
var labelWords = map[string]string{
	"gc": "GC", "cpu": "CPU", "rss": "RSS", "gogc": "GOGC", "gomemlimit": "GOMEMLIMIT",
	"oom": "OOM", "go": "Go", "mann": "Mann-Kendall", "kendall": "Kendall",
}

// evidenceLabel turns a name's words into a label: "non_go_peak" -> "non-Go peak".
func evidenceLabel(s string) string {
	var words []string
	for _, w := range strings.Split(s, "_") {
		if r, ok := labelWords[w]; ok {
			w = r
		}
		if w == "" {
			continue
		}
		if w == "Go" && len(words) > 0 && words[len(words)-1] == "non" {
			words[len(words)-1] = "non-Go"
			continue
		}
		if w == "Kendall" && len(words) > 0 && words[len(words)-1] == "Mann-Kendall" {
			continue
		}
		words = append(words, w)
	}
	return strings.Join(words, " ")
}

// Seconds formats a number of seconds: "0.35 s", "12.5 s", "95 s", "7200 s (2h0m0s)".
func Seconds(v float64) string {
	var s string
	switch a := math.Abs(v); {
	case a == 0:
		return "0 s"
	case a < 0.01:
		s = strconv.FormatFloat(v*1000, 'f', 2, 64) + " ms"
	case a < 10:
		s = strconv.FormatFloat(v, 'f', 2, 64) + " s"
	case a < 100:
		s = strconv.FormatFloat(v, 'f', 1, 64) + " s"
	default:
		s = strconv.FormatFloat(v, 'f', 0, 64) + " s"
	}
	if math.Abs(v) >= 120 {
		s += " (" + Duration(time.Duration(v*float64(time.Second))) + ")"
	}
	return s
}

// Number formats a plain number with at most three significant decimals.
func Number(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1000 || a == math.Trunc(a):
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// gogc formats a GOGC value: a percentage, or off.
func gogc(v float64) string {
	if v < 0 {
		return "off"
	}
	return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
}

// pValue formats a test's p-value.
func pValue(v float64) string {
	if v > 0 && v < 0.001 {
		return "<0.001"
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}
