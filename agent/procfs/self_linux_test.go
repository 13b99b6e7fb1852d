//go:build linux

package procfs

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Tests against the real /proc and cgroups, of this very test process.

func realFS(t testing.TB) FS {
	t.Helper()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	return FS{}
}

func TestSelfStatus(t *testing.T) {
	fsys := realFS(t)
	pid := os.Getpid()
	st, err := fsys.Status(pid)
	if err != nil {
		t.Fatal(err)
	}
	if st.PID != pid || st.PPID != os.Getppid() || st.Threads < 1 {
		t.Errorf("Status = %+v, want pid %d ppid %d", st, pid, os.Getppid())
	}
	if base := filepath.Base(os.Args[0]); !strings.HasPrefix(base, st.Name) || st.Name == "" {
		t.Errorf("Name = %q, want a prefix of %q (comm is at most 15 bytes)", st.Name, base)
	}
	if st.VmRSS == 0 || st.RssAnon+st.RssFile+st.RssShmem != st.VmRSS || st.VmHWM < st.VmRSS || st.VmSize < st.VmRSS {
		t.Errorf("inconsistent sizes: %+v", st)
	}

	// Touching 64 MiB of fresh memory shows in RssAnon.
	buf := make([]byte, 64<<20)
	for i := 0; i < len(buf); i += 4096 {
		buf[i] = 1
	}
	after, err := fsys.Status(pid)
	if err != nil {
		t.Fatal(err)
	}
	if after.RssAnon < st.RssAnon+48<<20 {
		t.Errorf("RssAnon went %d -> %d after touching 64 MiB", st.RssAnon, after.RssAnon)
	}
	runtime.KeepAlive(buf)
}

func TestSelfSmapsRollup(t *testing.T) {
	fsys := realFS(t)
	pid := os.Getpid()
	before, err := fsys.SmapsRollup(pid)
	if errors.Is(err, os.ErrNotExist) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if before.Rss == 0 || before.Pss > before.Rss || before.Anonymous > before.Rss {
		t.Errorf("inconsistent rollup: %+v", before)
	}

	// Pages freed with MADV_FREE stay resident and show as LazyFree.
	const size = 32 << 20
	mem, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(mem)
	for i := 0; i < size; i += 4096 {
		mem[i] = 1
	}
	touched, err := fsys.SmapsRollup(pid)
	if err != nil {
		t.Fatal(err)
	}
	if touched.Anonymous < before.Anonymous+size/2 {
		t.Errorf("Anonymous went %d -> %d after touching %d bytes", before.Anonymous, touched.Anonymous, size)
	}
	const madvFree = 8 // MADV_FREE, Linux 4.5+
	if err := syscall.Madvise(mem, madvFree); err != nil {
		t.Skipf("MADV_FREE: %v", err)
	}
	freed, err := fsys.SmapsRollup(pid)
	if err != nil {
		t.Fatal(err)
	}
	if freed.LazyFree < touched.LazyFree+size/2 {
		t.Errorf("LazyFree went %d -> %d after MADV_FREE of %d bytes", touched.LazyFree, freed.LazyFree, size)
	}
}

func TestSelfStat(t *testing.T) {
	fsys := realFS(t)
	pid := os.Getpid()
	st, err := fsys.Stat(pid)
	if err != nil {
		t.Fatal(err)
	}
	status, err := fsys.Status(pid)
	if err != nil {
		t.Fatal(err)
	}
	if st.PID != pid || st.PPID != os.Getppid() || st.Comm != status.Name || !strings.ContainsRune("RSD", rune(st.State)) || st.NumThreads < 1 {
		t.Errorf("Stat = %+v; status name %q", st, status.Name)
	}
	btime, err := fsys.bootTime()
	if err != nil {
		t.Fatal(err)
	}
	if now := time.Now(); st.StartTime.Before(btime) || st.StartTime.After(now.Add(time.Second)) {
		t.Errorf("StartTime %v not between boot %v and now %v", st.StartTime, btime, now)
	}
	// Burn CPU until it shows (a loop bounded by work, not by time).
	x := 1
	for i := 0; i < 1000 && st.UTime+st.STime == 0; i++ {
		for j := 0; j < 1e6; j++ {
			x = x*31 + j
		}
		if st, err = fsys.Stat(pid); err != nil {
			t.Fatal(err)
		}
	}
	if st.UTime+st.STime == 0 {
		t.Errorf("no CPU time after busy loops (%d): %+v", x, st)
	}
}

