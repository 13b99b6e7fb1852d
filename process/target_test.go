package process

import (
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestSupportedGo(t *testing.T) {
	for v, want := range map[string]bool{
		"go1.26": true, "go1.26.8": true, "go1.27.0": true, "go1.27rc1": true, "go1.27.3 X:nogreenteagc": true,
		"go1.25.9": false, "go1.28": false, "go1.2": false, "go1.260": false, "devel go1.28-abc": false, "": false,
	} {
		if got := supportedGo(v); got != want {
			t.Errorf("supportedGo(%q) = %v", v, got)
		}
	}
}

// TestCheckExecutable: what is not a Go program memdoctor reads is refused, saying why.
func TestCheckExecutable(t *testing.T) {
	text := filepath.Join(t.TempDir(), "text")
	os.WriteFile(text, []byte("#!/bin/sh\necho hi\n"), 0o700)
	if _, _, _, err := checkExecutable(text); err == nil {
		t.Error("a shell script is accepted")
	}
	if self, err := os.Executable(); err == nil {
		// The test binary itself: a Go program that go test builds without DWARF.
		if _, _, _, err := checkExecutable(self); !errors.Is(err, ErrNoDWARF) && !errors.Is(err, ErrUnsupportedGo) {
			t.Errorf("the test binary (built without DWARF): %v, want %v", err, ErrNoDWARF)
		}
	}
	for _, p := range []string{"/bin/true", "/usr/bin/true"} {
		if _, err := os.Stat(p); err != nil {
			continue
		}
		if _, _, _, err := checkExecutable(p); !errors.Is(err, ErrNotGo) {
			t.Errorf("%s: %v, want %v", p, err, ErrNotGo)
		}
		break
	}
}

// TestBucketLayoutOfRecordedCore: the layout read from a Go 1.26 executable's DWARF is the
// one the fuzz test assumes.
func TestBucketLayoutOfRecordedCore(t *testing.T) {
	core, exe := makeCoreInternal(t)
	tg, err := OpenCore(core, exe)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	l, err := NewBucketLayout(tg.Delve.BinInfo())
	if err != nil {
		t.Fatal(err)
	}
	if want := layout126(); *l != *want {
		t.Errorf("layout %+v, want %+v", *l, *want)
	}
}

// makeCoreInternal unpacks holders' recorded amd64 core and its executable.
func makeCoreInternal(t *testing.T) (core, exe string) {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"core", "holders-target"} {
		f, err := os.Open(filepath.Join("../holders/walk/testdata/cores/amd64", name+".gz"))
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
		_, err = io.Copy(out, io.LimitReader(zr, 256<<20))
		out.Close()
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "core"), filepath.Join(dir, "holders-target")
}
