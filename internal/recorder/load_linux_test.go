package recorder

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/session"
)

// TestRunEnvAndLoad runs a program with Env set over memdoctor's environment and a load
// generator beside it: the program must see the setting (the manifest reads it from
// /proc/PID/environ), and the load generator must start only once the target serves pprof,
// be told its PID and pprof URL, and be stopped (SIGINT to its group) when the run ends.
func TestRunEnvAndLoad(t *testing.T) {
	out := filepath.Join(t.TempDir(), "load.txt")
	cfg := runConfig(t, helperCommand(t, "serve", "-addr", "127.0.0.1:0")...)
	cfg.Duration = 4 * time.Second
	cfg.Env = []string{"GOGC=1234", "GOMEMLIMIT=300MiB"}
	// The trap answers the SIGINT of the group; sleep runs in the foreground so that the
	// signal reaches the group while sh waits.
	cfg.Load = `echo "$MEMDOCTOR_TARGET_PID $MEMDOCTOR_TARGET_PPROF" > ` + out + `; trap 'echo stopped >> ` + out + `; exit 0' INT; while :; do sleep 0.1; done`
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	s, err := session.Open(cfg.Out)
	if err != nil {
		t.Fatal(err)
	}
	tg := s.Manifest.Target
	if tg.GOGC != "1234" || tg.GOMEMLIMIT != "300MiB" {
		t.Errorf("the program ran with GOGC=%q GOMEMLIMIT=%q, want 1234 and 300MiB", tg.GOGC, tg.GOMEMLIMIT)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("the load generator did not run: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 || lines[1] != "stopped" {
		t.Fatalf("the load generator wrote %q, want its target and then \"stopped\" (SIGINT)", b)
	}
	pid, url, _ := strings.Cut(lines[0], " ")
	if pid != strconv.Itoa(tg.PID) || tg.PID == 0 || url == "" || url != tg.PprofURL {
		t.Errorf("the load generator was told %q %q; the target is pid %d at %q", pid, url, tg.PID, tg.PprofURL)
	}
	if !slicesContains(s.Manifest.Notes, "the load generator (--load) started") {
		t.Errorf("the manifest does not say when the load started: %q", s.Manifest.Notes)
	}
}

// TestRunLoadEndsEarly: a load generator that ends by itself is noted, since the rest of the
// run had no load.
func TestRunLoadEndsEarly(t *testing.T) {
	cfg := runConfig(t, helperCommand(t, "gc")...)
	cfg.Duration = 3 * time.Second
	cfg.LoadWait = 200 * time.Millisecond
	cfg.Load = "exit 7"
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	s, err := session.Open(cfg.Out)
	if err != nil {
		t.Fatal(err)
	}
	if !slicesContains(s.Manifest.Notes, "ended by itself") || !slicesContains(s.Manifest.Notes, "exit status 7") {
		t.Errorf("notes %q do not say the load ended early with status 7", s.Manifest.Notes)
	}
}

func slicesContains(notes []string, sub string) bool {
	for _, n := range notes {
		if strings.Contains(n, sub) {
			return true
		}
	}
	return false
}