func TestSelfCmdlineEnvironExe(t *testing.T) {
	fsys := realFS(t)
	pid := os.Getpid()
	args, err := fsys.Cmdline(pid)
	if err != nil || !slices.Equal(args, os.Args) {
		t.Errorf("Cmdline = %q, %v; want %q", args, err, os.Args)
	}
	env, err := fsys.Environ(pid)
	if err != nil || !slices.Equal(env, os.Environ()) {
		t.Errorf("Environ = %d entries, %v; want the %d of os.Environ", len(env), err, len(os.Environ()))
	}
	exe, err := fsys.Exe(pid)
	want, _ := os.Executable()
	if err != nil || exe != want {
		t.Errorf("Exe = %q, %v; want %q", exe, err, want)
	}
}

func TestSelfDescendants(t *testing.T) {
	fsys := realFS(t)
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip(err)
	}
	// sh starts sleep in the background: a child and a grandchild.
	cmd := exec.Command(sh, "-c", "sleep 30 & wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // the group we created: sh and sleep
		cmd.Wait()
	}()
	me, child := os.Getpid(), cmd.Process.Pid
	var got []int
	var st Stat
	for i := 0; i < 500; i++ { // wait for sh to fork, and the fork to exec sleep
		if got, err = fsys.Descendants(me); err != nil {
			t.Fatal(err)
		}
		if len(got) == 2 {
			if st, err = fsys.Stat(got[1]); err == nil && st.Comm == "sleep" {
				break
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(got) != 2 || got[0] != child || st.PPID != child || st.Comm != "sleep" {
		t.Fatalf("Descendants(self) = %v, want [%d <sleep>]; grandchild %+v", got, child, st)
	}
	scan, err := fsys.descendantsByScan(me)
	if err != nil || !slices.Equal(scan, got) {
		t.Errorf("descendantsByScan = %v, %v; want %v", scan, err, got)
	}
	sub, err := fsys.Descendants(child)
	if err != nil || !slices.Equal(sub, got[1:]) {
		t.Errorf("Descendants(child) = %v, %v; want %v", sub, err, got[1:])
	}
}

func TestSelfCgroup(t *testing.T) {
	fsys := realFS(t)
	pid := os.Getpid()
	cg, err := fsys.Cgroup(pid)
	if errors.Is(err, ErrNoMemoryCgroup) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", cg)
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	if cg.Version != 1 && cg.Version != 2 || !bytes.Contains(own, []byte(":"+cg.Path+"\n")) {
		t.Errorf("Version %d, Path %q; /proc/self/cgroup:\n%s", cg.Version, cg.Path, own)
	}
	// The directory found is really ours: it lists this process.
	procs, err := os.ReadFile(cg.Dir + "/cgroup.procs")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(strings.Fields(string(procs)), strconv.Itoa(pid)) {
		t.Errorf("%s/cgroup.procs does not list pid %d", cg.Dir, pid)
	}
	if cg.UsageBytes == 0 || cg.WorkingSetBytes > cg.UsageBytes || cg.AnonBytes == 0 {
		t.Errorf("implausible usage: %+v", cg)
	}
	if cg.LimitBytes != 0 && !strings.HasPrefix(cg.Dir, cg.LimitDir) {
		t.Errorf("LimitDir %q is not an ancestor of Dir %q", cg.LimitDir, cg.Dir)
	}
	if cg.LimitBytes == 0 && cg.LimitDir != "" {
		t.Errorf("no limit but LimitDir %q", cg.LimitDir)
	}
}

// TestOtherMountNamespace reads the cgroup of a child in its own mount
// namespace, as the host reads a container's process.
func TestOtherMountNamespace(t *testing.T) {
	fsys := realFS(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root for a new mount namespace")
	}
	mine, err := fsys.Cgroup(os.Getpid())
	if err != nil {
		t.Skip(err)
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip(err)
	}
	cmd := exec.Command(sleep, "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS}
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot start a process in a new mount namespace: %v", err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	pid := cmd.Process.Pid
	prefix := "/proc/" + strconv.Itoa(pid) + "/root"
	if fsys.viewPrefix(pid) != prefix {
		t.Fatalf("viewPrefix(child) = %q, want %q", fsys.viewPrefix(pid), prefix)
	}
	cg, err := fsys.Cgroup(pid)
	if err != nil {
		t.Fatal(err)
	}
	if cg.Path != mine.Path || cg.Dir != prefix+mine.Dir || cg.Version != mine.Version {
		t.Errorf("child's cgroup %+v; want %s below %s", cg, mine.Dir, prefix)
	}
	procs, err := os.ReadFile(cg.Dir + "/cgroup.procs")
	if err != nil || !slices.Contains(strings.Fields(string(procs)), strconv.Itoa(pid)) {
		t.Errorf("%s/cgroup.procs does not list %d: %v", cg.Dir, pid, err)
	}
	if fsys.viewPrefix(os.Getpid()) != "" {
		t.Errorf("viewPrefix(self) = %q", fsys.viewPrefix(os.Getpid()))
	}
}
