package recorder

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunNeedsLinux: where there is no /proc, Run refuses in one line before it creates a
// session or starts anything.
func TestRunNeedsLinux(t *testing.T) {
	defer func(v bool) { procSupported = v }(procSupported)
	procSupported = false
	out := filepath.Join(t.TempDir(), "session")
	marker := filepath.Join(t.TempDir(), "started")
	_, err := Run(context.Background(), Config{Out: out, Command: []string{"touch", marker}})
	if !errors.Is(err, ErrNeedsLinux) {
		t.Fatalf("Run without /proc: %v, want ErrNeedsLinux", err)
	}
	if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, "needs Linux") || !strings.Contains(msg, "watch") {
		t.Errorf("error %q: want one line saying it needs Linux and what to do instead", msg)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a session directory was created: %v", err)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the command was started")
	}
}
