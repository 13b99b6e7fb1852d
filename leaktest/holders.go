package leaktest

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// holdersSite is the function memdoctor holders is asked about for a heap site: the library's
// line that allocated most of its growth, when that is a library's (the most precise function
// whose objects are the leak's), else the program's.
func (r *run) holdersSite(hs heapSite) string {
	lib := hs.site.lib
	if len(hs.libs) > 0 {
		lib = hs.libs[0].at // the heaviest: writeHeapSites sorted them
	}
	if lib.fn != "" && r.attr.mods.classify(lib.fn) == classDep {
		return lib.fn
	}
	if hs.site.inFn {
		return hs.site.program.fn
	}
	return lib.fn
}

// holdersSection is the "who holds it" part of a heap leak's failure: the reference paths
// memdoctor holders found in this very process, or how to get them.
func (r *run) holdersSection(sites []heapSite) string {
	var fns []string
	for _, s := range sites {
		if fn := r.holdersSite(s); fn != "" && !contains(fns, fn) {
			fns = append(fns, fn)
		}
	}
	if len(fns) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nwho holds it:\n")
	out, err := runHolders(fns, r.test)
	if err != nil {
		fmt.Fprintf(&b, "  %v\n", err)
		return b.String()
	}
	writeHolders(&b, out)
	return b.String()
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// holdersResult is what leaktest reads of `memdoctor holders --json`: the fields it shows,
// read tolerantly (a field it does not know is skipped, a missing one left empty), so that a
// newer or older memdoctor serves as well (the schema is holders.Result, docs/holders.md).
type holdersResult struct {
	Schema   string `json:"schema"`
	Culprits []struct {
		Site    string  `json:"site"`
		Samples int     `json:"samples"`
		Bytes   float64 `json:"bytes"`
		Paths   []struct {
			Expr string `json:"expr"`
			Root struct {
				Kind string `json:"kind"`
				Wait string `json:"wait"`
			} `json:"root"`
			Goroutines []int64 `json:"goroutines"`
			Bytes      float64 `json:"bytes"`
			Share      float64 `json:"share"`
		} `json:"paths"`
		Releases []struct {
			Root  string  `json:"root"`
			Bytes float64 `json:"bytes"`
		} `json:"releases"`
		// Cuts, when memdoctor says what to cut (it replaced Releases): read tolerantly.
		Cuts json.RawMessage `json:"cuts"`
	} `json:"culprits"`
	Notes []string `json:"notes"`
}

// writeHolders writes the paths of each culprit, heaviest first.
func writeHolders(b *strings.Builder, res *holdersResult) {
	any := false
	for _, c := range res.Culprits {
		if len(c.Paths) == 0 {
			continue
		}
		any = true
		fmt.Fprintf(b, "  %s: %s held in this process (%d sampled objects)\n", c.Site, bytesText(c.Bytes), c.Samples)
		for i, p := range c.Paths {
			if i == 3 {
				fmt.Fprintf(b, "    (%d more paths)\n", len(c.Paths)-i)
				break
			}
			fmt.Fprintf(b, "    %5.1f%%  %s  %s\n", 100*p.Share, bytesText(p.Bytes), p.Expr)
			if p.Root.Kind == "goroutine" && len(p.Goroutines) > 0 {
				fmt.Fprintf(b, "            held by goroutine %d [%s]\n", p.Goroutines[0], p.Root.Wait)
			}
		}
		for i, rel := range c.Releases {
			if i == 2 {
				break
			}
			fmt.Fprintf(b, "    letting go of %s would free %s\n", rel.Root, bytesText(rel.Bytes))
		}
		for _, cut := range cutsText(c.Cuts) {
			fmt.Fprintf(b, "    %s\n", cut)
		}
	}
	if !any {
		b.WriteString("  memdoctor holders found no path to the growth's sampled objects")
		if len(res.Notes) > 0 {
			b.WriteString(": " + strings.Join(res.Notes, "; "))
		}
		b.WriteString("\n")
	}
}

// cutsText reads memdoctor's "what to cut" field (holders.Cut: what to cut, by its field's
// declaration or its path, and what cutting it frees), one line each; a list of strings, or
// of objects whose expr (or root, or what) it shows, is read as well.
func cutsText(raw json.RawMessage) []string {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var strs []string
	if json.Unmarshal(raw, &strs) == nil {
		return strs
	}
	var cuts []struct {
		Expr  string  `json:"expr"`
		Field string  `json:"field"`
		Share float64 `json:"share"`
		Frees float64 `json:"frees"`
		Root  any     `json:"root"`
		What  string  `json:"what"`
	}
	if json.Unmarshal(raw, &cuts) != nil {
		return nil
	}
	var out []string
	for _, c := range cuts {
		what := c.Field
		if what == "" {
			what = c.Expr
		}
		if what == "" {
			what = c.What
		}
		if r, ok := c.Root.(string); what == "" && ok {
			what = r
		}
		if what == "" {
			continue
		}
		line := "cut " + what
		if c.Frees > 0 {
			line += ": frees " + bytesText(c.Frees)
			if c.Share > 0 {
				line += fmt.Sprintf(" (%.0f%% of the site's sampled objects)", 100*c.Share)
			}
		}
		out = append(out, line)
	}
	return out
}

// readHoldersJSON reads the JSON memdoctor holders wrote.
func readHoldersJSON(path string) (*holdersResult, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var res holdersResult
	if err := json.Unmarshal(data, &res); err != nil {
		return nil, fmt.Errorf("memdoctor holders wrote JSON leaktest cannot read (%v)", err)
	}
	return &res, nil
}

// installHint says how to get the paths without memdoctor on PATH.
func installHint(fns []string) string {
	return fmt.Sprintf("memdoctor holders names the reference paths that keep this memory alive, but the memdoctor command is not on PATH: "+
		"install it (go install github.com/memdoctor/memdoctor/cmd/memdoctor@latest) and run the test again on Linux, "+
		"or run `memdoctor holders --site '%s' PID` against a process that leaks the same way", fns[0])
}

// runPattern is the -run pattern that selects the test named name (subtests included):
// "TestA/b" is "^TestA$/^b$".
func runPattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}
