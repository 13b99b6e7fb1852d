package culprit

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/pprof/profile"
)

var (
	update  = flag.Bool("update", false, "rewrite the golden files in testdata")
	capture = flag.Bool("capture", false, "recapture the goroutine dumps in testdata (then run -update)")
)

// sharedDir holds real profiles of other programs (see PROVENANCE.tsv there).
const sharedDir = "../testdata/profiles"

// sharedProfile parses a profile from sharedDir.
func sharedProfile(t testing.TB, name string) *profile.Profile {
	t.Helper()
	return parseFile(t, filepath.Join(sharedDir, name))
}

func testdataProfile(t testing.TB, name string) *profile.Profile {
	t.Helper()
	return parseFile(t, filepath.Join("testdata", name))
}

func parseFile(t testing.TB, path string) *profile.Profile {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return p
}

func writeTestdata(t testing.TB, name string, data []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join("testdata", name), data, 0o644); err != nil {
		t.Fatal(err)
	}
}
