package recorder

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/agent/procfs"
	"github.com/memdoctor/memdoctor/internal/dev/cgrouptest"
)

// TestSampleOfAnExitedProcessIsDropped: a process killed in a memory cgroup of its own and not
// yet reaped (as a watched service is, its parent not memdoctor) is gone to the sampler: its
// reading is not taken, where it had been taken with the root cgroup (the zombie's
// /proc/PID/cgroup names it, cgroup v1 here) and the machine's usage as the cgroup's.
func TestSampleOfAnExitedProcessIsDropped(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip(err)
	}
	procs := cgrouptest.Memory(t, "memdoctor-recorder", 0)
	cmd := exec.Command(sleep, "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	pid := cmd.Process.Pid
	if err := os.WriteFile(procs, []byte(fmt.Sprint(pid)), 0o644); err != nil {
		t.Skipf("cannot move a process into %s: %v", procs, err)
	}
	fsys := procfs.FS{}
	_, cg, cgErr, err := sampleProc(fsys, pid, time.Now())
	if err != nil || cgErr != nil {
		t.Fatalf("the live process: %v, cgroup: %v", err, cgErr)
	}
	if want := filepath.Dir(procs); cg.Dir != want {
		t.Fatalf("the live process's cgroup is %s, want %s", cg.Dir, want)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	for i := 0; ; i++ { // until it is a zombie: killed, not reaped
		if st, err := fsys.Stat(pid); err == nil && st.State == 'Z' {
			break
		}
		if i == 200 {
			t.Fatal("the killed process did not become a zombie")
		}
		time.Sleep(10 * time.Millisecond)
	}
	smp, cg, _, err := sampleProc(fsys, pid, time.Now())
	if !errors.Is(err, errExiting) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the zombie's sample: err %v, cgroup %q (%+v), want it dropped as gone", err, cg.Dir, smp.Cgroup)
	}
}
