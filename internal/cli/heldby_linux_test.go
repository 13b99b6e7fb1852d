package cli

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/agent/procfs"
	"github.com/memdoctor/memdoctor/holders"
	"github.com/memdoctor/memdoctor/internal/recorder"
	"github.com/memdoctor/memdoctor/session"
	"github.com/memdoctor/memdoctor/snapshot"
)

// TestTargetRuns: a session's target runs while a process has its PID and its start time;
// one that exited, one whose PID now names a process started at another time, and one with no
// start time to compare are not taken to run (advice then names no command for them).
func TestTargetRuns(t *testing.T) {
	st, err := procfs.FS{}.Stat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	me := session.Target{Local: true, PID: os.Getpid(), Started: st.StartTime}
	if !targetRuns(me) {
		t.Error("this very process is not taken to run")
	}
	reused := me
	reused.Started = st.StartTime.Add(-time.Hour)
	if targetRuns(reused) {
		t.Error("a PID started at another time is taken for the target")
	}
	noStart := me
	noStart.Started = time.Time{}
	if targetRuns(noStart) {
		t.Error("a PID with no start time to compare is taken for the target")
	}
	remote := me
	remote.Local = false
	if targetRuns(remote) {
		t.Error("a process of another machine is taken to run here")
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	gone := session.Target{Local: true, PID: cmd.Process.Pid, Started: time.Now()}
	if targetRuns(gone) {
		t.Error("an exited process is taken to run")
	}
}

// TestHoldersAtEnd: what run, demo and watch --holders do once the recording is over, on
// recorded sessions: nothing to read without a confirmed heap leak; with one, the reason it
// could not be read (turned off, the target exited, not a local process, not readable), in the
// words the diagnosis recognises.
func TestHoldersAtEnd(t *testing.T) {
	e := testEnv(io.Discard, io.Discard, nil)
	leak := copySession(t, "../../diagnose/testdata/sessions/tcp-reassembly")
	healthy := copySession(t, "../../diagnose/testdata/sessions/healthy")
	ctx := context.Background()
	if err := holdersAtEnd(e, healthy, 0, true, stopFlags{maxStop: snapshot.DefaultMaxStop})(ctx, 42, true); !errors.Is(err, recorder.ErrNoHolders) {
		t.Errorf("no heap leak: %v", err)
	}
	if err := holdersAtEnd(e, leak, 0, false, stopFlags{maxStop: snapshot.DefaultMaxStop})(ctx, 42, true); err == nil || err.Error() != holders.UnreadOff {
		t.Errorf("turned off: %v", err)
	}
	if err := holdersAtEnd(e, leak, 0, true, stopFlags{maxStop: snapshot.DefaultMaxStop})(ctx, 42, false); err == nil || err.Error() != holders.UnreadExited {
		t.Errorf("exited: %v", err)
	}
	if err := holdersAtEnd(e, leak, 0, true, stopFlags{maxStop: snapshot.DefaultMaxStop})(ctx, 0, true); err == nil || !strings.Contains(err.Error(), "not on this machine") {
		t.Errorf("no local process: %v", err)
	}
	sleep := exec.Command("sleep", "30")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sleep.Process.Kill(); sleep.Wait() }()
	err := holdersAtEnd(e, leak, 0, true, stopFlags{maxStop: snapshot.DefaultMaxStop})(ctx, sleep.Process.Pid, true)
	if err == nil || errors.Is(err, recorder.ErrNoHolders) {
		t.Errorf("a process that is not Go: %v", err)
	}
	if _, ok, _ := holders.Load(leak); ok {
		t.Error("a failed reading saved holders in the session")
	}
}

// copySession copies a recorded session into a temporary directory.
func copySession(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestDemoExecutableFallsBack: a binary without DWARF (a test binary, as go run's) that
// cannot be built again with it is run as it is, and the demo says why the leak's holders
// will not be read.
func TestDemoExecutableFallsBack(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if hasDWARF(exe) {
		t.Skip("this test binary has DWARF")
	}
	var log strings.Builder
	e := testEnv(io.Discard, io.Discard, nil)
	e.log = slog.New(slog.NewTextHandler(&log, nil))
	if got := demoExecutable(context.Background(), e, exe, t.TempDir()); got != exe {
		t.Errorf("demoExecutable = %s, want %s", got, exe)
	}
	if !strings.Contains(log.String(), "who holds the leak cannot be read") {
		t.Errorf("the demo does not say why:\n%s", log.String())
	}
}
