package cli

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/agent/procfs"
	"github.com/memdoctor/memdoctor/session"
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
