package record

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// hostileNames are names a target might send to escape the session directory or to carry
// terminal escapes into file names.
func hostileNames(tmp string) []string {
	return []string{
		"x/" + strings.Repeat("../", 40) + strings.TrimPrefix(filepath.ToSlash(tmp), "/") + "/owned", // up to / and down to tmp
		"x/../../../../" + tmp + "/owned",
		"../owned", "..", ".", "/etc/passwd", `..\\owned`, `a\\b`, "a/b",
		"a\x00b", "a\nb", "a\x1b[2Jb", "a\x7fb", "a\u0085b", "a b", "é",
		"-x", "A", strings.Repeat("a", 300),
	}
}

func TestCheckLabel(t *testing.T) {
	for _, ok := range []string{"", "before-heap-jump", "after-rss-threshold", "exit", "0", "a-", strings.Repeat("a", MaxLabelLen)} {
		if err := CheckLabel(ok); err != nil {
			t.Errorf("CheckLabel(%q): %v", ok, err)
		}
	}
	for _, bad := range append(hostileNames("/tmp"), strings.Repeat("a", MaxLabelLen+1), "Before", "a_b", "a.b") {
		if err := CheckLabel(bad); err == nil {
			t.Errorf("CheckLabel(%q) accepted it", bad)
		}
	}
}

func TestCheckTraceName(t *testing.T) {
	for _, ok := range []string{"trace-20261122T064512.345Z-heap-jump.trace", "a.trace", "X_1.trace"} {
		if err := CheckTraceName(ok); err != nil {
			t.Errorf("CheckTraceName(%q): %v", ok, err)
		}
	}
	for _, bad := range append(hostileNames("/tmp"), "../../x.trace", "x..trace", ".trace", ".x.trace", "x.trace/", "x.html", "", "x/.trace", strings.Repeat("a", MaxTraceNameLen)+".trace") {
		if err := CheckTraceName(bad); err == nil {
			t.Errorf("CheckTraceName(%q) accepted it", bad)
		}
	}
}

// TestWriteRefusesHostileNames gives WriteProfile and WriteTrace names a target could send:
// each is refused, and nothing appears outside the session directory.
func TestWriteRefusesHostileNames(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "a", "b", "c", "session")
	w, err := Create(dir, Manifest{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close(StatusComplete, "")
	t0 := time.Date(2026, 11, 22, 6, 45, 12, 0, time.UTC)
	for _, name := range hostileNames(root) {
		if _, err := w.WriteProfile(KindHeap, t0, name, []byte("x")); err == nil {
			t.Errorf("WriteProfile label %q accepted", name)
		}
		if _, err := w.WriteProfile(name, t0, "", []byte("x")); err == nil {
			t.Errorf("WriteProfile kind %q accepted", name)
		}
		if _, err := w.WriteTrace(name, []byte("x")); err == nil {
			t.Errorf("WriteTrace %q accepted", name)
		}
		if _, err := w.WriteTrace(name+".trace", []byte("x")); err == nil && name != "A" { // "A.trace" is fine
			t.Errorf("WriteTrace %q accepted", name+".trace")
		}
	}
	if _, err := w.WriteProfile(KindHeap, t0, "before-heap-jump", []byte("x")); err != nil {
		t.Errorf("a good label: %v", err)
	}
	assertOnlyUnder(t, root, dir)
}

// assertOnlyUnder fails if a file under root lies outside dir.
func assertOnlyUnder(t *testing.T, root, dir string) {
	t.Helper()
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && !strings.HasPrefix(path, dir+string(os.PathSeparator)) {
			t.Errorf("a file outside the session: %s", path)
		}
		return nil
	})
}

// TestProfileFile: a streamed profile appears whole at Commit, nothing is left by Abort, and
// its name is checked like WriteProfile's.
func TestProfileFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	w, err := Create(dir, Manifest{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close(StatusComplete, "")
	t0 := time.Date(2026, 11, 22, 6, 45, 12, 0, time.UTC)
	pf, err := w.CreateProfile(KindGoroutineText, t0, "")
	if err != nil {
		t.Fatal(err)
	}
	pf.Write([]byte("goroutine profile: total 1\n"))
	if entries, _ := os.ReadDir(filepath.Join(dir, ProfilesDir)); len(entries) != 1 || !strings.HasPrefix(entries[0].Name(), ".") {
		t.Errorf("before Commit: %v, want one hidden temporary file", entries)
	}
	ref, err := pf.Commit()
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, ref.Path)); err != nil || string(b) != "goroutine profile: total 1\n" {
		t.Errorf("after Commit: %q, %v", b, err)
	}
	pf, err = w.CreateProfile(KindGoroutineText, t0.Add(time.Second), "")
	if err != nil {
		t.Fatal(err)
	}
	pf.Write([]byte("partial"))
	pf.Abort()
	if entries, _ := os.ReadDir(filepath.Join(dir, ProfilesDir)); len(entries) != 1 {
		t.Errorf("after Abort: %v, want only the committed file", entries)
	}
	if _, err := w.CreateProfile(KindHeap, t0, "../x"); err == nil {
		t.Error("a bad label accepted")
	}
}
