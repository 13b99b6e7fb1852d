package culprit

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// sumValues adds up sample type idx of p, independently of the package.
func sumValues(p *profile.Profile, idx int) int64 {
	var n int64
	for _, s := range p.Sample {
		n += s.Value[idx]
	}
	return n
}

// checkTable checks the invariants of an Aggregate result against p.
func checkTable(t *testing.T, p *profile.Profile, idx int, tab *Table, opts Options) {
	t.Helper()
	if want := sumValues(p, idx); tab.Total != want {
		t.Errorf("%s: total %d, samples sum to %d", tab.Type, tab.Total, want)
	}
	for _, list := range [][]Entry{tab.ByFunction, tab.ByLine} {
		var sum int64
		for i, e := range list {
			sum += e.Value
			if i > 0 && e.Value > list[i-1].Value {
				t.Errorf("%s: not sorted at %d", tab.Type, i)
			}
			if !slices.Contains(e.Stack, e.Site.Function) && !(e.Site.Function == unknownFunction && len(e.Stack) == 0) {
				t.Errorf("%s: %s not in its stack %q", tab.Type, e.Site.Function, e.Stack)
			}
			c := classify(e.Site.Function, opts)
			if e.Site.Own != (c == classMain || c == classThirdParty) {
				t.Errorf("%s: %+v: own %v but class %d", tab.Type, e.Site, e.Site.Own, c)
			}
		}
		if sum != tab.Total {
			t.Errorf("%s: entries sum to %d, total %d", tab.Type, sum, tab.Total)
		}
	}
}

func TestAggregateRealProfiles(t *testing.T) {
	names, _ := filepath.Glob(filepath.Join(sharedDir, "*.pb*"))
	if len(names) < 14 {
		t.Fatalf("%d profiles in %s, want the corpus", len(names), sharedDir)
	}
	names = append(names, filepath.Join(sharedDir, "gobench_legacy_text.heap"))
	for _, path := range names {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			p := sharedProfile(t, name)
			for idx, st := range p.SampleType {
				if st.Type == "" {
					continue
				}
				tab, err := Aggregate(p, st.Type, Options{})
				if err != nil {
					t.Fatal(err)
				}
				checkTable(t, p, idx, tab, Options{})
			}
		})
	}
}

