package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// holdersWant is what `memdoctor holders` must name as the holder of a version's leaked
// objects: the truth, read from the program's source, not from what memdoctor printed.
type holdersWant struct {
	// site is the allocation site of the leaked objects, as the diagnosis names culprits
	// (the full function name); the runner passes it to holders with --site.
	site string
	// path are substrings every path that holds the site's objects must contain: the
	// structures that really keep them.
	path []string
	// share is the least share of the site's reachable sampled bytes the matching paths must
	// hold (0.5 when zero).
	share float64
	// truth says what holds the objects and why, from the source: printed when the named
	// path is wrong.
	truth string
	// cut, when set, is the field memdoctor's cuts must name (holders.Cut.Field), and
	// cutShare the least share of the site's reachable sampled bytes the cuts that name it
	// must hold together (0.8 when zero).
	cut      string
	cutShare float64
}

func (w holdersWant) minCutShare() float64 {
	if w.cutShare <= 0 {
		return 0.8
	}
	return w.cutShare
}

func (w holdersWant) minShare() float64 {
	if w.share <= 0 {
		return 0.5
	}
	return w.share
}

// holdersVerdict is how memdoctor holders did on a case's live process at the end of its
// watch, against the case's holdersWant.
type holdersVerdict struct {
	Site string   `json:"site"`
	Want []string `json:"want_path"`
	// From is the session whose diagnosis gave holders its culprits (--from), when the
	// diagnosis reported a heap leak.
	From string `json:"from,omitempty"`
	// Top is the path holding the most of the site's sampled bytes, as memdoctor names it.
	Top string `json:"top_path,omitempty"`
	// Share is the share of the site's reachable sampled bytes held by paths that contain
	// every wanted substring.
	Share     float64 `json:"share"`
	Samples   int     `json:"samples"`
	Reachable float64 `json:"reachable_bytes"`
	// WantCut is the field the cuts must name; CutShare the share of the site's reachable
	// sampled bytes the cuts naming it hold, CutFrees what they free (bytes).
	WantCut  string  `json:"want_cut,omitempty"`
	CutShare float64 `json:"cut_share,omitempty"`
	CutFrees uint64  `json:"cut_frees,omitempty"`
	// StoppedMs is how long memdoctor says the process was stopped.
	StoppedMs float64 `json:"stopped_ms"`
	Right     bool    `json:"right"`
	// Error says why holders did not run or gave nothing to judge.
	Error string `json:"error,omitempty"`
}

// holdersResult is the part of memdoctor's holders JSON (schema memdoctor/holders/v1) the
// judge reads, decoded loosely as the diagnosis is.
type holdersResult struct {
	Schema    string  `json:"schema"`
	StoppedMs float64 `json:"stopped_ms"`
	Culprits  []struct {
		Site           string  `json:"site"`
		Samples        int     `json:"samples"`
		Bytes          float64 `json:"bytes"`
		GarbageSamples int     `json:"garbage_samples"`
		GarbageBytes   float64 `json:"garbage_bytes"`
		Paths          []struct {
			Expr  string  `json:"expr"`
			Bytes float64 `json:"bytes"`
		} `json:"paths"`
		Cuts []struct {
			Field string  `json:"field"`
			Share float64 `json:"share"`
			Frees uint64  `json:"frees"`
		} `json:"cuts"`
	} `json:"culprits"`
}

// Files memdoctor holders leaves in a case's directory.
const (
	holdersJSON = "holders.json"
	holdersText = "holders.txt"
)

// runHolders runs memdoctor holders on the live process pid: the heap-leak culprits of the
// diagnosis in dir's session (--from, when it reports a heap leak) and want's site, keeping
// the JSON result and the output in dir. It returns the verdict against want.
func runHolders(ctx context.Context, memdoctor, dir string, pid int, d *diagnosis, want holdersWant) *holdersVerdict {
	v := &holdersVerdict{Site: want.site, Want: want.path}
	// Thirty paths, not ten: a leak whose records hold many kinds of objects (a metrics
	// series: the series, its buckets, its labels...) spreads over many paths.
	args := []string{"holders", "--paths", "30", "--json", filepath.Join(dir, holdersJSON)}
	var culprits []string
	if d != nil {
		culprits = d.leakCulprits()
	}
	if len(culprits) > 0 {
		v.From = filepath.Join(dir, "session")
		args = append(args, "--from", v.From)
	}
	// The site is judged whatever the diagnosis named; given once (holders counts a site
	// named twice twice).
	if !slices.Contains(culprits, want.site) {
		args = append(args, "--site", want.site)
	}
	args = append(args, fmt.Sprint(pid))
	hctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(hctx, memdoctor, args...)
	out, err := os.Create(filepath.Join(dir, holdersText))
	if err != nil {
		v.Error = err.Error()
		return v
	}
	defer out.Close()
	fmt.Fprintf(out, "$ memdoctor %s\n", strings.Join(args, " "))
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	// Interrupted, memdoctor lets the process run again and exits.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Run(); err != nil {
		v.Error = fmt.Sprintf("memdoctor holders: %v (see %s)", err, out.Name())
		return v
	}
	res, err := readHolders(filepath.Join(dir, holdersJSON))
	if err != nil {
		v.Error = err.Error()
		return v
	}
	judgeHolders(v, res, want)
	return v
}

