package main

import (
	"os"
	"os/exec"
	"testing"
)

// laptops are the systems most people analyse on: `go install .../cmd/memdoctor@latest` must
// build there. (.ci/run also vets every package, tests included, for each of them, which
// compiles what these builds link. Intel Macs differ from these only in the dependencies'
// generated files: the release builds them, docs/releasing.md.)
var laptops = []struct{ goos, goarch string }{
	{"darwin", "arm64"}, {"windows", "amd64"},
}

// TestBuildsOnLaptops cross-compiles the command for macOS and Windows.
func TestBuildsOnLaptops(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-compiles the command twice")
	}
	for _, p := range laptops {
		t.Run(p.goos+"-"+p.goarch, func(t *testing.T) {
			cmd := exec.Command("go", "build", "-o", os.DevNull, ".")
			cmd.Env = append(os.Environ(), "GOOS="+p.goos, "GOARCH="+p.goarch, "CGO_ENABLED=0")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("GOOS=%s GOARCH=%s go build: %v\n%s", p.goos, p.goarch, err, out)
			}
		})
	}
}
