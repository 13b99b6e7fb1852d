package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/diagnose"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// realProfiles holds real profiles of other programs (see PROVENANCE.tsv there).
const realProfiles = "../../testdata/profiles"

// recorded holds the folders of profiles recorded from a real leaking program.
const recorded = "../../source/pprofdir/testdata"

// goldenTime is the modification time given to copies of the profiles, so that what the
// reports say of file times does not depend on the checkout.
var goldenTime = time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)

// TestAnalyzeSingleProfiles: one profile of every kind and format the repository holds gets a
// snapshot diagnosis, as text (compared with testdata/analyze/*.golden; -update rewrites
// them) and as JSON that parses and marks what rests on one profile.
func TestAnalyzeSingleProfiles(t *testing.T) {
	t.Setenv("TZ", "UTC")
	files := []string{
		filepath.Join(realProfiles, "node_exporter_heap_4types.pb.gz"),
		filepath.Join(realProfiles, "prometheus_heap_4types.pb.gz"),
		filepath.Join(realProfiles, "loki_heap_4types.pb.gz"),
		filepath.Join(realProfiles, "pyroscope_server_heap_4types.pb.gz"),
		filepath.Join(realProfiles, "operator_heap_4types.pb.gz"),
		filepath.Join(realProfiles, "parca_heap_delta_30s.pb.gz"),
		filepath.Join(realProfiles, "mimir_inuse_space_merged_truncated.pb.gz"),
		filepath.Join(realProfiles, "loki_alloc_objects_merged_big.pb.gz"),
		filepath.Join(realProfiles, "allocs_small_req5.pb"),
		filepath.Join(realProfiles, "gobench_legacy_text.heap"),
		filepath.Join(realProfiles, "k8s_controller_heap_delta.pb.gz"),
		filepath.Join(realProfiles, "node_exporter_goroutine.pb.gz"),
		filepath.Join(realProfiles, "goroutine_unnamed_sampletype.pb.gz"),
		filepath.Join(realProfiles, "goroutine_small_req2.pb"),
		filepath.Join(recorded, "heapleak", "heap_13.pb.gz"),
		filepath.Join(recorded, "goroutines", "g-013.prof"),
		filepath.Join(recorded, "goroutine-debug1.txt"),
		filepath.Join(recorded, "goroutine-debug2.txt.gz"),
		filepath.Join(recorded, "leakprofile", "leaked.pb.gz"),
	}
	for _, src := range files {
		name := filepath.Base(src)
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, name)
			copyAt(t, src, path, goldenTime)
			var stdout, stderr bytes.Buffer
			if err := runAnalyze(context.Background(), testEnv(&stdout, &stderr, nil), []string{path}); err != nil {
				t.Fatal(err)
			}
			got := strings.ReplaceAll(stdout.String(), dir+"/", "")
			golden := filepath.Join("testdata", "analyze", name+".golden")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("text report differs from %s (go test ./internal/cli -run TestAnalyzeSingleProfiles -update):\n%s", golden, got)
			}
			if !strings.Contains(got, "snapshot") && name != "leaked.pb.gz" || strings.Contains(got, "no memory problem found") {
				t.Errorf("a single profile is not said as a snapshot:\n%s", got)
			}
			d := analyzeJSON(t, path)
			leakProfile := name == "leaked.pb.gz" // a goroutineleak profile proves, it is no snapshot
			if len(d.Snapshots) != 1 && !leakProfile || d.Source != "profiles" {
				t.Errorf("snapshots %+v, source %q", d.Snapshots, d.Source)
			}
			for _, f := range d.Findings {
				if leakProfile {
					if f.Kind != diagnose.KindGoroutineLeak || f.Confidence != diagnose.Confirmed || f.Snapshot {
						t.Errorf("a goroutineleak profile's proof: %+v", f)
					}
					continue
				}
				if !f.Snapshot || f.Confidence != diagnose.Suspected {
					t.Errorf("a finding from one profile is not a suspected snapshot: %+v", f)
				}
			}
		})
	}
}

// analyzeJSON runs analyze --json - on paths and decodes the diagnosis.
func analyzeJSON(t *testing.T, paths ...string) *diagnose.Diagnosis {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if err := runAnalyze(context.Background(), testEnv(&stdout, &stderr, nil), append([]string{"--json", "-"}, paths...)); err != nil {
		t.Fatal(err)
	}
	var d diagnose.Diagnosis
	if err := json.Unmarshal(stdout.Bytes(), &d); err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	return &d
}

func copyAt(t *testing.T, from, to string, mtime time.Time) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(to, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}
