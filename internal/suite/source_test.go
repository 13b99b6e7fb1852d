package suite

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// The embedded copy of leaktest is the working tree's: go generate ./internal/suite writes it.
func TestLeaktestCopyInSync(t *testing.T) {
	want, err := Pack(filepath.Join("..", "..", "leaktest"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(leaktestSource, want) {
		t.Fatal("internal/suite/leaktest.txtar is not the working tree's leaktest: run go generate ./internal/suite")
	}
}

// The archive unpacks into the files it was packed from.
func TestUnpack(t *testing.T) {
	dir := t.TempDir()
	if err := unpack(leaktestSource, dir); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"loop.go", "trend/trend.go", "harness/harness.go"} {
		got, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		want, _ := os.ReadFile(filepath.Join("..", "..", "leaktest", f))
		if !bytes.Equal(got, want) {
			t.Errorf("%s unpacked differs from leaktest's", f)
		}
	}
	if err := unpack([]byte("not an archive"), dir); err == nil {
		t.Error("a damaged archive unpacked")
	}
	if err := unpack([]byte("-- ../escape --\nx\n"), dir); err == nil {
		t.Error("an archive writing outside its directory unpacked")
	}
}