func TestAggregateLegacyText(t *testing.T) {
	p := sharedProfile(t, "gobench_legacy_text.heap")
	tab, err := Aggregate(p, "inuse_space", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if tab.Total == 0 || len(tab.ByFunction) == 0 {
		t.Fatalf("empty table %+v", tab)
	}
	// The legacy file carries addresses only: sites are addresses, never own.
	for _, e := range tab.ByFunction {
		if e.Site.Own || !(strings.HasPrefix(e.Site.Function, "0x") || e.Site.Function == unknownFunction) {
			t.Errorf("unsymbolized site %+v", e.Site)
		}
	}
}

// series returns the parca heap series, oldest first.
func series(t *testing.T) []*profile.Profile {
	t.Helper()
	dir := filepath.Join(sharedDir, "parca_heap_series")
	names, _ := filepath.Glob(filepath.Join(dir, "*.pb.gz"))
	if len(names) < 2 {
		t.Fatalf("%d profiles in %s, want the series", len(names), dir)
	}
	sort.Strings(names) // named by TimeNanos
	var out []*profile.Profile
	for _, n := range names {
		out = append(out, parseFile(t, n))
	}
	return out
}

// checkDiff checks the invariants of a Diff result against its inputs.
func checkDiff(t *testing.T, old, new *profile.Profile, typ string, r *DiffResult) {
	t.Helper()
	oi, _ := SampleIndex(old, typ)
	ni, _ := SampleIndex(new, typ)
	if r.OldTotal != sumValues(old, oi) || r.NewTotal != sumValues(new, ni) {
		t.Errorf("%s: totals %d/%d, samples sum to %d/%d", typ, r.OldTotal, r.NewTotal, sumValues(old, oi), sumValues(new, ni))
	}
	for _, level := range []struct {
		list   []Delta
		growth int64
	}{{r.ByFunction, r.Growth}, {r.ByLine, r.LineGrowth}} {
		var sum, pos, o, n int64
		var shares float64
		for i, d := range level.list {
			if d.Delta != d.New-d.Old {
				t.Errorf("%s: %+v: delta is not new-old", typ, d)
			}
			if i > 0 && d.Delta > level.list[i-1].Delta {
				t.Errorf("%s: not sorted at %d", typ, i)
			}
			if d.Share < 0 || d.Share > 1 || (d.Delta <= 0) != (d.Share == 0) {
				t.Errorf("%s: share %v for delta %d", typ, d.Share, d.Delta)
			}
			if !slices.Contains(d.Stack, d.Site.Function) && !(d.Site.Function == unknownFunction && len(d.Stack) == 0) {
				t.Errorf("%s: %s not in its stack %q", typ, d.Site.Function, d.Stack)
			}
			sum += d.Delta
			o += d.Old
			n += d.New
			shares += d.Share
			if d.Delta > 0 {
				pos += d.Delta
			}
		}
		if sum != r.NewTotal-r.OldTotal || o != r.OldTotal || n != r.NewTotal {
			t.Errorf("%s: deltas sum to %d (old %d, new %d), totals say %d (old %d, new %d)", typ, sum, o, n, r.NewTotal-r.OldTotal, r.OldTotal, r.NewTotal)
		}
		if pos != level.growth {
			t.Errorf("%s: growth %d, positive deltas sum to %d", typ, level.growth, pos)
		}
		if pos > 0 && math.Abs(shares-1) > 1e-9 {
			t.Errorf("%s: shares sum to %v", typ, shares)
		}
	}
}

func TestDiffSeries(t *testing.T) {
	s := series(t)
	first, last := s[0], s[len(s)-1]
	for _, typ := range []string{"alloc_space", "alloc_objects", "inuse_space", "inuse_objects"} {
		r, err := Diff(first, last, typ, Options{MainModule: "github.com/parca-dev/parca"})
		if err != nil {
			t.Fatal(err)
		}
		checkDiff(t, first, last, typ, r)
		if r.Growth <= 0 || len(r.Warnings) != 0 {
			t.Errorf("%s: growth %d, warnings %q", typ, r.Growth, r.Warnings)
		}
		if top := r.ByFunction[0]; !top.Site.Own {
			t.Errorf("%s: top culprit %+v", typ, top.Site)
		}
	}
	// 90 MB were allocated by badger's arena on behalf of parca's metastore:
	// with the main module known, parca's frame is the culprit; without it,
	// the innermost non-stdlib frame (badger's) is.
	for _, tc := range []struct{ mod, want string }{
		{"github.com/parca-dev/parca", "github.com/parca-dev/parca/pkg/metastore.NewBadgerMetastore"},
		{"", "github.com/dgraph-io/badger/v3/skl.newArena"},
	} {
		r, err := Diff(first, last, "inuse_space", Options{MainModule: tc.mod})
		if err != nil {
			t.Fatal(err)
		}
		top := r.ByFunction[0]
		if top.Site.Function != tc.want || top.Share < 0.9 || top.Stack[0] != "github.com/dgraph-io/badger/v3/skl.newArena" {
			t.Errorf("main module %q: top %+v share %.3f stack %q", tc.mod, top.Site, top.Share, top.Stack)
		}
	}
	// Reversed, the cumulative values go down: a restart, as far as Diff
	// can tell.
	r, err := Diff(last, first, "alloc_space", Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkDiff(t, last, first, "alloc_space", r)
	if !hasWarning(r, "smaller than OLD's") || !hasWarning(r, "before OLD") {
		t.Errorf("reversed: warnings %q", r.Warnings)
	}
	// The heap profile only changes when a GC cycle completes: in this
	// series (one snapshot every 3 s) only one step changed.
	changed := 0
	for i := 1; i < len(s); i++ {
		r, err := Diff(s[i-1], s[i], "inuse_space", Options{})
		if err != nil {
			t.Fatal(err)
		}
		checkDiff(t, s[i-1], s[i], "inuse_space", r)
		switch {
		case r.Growth == 0 && r.OldTotal == r.NewTotal && hasWarning(r, "no GC ran between the snapshots"):
		case r.Growth > 0 && len(r.Warnings) == 0:
			changed++
		default:
			t.Errorf("step %d: growth %d warnings %q", i, r.Growth, r.Warnings)
		}
	}
	if changed != 1 {
		t.Errorf("%d steps changed, want 1", changed)
	}
}

func hasWarning(r *DiffResult, sub string) bool {
	for _, w := range r.Warnings {
		if strings.Contains(w, sub) {
			return true
		}
	}
	return false
}

func TestDiffUnrelatedProfiles(t *testing.T) {
	prom := sharedProfile(t, "prometheus_heap_4types.pb.gz")
	loki := sharedProfile(t, "loki_heap_4types.pb.gz")
	for _, typ := range []string{"alloc_space", "inuse_objects"} {
		r, err := Diff(prom, loki, typ, Options{})
		if err != nil {
			t.Fatal(err)
		}
		checkDiff(t, prom, loki, typ, r)
		if !hasWarning(r, "different binaries (prometheus, enterprise-logs)") {
			t.Errorf("%s: warnings %q", typ, r.Warnings)
		}
		if isCumulative(typ) && !hasWarning(r, "functions have a smaller alloc_space") {
			t.Errorf("%s: warnings %q", typ, r.Warnings)
		}
	}
	r, err := Diff(loki, prom, "alloc_space", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !hasWarning(r, "restart in between") {
		t.Errorf("warnings %q", r.Warnings)
	}
}

func TestDiffRealEdgeCases(t *testing.T) {
	legacy := sharedProfile(t, "gobench_legacy_text.heap")
	r, err := Diff(legacy, legacy, "inuse_space", Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkDiff(t, legacy, legacy, "inuse_space", r)
	if !hasWarning(r, "identical") {
		t.Errorf("legacy: warnings %q", r.Warnings)
	}

	gor := sharedProfile(t, "node_exporter_goroutine.pb.gz")
	heap := sharedProfile(t, "node_exporter_heap_4types.pb.gz")
	_, err = Diff(gor, heap, "inuse_space", Options{})
	if err == nil || !strings.Contains(err.Error(), `OLD profile: sample type not in profile: "inuse_space" (available: goroutine/count)`) {
		t.Errorf("goroutine vs heap: %v", err)
	}

	k8s := sharedProfile(t, "k8s_controller_heap_delta.pb.gz")
	parca := sharedProfile(t, "parca_heap_delta_30s.pb.gz")
	r, err = Diff(k8s, parca, "inuse_space", Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkDiff(t, k8s, parca, "inuse_space", r)
	if !hasWarning(r, "OLD is a delta profile (it covers 7m0") || !hasWarning(r, "NEW is a delta profile (it covers 30.05") {
		t.Errorf("delta profiles: warnings %q", r.Warnings)
	}
}

func TestSharedDirLayout(t *testing.T) {
	if _, err := os.Stat(sharedDir); err != nil {
		t.Fatal(err)
	}
	if len(series(t)) < 5 {
		t.Errorf("expected a series of at least 5 snapshots")
	}
}
