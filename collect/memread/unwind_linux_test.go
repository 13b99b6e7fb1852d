package memread

import (
	"bufio"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memdoctor/memdoctor/process"
)

// TestUnwinderIsDelvesLive compares the two unwinders on a live program stopped for it: its
// goroutines parked on a channel (30, and 3 started through a go statement's wrapper), sleeping
// in the scheduler, and blocked in a system call (its main goroutine reads stdin).
func TestUnwinderIsDelvesLive(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "target")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/target").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-parked", "30")
	stdin, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	if sc := bufio.NewScanner(out); !sc.Scan() || !strings.HasPrefix(sc.Text(), "ready ") {
		t.Fatal("the target never said ready")
	}
	r, err := Open(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.t.Stop(); err != nil {
		t.Fatal(err)
	}
	defer r.t.Resume()
	c := process.NewCache(r.mem, goroutineCacheBytes)
	parked, _, err := r.listGoroutines(c)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[uint64]bool{}
	var ours []gstack
	for _, g := range parked {
		if pcs, done := r.unwind(c, g); done && !r.systemStart(g.startpc) {
			ids[g.goid] = true
			ours = append(ours, gstack{pcs, g.gopc})
		}
	}
	theirs, _, err := r.delveStacks(ids)
	if err != nil {
		t.Fatal(err)
	}
	got, want := r.names(ours), r.names(theirs)
	// A goroutine in a system call is unwound from where it entered it (syscallpc and
	// syscallsp, as the runtime's own goroutine profile does); Delve starts from its thread's
	// registers, inside the call: its stack ends with ours.
	inSyscall := func(s string) bool {
		return strings.HasPrefix(s, "syscall.Syscall <- ") && strings.Contains(s, "main.main")
	}
	i := slices.IndexFunc(got, inSyscall)
	j := slices.IndexFunc(want, func(s string) bool { return i >= 0 && strings.HasSuffix(s, " <- "+got[i]) })
	if i < 0 || j < 0 {
		t.Fatalf("main's read of stdin in a system call: unwound %v, Delve %v:\n%s\nDelve:\n%s", i >= 0, j >= 0, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	got, want = slices.Delete(got, i, i+1), slices.Delete(want, j, j+1)
	if len(got) != 30+3 || !slices.Equal(got, want) {
		t.Errorf("unwound (%d):\n%s\nDelve:\n%s", len(got), strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
