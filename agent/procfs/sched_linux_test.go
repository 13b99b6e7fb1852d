//go:build linux

package procfs

import (
	"errors"
	"io/fs"
	"os"
	"testing"
	"time"
)

// Sched sums the threads' schedstat; a thread whose file does not parse is skipped.
func TestFakeSched(t *testing.T) {
	fsys := FS{Root: fakeRoot(t, "v2")}
	s, err := fsys.Sched(4242)
	want := Sched{Run: 8 * time.Second, Wait: 2 * time.Second, Tasks: 2}
	if err != nil || s != want {
		t.Errorf("Sched = %+v, %v; want %+v", s, err, want)
	}
	if _, err := fsys.Sched(9999); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Sched of a missing process: %v, want fs.ErrNotExist", err)
	}
}

func TestSelfSched(t *testing.T) {
	s, err := realFS(t).Sched(os.Getpid())
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("this kernel keeps no schedstat: %v", err)
	}
	if err != nil || s.Tasks < 1 || s.Run <= 0 {
		t.Errorf("Sched of this process = %+v, %v; want its threads' run time", s, err)
	}
}
