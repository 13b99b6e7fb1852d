//go:build linux

package procfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestFakeProcess(t *testing.T) {
	root := fakeRoot(t, "v2")
	symlinks(t, root, map[string]string{"proc/4242/exe": "/usr/local/bin/api (deleted)"})
	for _, fsys := range []FS{{Root: root}, {Root: root + "/"}} {
		st, err := fsys.Status(4242)
		if err != nil {
			t.Fatal(err)
		}
		if st.Name != "weird\\name\nx" || st.PID != 4242 || st.PPID != 4200 || st.Threads != 12 ||
			st.VmRSS != 289452<<10 || st.RssAnon != 204800<<10 || st.RssFile != 80556<<10 ||
			st.RssShmem != 4096<<10 || st.VmHWM != 312340<<10 || st.VmSize != 1224012<<10 {
			t.Errorf("Status = %+v", st)
		}

		r, err := fsys.SmapsRollup(4242)
		want := Rollup{Rss: 289452 << 10, Pss: 280000 << 10, Anonymous: 204800 << 10, LazyFree: 153600 << 10, AnonHugePages: 20480 << 10, Swap: 1024 << 10}
		if err != nil || r != want {
			t.Errorf("SmapsRollup = %+v, %v; want %+v", r, err, want)
		}

		s, err := fsys.Stat(4242)
		wantStat := Stat{PID: 4242, PPID: 4200, Comm: "my (app) x)", State: 'S', Flags: 4194560, UTime: 12340 * time.Millisecond,
			STime: 5670 * time.Millisecond, StartTime: time.Unix(1700000000+3600, 0), NumThreads: 12}
		if err != nil || s != wantStat {
			t.Errorf("Stat = %+v, %v\nwant %+v", s, err, wantStat)
		}

		args, err := fsys.Cmdline(4242)
		if want := []string{"/usr/local/bin/api", "--listen=:8080", "--name=a b"}; err != nil || !reflect.DeepEqual(args, want) {
			t.Errorf("Cmdline = %q, %v; want %q", args, err, want)
		}
		env, err := fsys.Environ(4242)
		if want := []string{"HOME=/home/app", "GOMEMLIMIT=400MiB", "PATH=/usr/bin"}; err != nil || !reflect.DeepEqual(env, want) {
			t.Errorf("Environ = %q, %v; want %q", env, err, want)
		}
		exe, err := fsys.Exe(4242)
		if exe != "/usr/local/bin/api (deleted)" || err != nil {
			t.Errorf("Exe = %q, %v", exe, err)
		}
	}
}

func TestFakeProcessErrors(t *testing.T) {
	root := fakeRoot(t, "v2")
	fsys := FS{Root: root}

	// A process that does not exist: every reader says so and names the file.
	for name, call := range map[string]func() error{
		"Status":      func() error { _, err := fsys.Status(999); return err },
		"SmapsRollup": func() error { _, err := fsys.SmapsRollup(999); return err },
		"Stat":        func() error { _, err := fsys.Stat(999); return err },
		"Exe":         func() error { _, err := fsys.Exe(999); return err },
		"Cmdline":     func() error { _, err := fsys.Cmdline(999); return err },
		"Environ":     func() error { _, err := fsys.Environ(999); return err },
		"Descendants": func() error { _, err := fsys.Descendants(999); return err },
		"Cgroup":      func() error { _, err := fsys.Cgroup(999); return err },
		"Ports":       func() error { _, err := fsys.ListeningPorts(999); return err },
	} {
		err := call()
		if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "/proc/999") {
			t.Errorf("%s(999) error = %v, want one wrapping fs.ErrNotExist naming /proc/999", name, err)
		}
		if err != nil && strings.Contains(err.Error(), "smaps_rollup (Linux 4.14") {
			t.Errorf("%s(999) blames the kernel: %v", name, err)
		}
	}
	if _, err := fsys.Status(0); err == nil || !strings.Contains(err.Error(), "bad pid 0") {
		t.Errorf("Status(0) error = %v", err)
	}

	// An old kernel without smaps_rollup.
	removeFile(t, root, "proc/4242/smaps_rollup")
	_, err := fsys.SmapsRollup(4242)
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "Linux 4.14") {
		t.Errorf("SmapsRollup without the file: %v", err)
	}

	// A corrupt file is named in the error.
	writeFile(t, root, "proc/4242/status", "Name:\tx\nPid:\t1\nVmRSS:\tmany kB\n")
	if _, err := fsys.Status(4242); err == nil || !strings.Contains(err.Error(), "parse "+root+"/proc/4242/status") {
		t.Errorf("Status of a corrupt file: %v", err)
	}

	// No btime in /proc/stat.
	other := fakeRoot(t, "v2")
	writeFile(t, other, "proc/stat", "cpu 1 2 3\n")
	if _, err := (FS{Root: other}).Stat(4242); err == nil || !strings.Contains(err.Error(), "no btime") {
		t.Errorf("Stat without btime: %v", err)
	}
}

func TestFakeEnvironPermission(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads files whatever their mode")
	}
	root := fakeRoot(t, "v2")
	if err := os.Chmod(filepath.Join(root, "proc/4242/environ"), 0); err != nil {
		t.Fatal(err)
	}
	_, err := FS{Root: root}.Environ(4242)
	if !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), "readable only by") {
		t.Errorf("Environ of an unreadable file: %v", err)
	}
}

func TestFakeDescendants(t *testing.T) {
	tests := []struct {
		pid  int
		want []int
	}{
		{100, []int{101, 102, 103, 104, 50}},
		{1, []int{100, 200, 101, 102, 103, 104, 50}},
		{101, []int{104, 50}},
		{102, nil},
	}
	withChildren := FS{Root: fakeRoot(t, "tree")}
	scanOnly := FS{Root: fakeRoot(t, "tree")}
	// A kernel without CONFIG_PROC_CHILDREN has no children files.
	filepath.WalkDir(scanOnly.Root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == "children" {
			removeFile(t, "/", path)
		}
		return err
	})
	for _, fsys := range []FS{withChildren, scanOnly} {
		for _, tt := range tests {
			got, err := fsys.Descendants(tt.pid)
			if err != nil || !slices.Equal(got, tt.want) {
				t.Errorf("Descendants(%d) = %v, %v; want %v", tt.pid, got, err, tt.want)
			}
		}
	}
	// The two strategies agree on the unmodified tree.
	for _, tt := range tests {
		got, err := withChildren.descendantsByScan(tt.pid)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("descendantsByScan(%d) = %v, %v; want %v", tt.pid, got, err, tt.want)
		}
	}
}
