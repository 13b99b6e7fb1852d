package scrape

import (
	"bytes"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sharedProfiles holds real profiles of other programs (see PROVENANCE.tsv there).
const sharedProfiles = "../../testdata/profiles"

// serveFile serves one file's bytes at every path.
func serveFile(t *testing.T, b []byte) *Client {
	t.Helper()
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(b)
	}))
	return newClient(t, srv.URL)
}

// sharedProfileFiles lists the proto profiles in the repository's corpus.
func sharedProfileFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, pattern := range []string{"*.pb", "*.pb.gz", "parca_heap_series/*.pb.gz"} {
		m, err := filepath.Glob(filepath.Join(filepath.FromSlash(sharedProfiles), pattern))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 20 {
		t.Fatalf("%d profiles under %s, want the whole corpus", len(files), sharedProfiles)
	}
	return files
}

func TestRealProfilesAccepted(t *testing.T) {
	for _, f := range sharedProfileFiles(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			want, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			raw, p, err := serveFile(t, want).Profile(testContext(t), "heap", nil)
			if err != nil {
				t.Fatalf("Profile: %v", err)
			}
			if !bytes.Equal(raw, want) {
				t.Errorf("raw bytes differ from the file served (%d vs %d bytes)", len(raw), len(want))
			}
			if len(p.Sample) == 0 || len(p.SampleType) == 0 {
				t.Errorf("parsed profile has %d samples, %d sample types", len(p.Sample), len(p.SampleType))
			}
		})
	}
}

// TestRealProfilesKinds checks Heap and Goroutine accept the profiles of
// their kind and explain why they refuse the others.
func TestRealProfilesKinds(t *testing.T) {
	dir := filepath.FromSlash(sharedProfiles)
	heap := map[string]string{ // file -> "" when accepted, else a part of the error
		"loki_heap_4types.pb.gz":                   "",
		"prometheus_heap_4types.pb.gz":             "",
		"pyroscope_server_heap_4types.pb.gz":       "",
		"node_exporter_heap_4types.pb.gz":          "",
		"operator_heap_4types.pb.gz":               "",
		"k8s_controller_heap_delta.pb.gz":          "",
		"parca_heap_delta_30s.pb.gz":               "",
		"allocs_small_req5.pb":                     "",
		"loki_alloc_objects_merged_big.pb.gz":      "lacks sample types [alloc_space/bytes inuse_objects/count inuse_space/bytes] (it has [alloc_objects/count])",
		"mimir_inuse_space_merged_truncated.pb.gz": "lacks sample types [alloc_objects/count alloc_space/bytes inuse_objects/count]",
		"node_exporter_cpu_10s.pb.gz":              "(it has [samples/count cpu/nanoseconds])",
		"node_exporter_goroutine.pb.gz":            "(it has [goroutine/count])",
	}
	goroutine := map[string]string{
		"node_exporter_goroutine.pb.gz":      "",
		"goroutine_small_req2.pb":            "",
		"goroutine_unnamed_sampletype.pb.gz": "the goroutine profile lacks sample types [goroutine/count] (it has [(unnamed)/(no unit)])",
		"loki_heap_4types.pb.gz":             "lacks sample types [goroutine/count]",
	}
	for _, tc := range []struct {
		kind  string
		files map[string]string
	}{{"heap", heap}, {"goroutine", goroutine}} {
		for name, wantErr := range tc.files {
			t.Run(tc.kind+"/"+name, func(t *testing.T) {
				b, err := os.ReadFile(filepath.Join(dir, name))
				if err != nil {
					t.Fatal(err)
				}
				c := serveFile(t, b)
				if tc.kind == "heap" {
					_, _, err = c.Heap(testContext(t))
				} else {
					_, _, err = c.Goroutine(testContext(t))
				}
				switch {
				case wantErr == "" && err != nil:
					t.Errorf("refused: %v", err)
				case wantErr != "" && (!errors.Is(err, ErrUnexpectedProfile) || !strings.Contains(err.Error(), wantErr)):
					t.Errorf("error = %v, want ErrUnexpectedProfile with %q", err, wantErr)
				}
			})
		}
	}
}

// The legacy text heap profile is a profile to pprof's parser, but not
// what a proto endpoint serves: Profile must say so.
func TestRealLegacyTextRefused(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(filepath.FromSlash(sharedProfiles), "gobench_legacy_text.heap"))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = serveFile(t, b).Profile(testContext(t), "heap", nil)
	wantErr(t, err, ErrNotProfile, "legacy text profile (debug=1)", `"heap profile: 13: 1595680 [47130736: 2584596557304] @ heap/…"`)
}
