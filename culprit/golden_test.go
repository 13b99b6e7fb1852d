package culprit

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The golden tests run on small real profiles copied into this package's testdata (see
// testdata/PROVENANCE.tsv). Regenerate with: go test -run Golden -update

const goldenTop = 10

func formatTable(tab *Table) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s/%s total %d, %d functions, %d lines\n", tab.Type, tab.Unit, tab.Total, len(tab.ByFunction), len(tab.ByLine))
	for i, e := range tab.ByFunction[:min(goldenTop, len(tab.ByFunction))] {
		fmt.Fprintf(&b, "%2d. %d %s\n    stack: %s\n", i+1, e.Value, formatSite(e.Site), formatStack(e.Stack))
	}
	return b.String()
}

func formatDiff(r *DiffResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s/%s old %d new %d growth %d (lines %d), %d functions, %d lines\n",
		r.Type, r.Unit, r.OldTotal, r.NewTotal, r.Growth, r.LineGrowth, len(r.ByFunction), len(r.ByLine))
	for _, w := range r.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	for i, d := range r.ByFunction[:min(goldenTop, len(r.ByFunction))] {
		fmt.Fprintf(&b, "%2d. %+d (%d -> %d, %.4f) %s\n    stack: %s\n", i+1, d.Delta, d.Old, d.New, d.Share, formatSite(d.Site), formatStack(d.Stack))
	}
	return b.String()
}

func formatGroups(groups []GoroutineGroup) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d groups, %d goroutines\n", len(groups), totalCount(groups))
	for i, g := range groups {
		fmt.Fprintf(&b, "%2d. %d state=%q leaked=%d blocking=%s created-by=%s\n    culprit: %s\n    key: %s\n",
			i+1, g.Count, g.State, g.Leaked, g.Blocking, g.CreatedBy, formatSite(g.Culprit), g.Key)
	}
	return b.String()
}

func formatSite(s Site) string {
	own := "own"
	if !s.Own {
		own = "not-own"
	}
	// Only the base name of the file: the tables must not depend on paths.
	file := "?"
	if s.File != "" {
		file = filepath.Base(s.File)
	}
	return fmt.Sprintf("%s %s:%d %s", s.Function, file, s.Line, own)
}

func formatStack(stack []string) string {
	const n = 4
	if len(stack) <= n {
		return strings.Join(stack, " <- ")
	}
	return strings.Join(stack[:n], " <- ") + fmt.Sprintf(" <- ... (%d more)", len(stack)-n)
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file; got:\n%s\nwant:\n%s", name, got, want)
	}
}

func TestGoldenAggregate(t *testing.T) {
	for _, tc := range []struct {
		file  string
		types []string
	}{
		{"allocs_small_req5.pb", []string{"alloc_space", "alloc_objects"}},
		{"goroutine_small_req2.pb", []string{"goroutine"}},
		{"gobench_legacy_text.heap", []string{"inuse_space", "alloc_space"}},
		{"parca_series_last.pb.gz", []string{"inuse_space"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			p := testdataProfile(t, tc.file)
			var b strings.Builder
			for _, typ := range tc.types {
				tab, err := Aggregate(p, typ, Options{})
				if err != nil {
					t.Fatal(err)
				}
				idx, _ := SampleIndex(p, typ)
				checkTable(t, p, idx, tab, Options{})
				b.WriteString(formatTable(tab))
			}
			checkGolden(t, tc.file+".top", b.String())
		})
	}
}

func TestGoldenDiff(t *testing.T) {
	old := testdataProfile(t, "parca_series_first.pb.gz")
	new := testdataProfile(t, "parca_series_last.pb.gz")
	var b strings.Builder
	for _, typ := range []string{"alloc_space", "inuse_space"} {
		r, err := Diff(old, new, typ, Options{MainModule: "github.com/parca-dev/parca"})
		if err != nil {
			t.Fatal(err)
		}
		checkDiff(t, old, new, typ, r)
		b.WriteString(formatDiff(r))
	}
	checkGolden(t, "parca_series.diff", b.String())
}

func TestGoldenGoroutines(t *testing.T) {
	opts := Options{MainModule: testModule}
	for _, name := range []string{"goroutines.debug1.txt", "goroutines.debug2.txt"} {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", name))
			if err != nil {
				t.Fatal(err)
			}
			groups, err := ParseGoroutineText(bytes.NewReader(data), opts)
			if err != nil {
				t.Fatal(err)
			}
			// The dumps were captured from startLive's goroutines (if this
			// fails after changing them, recapture with -capture).
			checkLive(t, groups, name == "goroutines.debug2.txt", capturedPkg)
			checkGolden(t, name+".groups", formatGroups(groups))
		})
	}
	for _, name := range []string{"goroutines.pb.gz", "goroutine_small_req2.pb"} {
		t.Run(name, func(t *testing.T) {
			groups, err := GroupGoroutineProfile(testdataProfile(t, name), opts)
			if err != nil {
				t.Fatal(err)
			}
			if name == "goroutines.pb.gz" {
				checkLive(t, groups, false, capturedPkg)
			}
			checkGolden(t, name+".groups", formatGroups(groups))
		})
	}
}
