package units

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// evidenceCases holds every evidence name the rules produce (TestEvidenceCoversTheRules
// keeps it complete), with what the reports show for it.
var evidenceCases = []struct {
	name         string
	v            float64
	label, value string
}{
	{"alloc_bytes_per_second", 60 << 20, "alloc", "60.0 MiB/s"},
	{"alloc_objects_per_second", 81234.6, "alloc objects", "81235/s"},
	{"alloc_start_bytes_per_second", 8 << 20, "alloc start", "8.0 MiB/s"},
	{"alloc_end_bytes_per_second", 24 << 20, "alloc end", "24.0 MiB/s"},
	{"floor_live_heap_bytes", 6 << 20, "floor live heap", "6.0 MiB"},
	{"floor_points_count", 10, "floor points", "10"},
	{"heap_profiles_count", 7, "heap profiles", "7"},
	{"alloc_bytes", 64 << 20, "alloc", "64.0 MiB"},
	{"goroutines_count", 1200, "goroutines", "1200"},
	{"hotspot_min_fraction", 0.15, "hotspot min", "15.0%"},
	{"pile_up_min_count", 100, "pile up min", "100"},
	{"pile_up_share_fraction", 0.5, "pile up share", "50.0%"},
	{"top_site_bytes", 40 << 20, "top site", "40.0 MiB"},
	{"top_site_goroutines_count", 900, "top site goroutines", "900"},
	{"top_site_share_fraction", 0.62, "top site share", "62.0%"},
	{"site_retained_start_bytes", 2 << 20, "site retained start", "2.0 MiB"},
	{"site_retained_end_bytes", 40 << 20, "site retained end", "40.0 MiB"},
	{"site_held_median_bytes", 3 << 20, "site held median", "3.0 MiB"},
	{"site_allocated_bytes", 512 << 20, "site allocated", "512.0 MiB"},
	{"heap_held_bytes", 29 << 20, "heap held", "29.0 MiB"},
	{"gc_start_per_second", 2, "GC start", "2/s"},
	{"gc_end_per_second", 6.5, "GC end", "6.5/s"},
	{"growth_bytes", 74 << 20, "growth", "74.0 MiB"},
	{"kendall_tau", 0.82, "Kendall tau", "0.82"},
	{"late_slope_ratio", 1.01, "late slope", "1.01×"},
	{"growth_ratio", 13.8, "growth", "13.80×"},
	{"leaked_goroutines_count", 95, "leaked goroutines", "95"},
	{"memory_start_bytes", 60 << 20, "memory start", "60.0 MiB"},
	{"memory_end_bytes", 180 << 20, "memory end", "180.0 MiB"},
	{"spike_readings_median_count", 3, "spike readings median", "3"},
	{"top_site_cpu_cost_fraction", 0.108, "top site CPU cost", "10.8%"},
	{"allocation_to_height_ratio", 1.234, "allocation to height", "1.23×"},
	{"observer_allocation_to_height_ratio", 0.95, "observer allocation to height", "0.95×"},
	{"cgroup_oom_kills_count", 3, "cgroup OOM kills", "3"},
	{"cgroup_oom_kills_in_window_count", 1, "cgroup OOM kills in window", "1"},
	{"last_heap_inuse_bytes", 64 << 20, "last heap inuse", "64.0 MiB"},
	{"last_heap_age_seconds", 0.8, "last heap age", "0.80 s"},
	{"last_reading_of_limit_fraction", 1.03, "last reading of limit", "103.0%"},
	{"limit_bytes", 192 << 20, "limit", "192.0 MiB"},
	{"gc_assist_fraction", 0.0312, "GC assist", "3.1%"},
	{"gc_cpu_cores", 0.5, "GC CPU", "0.50 cores"},
	{"gc_cpu_fraction", 0.123, "GC CPU", "12.3%"},
	{"gc_mark_seconds", 0.35, "GC mark", "0.35 s"},
	{"longest_wait_seconds", 720, "longest wait", "720 s (12m0s)"},
	{"gc_per_second", 8.5, "GC", "8.5/s"},
	{"gogc_current", 100, "GOGC (current)", "100"},
	{"gogc_recommended", -1, "GOGC (recommended)", "off"},
	{"gomemlimit_bytes_recommended", 1.8 * (1 << 30), "GOMEMLIMIT (recommended)", "1.8 GiB"},
	{"goroutines_end_count", 10041.6, "goroutines end", "10042"},
	{"goroutines_start_count", 12, "goroutines start", "12"},
	{"growth_bytes_per_minute", 223192254, "growth", "212.9 MiB/min"}, // the "growth bytes per minute 223192254"
	{"growth_goroutines_per_minute", 120, "growth goroutines", "120/min"},
	{"late_growth_bytes_per_minute", -(1 << 20), "late growth", "-1.0 MiB/min"},
	{"live_heap_bytes", 7 << 20, "live heap", "7.0 MiB"},
	{"live_heap_end_bytes", 300 << 20, "live heap end", "300.0 MiB"},
	{"live_heap_points_count", 61, "live heap points", "61"},
	{"live_heap_start_bytes", 40 << 20, "live heap start", "40.0 MiB"},
	{"mann_kendall_p", 0.0004, "Mann-Kendall p", "<0.001"},
	{"mann_kendall_z", 5.123, "Mann-Kendall z", "5.12"},
	{"mark_assist_seconds", 0.004, "mark assist", "4.00 ms"},
	{"memory_budget_bytes", 2 << 30, "memory budget", "2.0 GiB"},
	{"model_calibration_ratio", 0.98, "model calibration", "0.98×"},
	{"model_gc_per_second_now", 9.87, "model GC (now)", "9.87/s"},
	{"model_heap_goal_bytes_now", 900 << 20, "model heap goal (now)", "900.0 MiB"},
	{"non_go_growth_bytes_per_minute", 512 << 10, "non-Go growth", "512.0 KiB/min"},
	{"non_go_latest_bytes", 256 << 20, "non-Go latest", "256.0 MiB"},
	{"non_go_median_bytes", 250 << 20, "non-Go median", "250.0 MiB"},
	{"non_go_peak_bytes", 260 << 20, "non-Go peak", "260.0 MiB"},
	{"non_go_share_of_rss", 0.82, "non-Go", "82.0% of RSS"},
	{"peak_heap_in_use_bytes", 1 << 30, "peak heap in use", "1.0 GiB"},
	{"peak_live_heap_bytes", 430 << 20, "peak live heap", "430.0 MiB"},
	{"peak_of_budget", 0.93, "peak", "93.0% of the budget"},
	{"pinned_stack_bytes", 80 << 20, "pinned stack", "80.0 MiB"},
	{"predicted_gc_per_second_after", 0.8, "predicted GC (after)", "0.8/s"},
	{"predicted_gc_per_second_before", 9, "predicted GC (before)", "9/s"},
	{"predicted_heap_peak_bytes_after", 1.5 * (1 << 30), "predicted heap peak (after)", "1.5 GiB"},
	{"predicted_heap_peak_bytes_before", 500 << 20, "predicted heap peak (before)", "500.0 MiB"},
	{"predicted_rss_peak_bytes_after", 1.6 * (1 << 30), "predicted RSS peak (after)", "1.6 GiB"},
	{"readings_count", 600, "readings", "600"},
	{"readings_with_retention_share", 0.95, "readings with retention", "95.0%"},
	{"released_resident_bytes", 90 << 20, "released resident", "90.0 MiB"},
	{"retained_free_heap_bytes", 102 << 20, "retained free heap", "102.0 MiB"},
	{"retained_peak_bytes", 120 << 20, "retained peak", "120.0 MiB"},
	{"retained_share_of_rss", 0.31, "retained", "31.0% of RSS"},
	{"rss_bytes", 400 << 20, "RSS", "400.0 MiB"},
	{"rss_latest_bytes", 390 << 20, "RSS latest", "390.0 MiB"},
	{"rss_peak_bytes", 410 << 20, "RSS peak", "410.0 MiB"},
	{"scan_stacks_globals_bytes", 3 << 20, "scan stacks globals", "3.0 MiB"},
	{"spike_duration_median_seconds", 0.55, "spike duration median", "0.55 s"},
	{"spike_gc_cycles_median_count", 2, "spike GC cycles median", "2"},
	{"spike_height_max_bytes", 130 << 20, "spike height max", "130.0 MiB"},
	{"spike_height_median_bytes", 128 << 20, "spike height median", "128.0 MiB"},
	{"spikes_count", 5, "spikes", "5"},
	{"spikes_per_minute", 1.25, "spikes", "1.25/min"},
	{"stack_bytes_per_goroutine", 8 << 10, "stack", "8.0 KiB per goroutine"},
	{"steady_live_heap_bytes", 20 << 20, "steady live heap", "20.0 MiB"},
	{"time_to_budget_seconds", 7200, "time to budget", "7200 s (2h0m0s)"},
	{"top_site_bytes_per_second", 58 << 20, "top site", "58.0 MiB/s"},
	{"top_site_object_size_bytes", 48, "top site object size", "48 B"},
	{"top_site_objects_share", 0.6, "top site objects", "60.0%"},
	{"top_site_share", 0.99, "top site", "99.0%"},
	{"traced_seconds", 12.5, "traced", "12.5 s"},
	{"traces_count", 2, "traces", "2"},
	{"window_seconds", 95, "window", "95.0 s"},
}

