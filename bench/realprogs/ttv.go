package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/session"
)

// prefixVerdict is a case judged on the first Seconds of its session, as if watch had
// stopped then.
type prefixVerdict struct {
	Seconds float64 `json:"seconds"`
	Right   bool    `json:"right"`
	Found   string  `json:"found"` // kind/severity of each finding, "none" when there are none
	// Settled says a watch --until-confirmed that diagnosed this much would stop here
	// (diagnose.Diagnosis.Settled).
	Settled bool `json:"settled,omitempty"`
}

// judgePrefixes diagnoses the session in dir as if collection had stopped step, 2*step, ...
// up to until after its start, with this repository's rules, and judges each prefix as the
// whole case is judged.
func judgePrefixes(dir string, v version, step, until time.Duration) ([]prefixVerdict, error) {
	if step <= 0 {
		return nil, fmt.Errorf("judge prefixes of %s: step %s is not positive", dir, step)
	}
	s, err := session.Open(dir)
	if err != nil {
		return nil, err
	}
	var out []prefixVerdict
	for w := step; w <= until; w += step {
		d, ev, err := diagnose.DiagnoseSession(s, evidence.Options{Until: s.Manifest.Start.Add(w), Source: true}, diagnose.Options{})
		if err != nil {
			return out, fmt.Errorf("diagnose the first %s of %s: %w", w, dir, err)
		}
		jd, err := asJudged(d)
		if err != nil {
			return out, err
		}
		var r result
		judge(&r, jd, v)
		out = append(out, prefixVerdict{Seconds: w.Seconds(), Right: r.Right, Found: foundString(r.Found), Settled: d.Settled(ev.Target.Started).Done})
	}
	return out, nil
}

// asJudged passes a diagnosis through its JSON contract, the form the judge reads from
// memdoctor's output.
func asJudged(d *diagnose.Diagnosis) (*diagnosis, error) {
	b, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	var jd diagnosis
	if err := json.Unmarshal(b, &jd); err != nil {
		return nil, err
	}
	return &jd, nil
}

// timeToVerdict is the first prefix judged right, 0 when none is.
func timeToVerdict(ps []prefixVerdict) float64 {
	for _, p := range ps {
		if p.Right {
			return p.Seconds
		}
	}
	return 0
}

// stopsAt is the first prefix a watch --until-confirmed would stop at, and whether its
// verdict there is right; 0 when none.
func stopsAt(ps []prefixVerdict) (float64, bool) {
	for _, p := range ps {
		if p.Settled {
			return p.Seconds, p.Right
		}
	}
	return 0, false
}

// flips counts the prefixes, after the first right one, whose verdict differs from the one
// before: a verdict that comes and goes as the window grows.
func flips(ps []prefixVerdict) int {
	n, seen := 0, false
	for i, p := range ps {
		if seen && p.Right != ps[i-1].Right {
			n++
		}
		seen = seen || p.Right
	}
	return n
}

// verdictCell says, for the table, when the verdict came: for a version with the bug the first
// right prefix ("never" when none), for a fixed version the first prefix with a false alarm
// ("-" when none); with the number of flips after it. "n/a" when the prefixes were not judged.
func verdictCell(r result) string {
	if len(r.Prefixes) == 0 {
		return "n/a"
	}
	var cell string
	if len(r.ExpectKinds) > 0 {
		t := timeToVerdict(r.Prefixes)
		if t == 0 {
			return "never"
		}
		cell = fmt.Sprintf("%gs", t)
	} else {
		for _, p := range r.Prefixes {
			if !p.Right {
				cell = fmt.Sprintf("false at %gs", p.Seconds)
				break
			}
		}
		if cell == "" {
			cell = "-"
		}
	}
	if n := flips(r.Prefixes); n > 0 {
		cell += fmt.Sprintf(" (%d flip%s)", n, strings.Repeat("s", min(n-1, 1)))
	}
	if t, right := stopsAt(r.Prefixes); t > 0 {
		mark := "wrong"
		if right {
			mark = "right"
		}
		cell += fmt.Sprintf("; a watch until confirmed stops at %gs, %s", t, mark)
	}
	return cell
}
