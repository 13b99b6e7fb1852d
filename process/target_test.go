package process

import (
	"errors"
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