func TestEvidence(t *testing.T) {
	for _, c := range evidenceCases {
		label, value := Evidence(c.name, c.v)
		if label != c.label || value != c.value {
			t.Errorf("%s=%v: %q %q, want %q %q", c.name, c.v, label, value, c.label, c.value)
		}
		if EvidenceUnit(c.name) == "" {
			t.Errorf("%s: no unit recognised", c.name)
		}
	}
}

// TestEvidenceUnknownUnit: a name without a known unit keeps its words and its number.
func TestEvidenceUnknownUnit(t *testing.T) {
	for _, c := range []struct {
		name         string
		v            float64
		label, value string
	}{
		{"widgets", 3, "widgets", "3"},
		{"gc_weirdness", 0.123456, "GC weirdness", "0.123"},
		{"big_thing", 223192254, "big thing", "223192254"},
		{"half_of_rss_bytes_x", 12.34, "half of RSS bytes x", "12.3"},
	} {
		label, value := Evidence(c.name, c.v)
		if label != c.label || value != c.value || EvidenceUnit(c.name) != "" {
			t.Errorf("%s=%v: %q %q (unit %q), want %q %q and no unit", c.name, c.v, label, value, EvidenceUnit(c.name), c.label, c.value)
		}
	}
}

// TestEvidenceCoversTheRules finds every evidence name in the words layer's source (the keys
// of Evidence map literals and of Evidence[...] assignments, in diagnose/words, which writes
// the evidence map): each must be in evidenceCases, so no figure reaches a report without its
// unit.
func TestEvidenceCoversTheRules(t *testing.T) {
	names := evidenceNamesIn(t, "../diagnose/words")
	if len(names) < 20 {
		t.Fatalf("found %d evidence names in diagnose/words: did the words move?", len(names))
	}
	known := map[string]bool{}
	for _, c := range evidenceCases {
		known[c.name] = true
	}
	for _, n := range names {
		if !known[n] {
			t.Errorf("the rules produce %q: add it to evidenceCases (and give it a unit suffix Evidence knows)", n)
		}
	}
}

func evidenceNamesIn(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	add := func(e ast.Expr) {
		if bl, ok := e.(*ast.BasicLit); ok && bl.Kind == token.STRING {
			if s, err := strconv.Unquote(bl.Value); err == nil {
				seen[s] = true
			}
		}
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(af, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.KeyValueExpr:
				if id, ok := n.Key.(*ast.Ident); ok && id.Name == "Evidence" {
					if cl, ok := n.Value.(*ast.CompositeLit); ok {
						for _, e := range cl.Elts {
							if kv, ok := e.(*ast.KeyValueExpr); ok {
								add(kv.Key)
							}
						}
					}
				}
			case *ast.IndexExpr:
				if se, ok := n.X.(*ast.SelectorExpr); ok && se.Sel.Name == "Evidence" {
					add(n.Index)
				}
			}
			return true
		})
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