// leakCulprits are the culprits memdoctor holders --from takes from the diagnosis: the first
// three of each heap-leak finding.
func (d *diagnosis) leakCulprits() []string {
	var out []string
	for _, f := range d.Findings {
		if f.Kind != "heap-leak" {
			continue
		}
		for i, c := range f.Culprits {
			if i < 3 && c.Function != "" {
				out = append(out, c.Function)
			}
		}
	}
	return out
}

func readHolders(path string) (*holdersResult, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var h holdersResult
	if err := json.Unmarshal(b, &h); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if !strings.HasPrefix(h.Schema, "memdoctor/holders/") {
		return nil, fmt.Errorf("%s: not a memdoctor holders result (schema %q)", path, h.Schema)
	}
	return &h, nil
}

// judgeHolders fills v from res: right when the paths that contain every substring of
// want.path hold at least want's share of the site's reachable sampled bytes.
func judgeHolders(v *holdersVerdict, res *holdersResult, want holdersWant) {
	v.Site, v.Want, v.StoppedMs, v.WantCut = want.site, want.path, res.StoppedMs, want.cut
	v.Top, v.Share, v.Samples, v.Reachable, v.Right, v.Error = "", 0, 0, 0, false, ""
	v.CutShare, v.CutFrees = 0, 0
	for _, c := range res.Culprits {
		if c.Site != want.site {
			continue
		}
		v.Samples = c.Samples
		v.Reachable = c.Bytes - c.GarbageBytes
		if len(c.Paths) > 0 {
			v.Top = c.Paths[0].Expr
		}
		var held float64
		for _, p := range c.Paths {
			if containsAll(p.Expr, want.path) {
				held += p.Bytes
			}
		}
		if v.Reachable > 0 {
			v.Share = held / v.Reachable
		}
		for _, k := range c.Cuts {
			if want.cut != "" && k.Field == want.cut {
				v.CutShare += k.Share
				v.CutFrees += k.Frees
			}
		}
		switch {
		case c.Samples == 0:
			v.Error = "no sampled object of the site in the process"
		case v.Reachable <= 0:
			v.Error = fmt.Sprintf("none of the site's %d sampled objects is reachable", c.Samples)
		}
		v.Right = v.Error == "" && v.Share >= want.minShare() && (want.cut == "" || v.CutShare >= want.minCutShare())
		return
	}
	v.Error = "the result has no culprit " + want.site
}

func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// line says the verdict in one line for the run's table.
func (v *holdersVerdict) line(want holdersWant) string {
	res := "wrong"
	if v.Right {
		res = "right"
	}
	if v.Error != "" {
		return fmt.Sprintf("%s: %s: %s (want a path with %q)", res, shortFunc(v.Site), v.Error, strings.Join(v.Want, `", "`))
	}
	s := fmt.Sprintf("%s: %s held by %s; %.0f%% of its reachable sampled bytes on paths with %q (want %.0f%%)",
		res, shortFunc(v.Site), v.Top, 100*v.Share, strings.Join(v.Want, `", "`), 100*want.minShare())
	if want.cut != "" {
		s += fmt.Sprintf("; cut %s: %.0f%% of them, frees %.1f MiB (want %.0f%%)", want.cut, 100*v.CutShare, float64(v.CutFrees)/(1<<20), 100*want.minCutShare())
	}
	s += fmt.Sprintf("; stopped %.0f ms", v.StoppedMs)
	if !v.Right && want.truth != "" {
		s += "; truth: " + want.truth
	}
	return s
}

// holdersExpectation is what the catalogue expects holders to name for a program's version.
func holdersExpectation(progName, ver string) (holdersWant, bool) {
	for _, p := range catalogue() {
		if p.name == progName {
			w, ok := p.holders[ver]
			return w, ok
		}
	}
	return holdersWant{}, false
}

// rejudgeHolders judges the holders result a run left in dir, the case's directory, afresh
// against today's expectation.
func rejudgeHolders(r *result, dir string) {
	want, ok := holdersExpectation(r.Program, r.Version)
	if !ok || r.Holders == nil {
		return
	}
	res, err := readHolders(filepath.Join(dir, holdersJSON))
	if err != nil {
		if r.Holders.Error == "" {
			r.Holders.Error = err.Error()
		}
		r.Holders.Right = false
		return
	}
	judgeHolders(r.Holders, res, want)
}
