package session

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// noHang runs fn and fails the test if it has not returned within a minute: a hang is the
// defect these tests look for (no timing is asserted: reading takes milliseconds).
func noHang(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("%s hangs", what)
	}
}

// plant replaces path with a hostile file: a symbolic link to /dev/zero (endless) or a named
// pipe that no one writes (opening it for reading waits forever).
func plant(t *testing.T, path, kind string) {
	t.Helper()
	os.Remove(path)
	var err error
	switch kind {
	case "devzero":
		err = os.Symlink("/dev/zero", path)
	case "fifo":
		err = syscall.Mkfifo(path, 0o600)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestHostileFiles plants a link to /dev/zero or a named pipe in place of each file of a
// session: opening and reading it never hangs; the file is skipped with a warning that says
// what it is, and the rest of the session is read.
func TestHostileFiles(t *testing.T) {
	for _, kind := range []string{"devzero", "fifo"} {
		for _, file := range []string{MetricsFile, GCTraceFile, ManifestFile} {
			t.Run(kind+"/"+file, func(t *testing.T) {
				w, dir := newTestWriter(t)
				t0 := time.Date(2026, 11, 22, 10, 0, 1, 0, time.UTC)
				w.AppendSample(Sample{Time: t0, Proc: &Proc{PID: 7, RSSBytes: 100 << 20}})
				w.AppendGCTrace("gc 1 @0.010s 1%: 0.01+0.5+0.01 ms clock, 0.02+0.1/0.2/0+0.02 ms cpu, 4->4->1 MB, 4 MB goal, 0 MB stacks, 0 MB globals, 2 P")
				w.WriteProfile(KindHeap, t0, "", []byte("x"))
				if err := w.Close(StatusComplete, ""); err != nil {
					t.Fatal(err)
				}
				plant(t, filepath.Join(dir, file), kind)
				var s *Session
				var err error
				var samples []Sample
				var gcs []GCEvent
				noHang(t, "reading the session", func() {
					if s, err = Open(dir); err != nil {
						return
					}
					if samples, err = s.ReadSamples(); err != nil {
						return
					}
					gcs, err = s.ReadGC()
				})
				if err != nil {
					t.Fatal(err)
				}
				what := map[string]string{"devzero": "a character device (a symbolic link to /dev/zero)", "fifo": "a named pipe"}[kind]
				warned := strings.Join(s.Warnings, "\n")
				if !strings.Contains(warned, file+" skipped (not a regular file: it is "+what+")") {
					t.Errorf("warnings %q do not say %s was skipped as %s", s.Warnings, file, what)
				}
				// What was not planted is still read.
				if wantSamples := file != MetricsFile; (len(samples) == 1) != wantSamples {
					t.Errorf("%d samples", len(samples))
				}
				if wantGC := file != GCTraceFile; (len(gcs) == 1) != wantGC {
					t.Errorf("%d gc cycles", len(gcs))
				}
				if len(s.Profiles) != 1 {
					t.Errorf("%d profiles", len(s.Profiles))
				}
			})
		}
	}
}

// TestHostileProfileListed: a profile name that is a named pipe or a link to /dev/zero is
// left out of the listing with a warning (a link to a regular file is kept).
func TestHostileProfileListed(t *testing.T) {
	w, dir := newTestWriter(t)
	t0 := time.Date(2026, 11, 22, 10, 0, 1, 0, time.UTC)
	ok, _ := w.WriteProfile(KindHeap, t0, "", []byte("x"))
	if err := w.Close(StatusComplete, ""); err != nil {
		t.Fatal(err)
	}
	profiles := filepath.Join(dir, ProfilesDir)
	plant(t, filepath.Join(profiles, ProfileFileName(KindHeap, t0.Add(time.Second), "")), "fifo")
	plant(t, filepath.Join(profiles, ProfileFileName(KindHeap, t0.Add(2*time.Second), "")), "devzero")
	if err := os.Symlink(filepath.Base(ok.Path), filepath.Join(profiles, ProfileFileName(KindHeap, t0.Add(3*time.Second), ""))); err != nil {
		t.Fatal(err)
	}
	var s *Session
	var err error
	noHang(t, "Open", func() { s, err = Open(dir) })
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Profiles) != 2 {
		t.Errorf("profiles %v, want the stored one and the link to it (%q)", s.Profiles, s.Warnings)
	}
	warned := strings.Join(s.Warnings, "\n")
	if !strings.Contains(warned, "a named pipe") || !strings.Contains(warned, "a symbolic link to /dev/zero") {
		t.Errorf("warnings %q", s.Warnings)
	}
}

// TestHostileTrace: a stored trace that is a named pipe or a link to /dev/zero is refused
// by OpenTrace at once.
func TestHostileTrace(t *testing.T) {
	w, dir := newTestWriter(t)
	if _, err := w.WriteTrace("trace-20261122T100000.000Z-heap-jump.trace", []byte("go 1.26 trace")); err != nil {
		t.Fatal(err)
	}
	w.Close(StatusComplete, "")
	paths, err := TraceFiles(dir)
	if err != nil || len(paths) != 1 {
		t.Fatal(paths, err)
	}
	for _, kind := range []string{"devzero", "fifo"} {
		plant(t, paths[0], kind)
		noHang(t, "OpenTrace", func() { _, err = OpenTrace(paths[0]) })
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("%s: %v", kind, err)
		}
	}
}
