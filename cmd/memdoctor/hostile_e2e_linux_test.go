package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/session"
)

// TestHostileSessionFiles gives analyze, report --html and diff a session whose files are
// links to /dev/zero and named pipes no one writes (reading either would never end): each
// command ends (a minute is far above what it takes), says what it skipped, and diagnoses
// the rest.
func TestHostileSessionFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	t0 := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	w, err := session.Create(dir, session.Manifest{Mode: "watch", Start: t0})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		w.AppendSample(session.Sample{Time: t0.Add(time.Duration(i) * time.Second), Proc: &session.Proc{PID: 7, RSSBytes: 100 << 20, RSSAnonBytes: 90 << 20}})
	}
	real, err := os.ReadFile("../../testdata/profiles/prometheus_heap_4types.pb.gz")
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := w.WriteProfile(session.KindHeap, t0, "", real)
	good := filepath.Join(dir, ref.Path)
	w.WriteTrace("trace-20261122T100000.000Z-heap-jump.trace", []byte("x"))
	if err := w.Close(session.StatusComplete, ""); err != nil {
		t.Fatal(err)
	}
	mkfifo := func(path string) {
		os.Remove(path)
		if err := syscall.Mkfifo(path, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	symlinkZero := func(path string) {
		os.Remove(path)
		if err := os.Symlink("/dev/zero", path); err != nil {
			t.Fatal(err)
		}
	}
	mkfifo(filepath.Join(dir, session.GCTraceFile))
	symlinkZero(filepath.Join(dir, session.ProfilesDir, session.ProfileFileName(session.KindHeap, t0.Add(10*time.Second), "")))
	mkfifo(filepath.Join(dir, session.ProfilesDir, session.ProfileFileName(session.KindHeap, t0.Add(20*time.Second), "")))
	symlinkZero(filepath.Join(dir, session.TracesDir, "trace-20261122T100000.000Z-heap-jump.trace"))
	fifoProfile := filepath.Join(t.TempDir(), "fifo.pb.gz")
	mkfifo(fifoProfile)

	for _, c := range []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"analyze", dir}, 0, []string{"gctrace.log skipped (not a regular file: it is a named pipe)", "a symbolic link to /dev/zero", "skipped trace"}},
		{[]string{"report", "--html", filepath.Join(t.TempDir(), "r.html"), dir}, 0, nil},
		{[]string{"diff", good, "/dev/zero"}, 1, []string{"profile /dev/zero: not a regular file: it is a character device"}},
		{[]string{"diff", good, fifoProfile}, 1, []string{"not a pprof profile"}}, // a pipe with no writer reads as empty
	} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		res := memdoctor(t, ctx, c.args...)
		hung := ctx.Err() != nil
		cancel()
		if hung {
			t.Errorf("memdoctor %s hangs", strings.Join(c.args, " "))
			continue
		}
		out := res.stdout + res.stderr
		if res.code != c.code {
			t.Errorf("memdoctor %s: exit %d, want %d:\n%s", strings.Join(c.args, " "), res.code, c.code, out)
		}
		for _, want := range c.want {
			if !strings.Contains(out, want) {
				t.Errorf("memdoctor %s does not say %q:\n%s", strings.Join(c.args, " "), want, out)
			}
		}
	}
}
