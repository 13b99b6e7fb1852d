package walk_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/memdoctor/memdoctor/holders"
	"github.com/memdoctor/memdoctor/holders/walk"
	"github.com/memdoctor/memdoctor/process"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// RecordedCore unpacks a recorded core and its executable (testdata/cores/ARCH) into a
// temporary directory.
func RecordedCore(t testing.TB, arch string) (core, exe string) {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"core", "holders-target"} {
		f, err := os.Open(filepath.Join("testdata", "cores", arch, name+".gz"))
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		out, err := os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_WRONLY, 0o700)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(out, io.LimitReader(zr, 256<<20)); err != nil {
			t.Fatal(err)
		}
		out.Close()
		f.Close()
	}
	return filepath.Join(dir, "core"), filepath.Join(dir, "holders-target")
}

// TestRecordedCores reads the recorded cores, amd64 and arm64, and compares what they name
// with the golden results: the same paths, counts and bytes, whichever machine reads them.
// Each is read as it is, and through a copy made as a live process's is made (what a
// snapshot plans to copy, copied from the core into an unlinked file, the walk reading only
// the copy): the copy must hold everything the walk reads.
func TestRecordedCores(t *testing.T) {
	for _, arch := range []string{"amd64", "arm64"} {
		for _, copied := range []bool{false, true} {
			name := arch
			if copied {
				name += "/copied"
			}
			t.Run(name, func(t *testing.T) { recordedCore(t, arch, copied) })
		}
	}
}

func recordedCore(t *testing.T, arch string, copied bool) {
	core, exe := RecordedCore(t, arch)
	tg, err := process.OpenCore(core, exe)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	opts := walk.Options{Sites: []string{"main.build", "main.keepRecent"}, TempDir: t.TempDir(), CopyCore: copied}
	res, err := walk.Read(context.Background(), tg, opts)
	if err != nil {
		t.Fatal(err)
	}
	if copied != (res.Copied > 0) {
		t.Fatalf("copied %d bytes of the core", res.Copied)
	}
	res.Copied, res.EstimatedStop = 0, 0
	if res.Target.Arch != arch || len(res.Culprits) == 0 || len(res.Culprits[0].Paths) == 0 || res.Culprits[0].Paths[0].Expr != "main.registry[value].payload" {
		t.Fatalf("%s: want main.registry[value].payload first: %+v", arch, res.Culprits)
	}
	res.Target.Core, res.Target.Exe, res.Timing = "", "", holders.Timing{}
	got, _ := json.MarshalIndent(res, "", "  ")
	path := filepath.Join("testdata", "cores", arch, "holders.golden")
	if *update && !copied {
		os.WriteFile(path, got, 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from %s (go test -update rewrites it):\n%s", arch, path, got)
	}
}
