package recorder

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memdoctor/memdoctor/agent/procfs"
	"github.com/memdoctor/memdoctor/session"
)

// TestOOMKillNotedAcrossCgroupReadings: the kernel's OOM kill is said when the end's count of
// the target's cgroup exceeds the count first read in that cgroup, whatever was read between:
// a reading taken as the kill is counted, after one of another directory (the target read as
// it moved, or as it exited), does not become the baseline. A count that never rose says
// nothing.
func TestOOMKillNotedAcrossCgroupReadings(t *testing.T) {
	root := t.TempDir()
	dir := func(name string, kills int) procfs.Cgroup {
		d := filepath.Join(root, name)
		os.MkdirAll(d, 0o755)
		for f, v := range map[string]string{"memory.current": "1048576\n", "memory.max": "201326592\n",
			"memory.events": "low 0\nhigh 0\nmax 3\noom 1\noom_kill " + string(rune('0'+kills)) + "\n"} {
			if err := os.WriteFile(filepath.Join(d, f), []byte(v), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		cg, err := procfs.FS{}.Reread(procfs.Cgroup{Version: 2, Dir: d, Mount: root})
		if err != nil {
			t.Fatal(err)
		}
		return cg
	}
	for _, tc := range []struct {
		name string
		seen func() []procfs.Cgroup // the readings, the last directory's files as at the end
		want bool
	}{
		{"killed, read at the kill after another directory", func() []procfs.Cgroup {
			a0, b := dir("a", 0), dir("b", 0)
			return []procfs.Cgroup{dir("parent", 0), a0, a0, b, dir("a", 1)}
		}, true},
		{"killed, the kill's reading right after the first", func() []procfs.Cgroup {
			a0 := dir("a", 0)
			return []procfs.Cgroup{a0, dir("a", 1)}
		}, true},
		{"never killed", func() []procfs.Cgroup {
			a0 := dir("a", 0)
			return []procfs.Cgroup{a0, dir("b", 0), a0}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.RemoveAll(root)
			w, err := session.Create(filepath.Join(t.TempDir(), "s"), session.Manifest{Mode: "run"})
			if err != nil {
				t.Fatal(err)
			}
			cfg := Config{}
			cfg.defaults()
			r := newRecorder(cfg, w)
			for _, cg := range tc.seen() {
				r.keepCgroup(cg)
			}
			r.ended()
			var notes []string
			r.note(func(m *session.Manifest) { notes = m.Notes })
			got := strings.Contains(strings.Join(notes, "\n"), "OOM-killed")
			if got != tc.want {
				t.Errorf("OOM kill noted %v, want %v: %q", got, tc.want, notes)
			}
			w.Close(session.StatusComplete, "")
		})
	}
}
