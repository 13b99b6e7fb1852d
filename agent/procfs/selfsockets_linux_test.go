//go:build linux

package procfs

import (
	"errors"
	"io"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func TestSelfSockets(t *testing.T) {
	fsys := realFS(t)
	pid := os.Getpid()
	ln4, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln4.Close()
	want := []netip.AddrPort{ln4.Addr().(*net.TCPAddr).AddrPort()}
	if ln6, err := net.Listen("tcp6", "[::1]:0"); err == nil {
		defer ln6.Close()
		want = append(want, ln6.Addr().(*net.TCPAddr).AddrPort())
	} else {
		t.Logf("no IPv6 loopback: %v", err)
	}

	got, err := fsys.ListeningPorts(pid)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range want {
		if !slices.ContainsFunc(got, func(l Listener) bool { return l.Addr == w.Addr() && l.Port == int(w.Port()) && l.Inode != 0 }) {
			t.Errorf("ListeningPorts(self) = %v, missing %v", got, w)
		}
	}
	for _, w := range want {
		for _, addr := range []netip.Addr{w.Addr(), {}} {
			if owner, err := fsys.PIDListeningOn(addr, int(w.Port())); err != nil || owner != pid {
				t.Errorf("PIDListeningOn(%v, %d) = %d, %v; want %d", addr, w.Port(), owner, err, pid)
			}
		}
	}

	// A closed listener is gone at once (listening sockets have no TIME_WAIT).
	port := int(want[0].Port())
	ln4.Close()
	if owner, err := fsys.PIDListeningOn(want[0].Addr(), port); !errors.Is(err, ErrNoListener) {
		t.Errorf("after Close: PIDListeningOn = %d, %v; want ErrNoListener", owner, err)
	}
}

// TestUnprivileged runs this test binary as user nobody against a process of
// root (this one): the permission errors must be the descriptive ones.
func TestUnprivileged(t *testing.T) {
	if os.Getenv("PROCFS_TEST_CHILD") == "1" {
		unprivilegedChecks(t)
		return
	}
	realFS(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root, to start a child as another user")
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// nobody must be able to run a copy of the test binary.
	dir, err := os.MkdirTemp("", "procfs-unpriv")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "procfs.test")
	if err := copyExecutable(os.Args[0], bin); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^TestUnprivileged$", "-test.v")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PROCFS_TEST_CHILD=1",
		"PROCFS_TEST_PID="+strconv.Itoa(os.Getpid()),
		"PROCFS_TEST_PORT="+strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	t.Logf("child:\n%s", out)
	if err != nil || !strings.Contains(string(out), "--- PASS: TestUnprivileged") {
		t.Errorf("unprivileged child: %v\n%s", err, out)
	}
}

func unprivilegedChecks(t *testing.T) {
	fsys := FS{}
	if os.Geteuid() == 0 {
		t.Fatal("the child runs as root")
	}
	pid, _ := strconv.Atoi(os.Getenv("PROCFS_TEST_PID"))
	port, _ := strconv.Atoi(os.Getenv("PROCFS_TEST_PORT"))

	if _, err := fsys.Status(pid); err != nil {
		t.Errorf("Status of root's process: %v (status is world-readable)", err)
	}
	if _, err := fsys.Environ(pid); !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), "readable only by") {
		t.Errorf("Environ of root's process: %v", err)
	}
	if _, err := fsys.ListeningPorts(pid); !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), "only the process's user or root") {
		t.Errorf("ListeningPorts of root's process: %v", err)
	}
	owner, err := fsys.PIDListeningOn(netip.MustParseAddr("127.0.0.1"), port)
	if !errors.Is(err, ErrOwnerNotVisible) || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("PIDListeningOn(root's port %d) = %d, %v; want ErrOwnerNotVisible naming the permission", port, owner, err)
	}
	t.Log(err)
}

func copyExecutable(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
