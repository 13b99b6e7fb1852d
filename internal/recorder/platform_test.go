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

// TestWatchByPIDNeedsLinux: where there is no /proc, watch PID and --pid say so in one line;
// a URL needs no /proc.
func TestWatchByPIDNeedsLinux(t *testing.T) {
	defer func(v bool) { procSupported = v }(procSupported)
	procSupported = false
	cfg := Config{Out: filepath.Join(t.TempDir(), "s")}
	_, err := WatchPID(context.Background(), cfg, os.Getpid())
	if err == nil || !strings.Contains(err.Error(), "needs Linux") || !strings.Contains(err.Error(), "URL") {
		t.Errorf("watch PID without /proc: %v", err)
	}
	cfg.PID = os.Getpid()
	_, err = Watch(context.Background(), cfg, "http://127.0.0.1:1")
	if err == nil || !strings.HasPrefix(err.Error(), "--pid ") || !strings.Contains(err.Error(), "needs Linux") {
		t.Errorf("watch --pid without /proc: %v", err)
	}
	if _, err := os.Stat(cfg.Out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a session directory was created: %v", err)
	}
}
