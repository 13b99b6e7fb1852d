package walk_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/holders"
	"github.com/memdoctor/memdoctor/holders/walk"
	"github.com/memdoctor/memdoctor/internal/dev/rsstest"
	"github.com/memdoctor/memdoctor/lab"
	"github.com/memdoctor/memdoctor/process"
)

// TestCopyWalksAsTheProcess reads every lab holder scenario and holders-target (also built
// position-independent) twice while they are held stopped: walked in place, as memdoctor walked a process before it copied one,
// and walked on the copy taken then. Everything found is the same: the paths, counts and
// bytes, the roots, goroutines and notes.
func TestCopyWalksAsTheProcess(t *testing.T) {
	dir := t.TempDir()
	labrun := filepath.Join(dir, "labrun")
	target := filepath.Join(dir, "holders-target")
	pie := filepath.Join(dir, "holders-target-pie")
	for _, b := range [][]string{{labrun, "../../internal/dev/labrun"}, {target, "../../cmd/memdoctor/testdata/holders-target"},
		{pie, "../../cmd/memdoctor/testdata/holders-target", "-buildmode=pie"}} {
		if out, err := exec.Command("go", append(append([]string{"build", "-o", b[0]}, b[2:]...), b[1])...).CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", b[1], err, out)
		}
	}
	type program struct {
		name string
		args []string
		site string
	}
	programs := []program{{"holders-target", []string{target, "-objects", "20000", "-rate", "4096"}, "main.build"},
		// Loaded elsewhere than it was linked: its read-only data is relocated, and copied.
		{"holders-target-pie", []string{pie, "-objects", "20000", "-rate", "4096"}, "main.build"}}
	for _, sc := range lab.HolderScenarios() {
		programs = append(programs, program{sc.Name, []string{labrun, sc.Name}, sc.Holder.Site})
	}
	for _, p := range programs {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			cmd := startProgram(t, p.args...)
			time.Sleep(time.Second) // a lab scenario leaks a record every 10 ms
			tg, err := process.Attach(cmd.Process.Pid)
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			if err := tg.Stop(); err != nil {
				t.Fatal(err)
			}
			defer tg.Resume()
			opts := walk.Options{Sites: []string{p.site}, TempDir: t.TempDir()}
			direct, err := walk.Read(context.Background(), tg, walk.Held(opts, true))
			if err != nil {
				t.Fatalf("walked in place: %v", err)
			}
			copied, err := walk.Read(context.Background(), tg, walk.Held(opts, false))
			if err != nil {
				t.Fatalf("walked on a copy: %v", err)
			}
			if direct.Copied != 0 || copied.Copied == 0 {
				t.Fatalf("copied %d bytes in place, %d for the copy", direct.Copied, copied.Copied)
			}
			if len(direct.Culprits) == 0 || direct.Culprits[0].Samples == 0 {
				t.Fatalf("nothing sampled of %s: %+v", p.site, direct)
			}
			a, b := comparable(direct), comparable(copied)
			if a != b {
				t.Errorf("walked in place:\n%s\nwalked on the copy:\n%s", a, b)
			}
		})
	}
}

// TestCopyOutlivesTheProcess kills the process right after its copy is taken: the walk reads
// only the copy, and finds what a walk of the process in place found (the process held
// stopped for both); and, the process stopped only for the copy as memdoctor does it, the
// path of its records.
func TestCopyOutlivesTheProcess(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "holders-target")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/memdoctor/testdata/holders-target").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, held := range []bool{true, false} {
		cmd := startProgram(t, bin, "-objects", "50000", "-rate", "4096")
		pid := cmd.Process.Pid
		tg, err := process.Attach(pid)
		if err != nil {
			t.Fatal(err)
		}
		defer tg.Close()
		opts := walk.Options{Sites: []string{"main.build"}, TempDir: t.TempDir()}
		var direct *holders.Result
		if held {
			if err := tg.Stop(); err != nil {
				t.Fatal(err)
			}
			if direct, err = walk.Read(context.Background(), tg, walk.Held(opts, true)); err != nil {
				t.Fatal(err)
			}
			opts = walk.Held(opts, false)
		}
		killed := false
		opts = walk.AfterCopy(opts, func() {
			if held {
				tg.Resume() // a process killed while traced is left for its tracer to reap
			}
			cmd.Process.Kill()
			cmd.Wait()
			_, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid)))
			killed = os.IsNotExist(err)
		})
		res, err := walk.Read(context.Background(), tg, opts)
		if !killed {
			t.Fatalf("process %d still exists after it was killed", pid)
		}
		if err != nil {
			t.Fatalf("held %v: walking the copy of a process killed after the copy: %v", held, err)
		}
		if len(res.Culprits) == 0 || len(res.Culprits[0].Paths) == 0 || res.Culprits[0].Paths[0].Expr != "main.registry[value].payload" || res.Heap.Objects < 50000 {
			t.Fatalf("held %v: want main.registry[value].payload over 50000 objects: %+v", held, res)
		}
		if held {
			if a, b := comparable(direct), comparable(res); a != b {
				t.Errorf("walked in place:\n%s\nwalked on the copy, the process killed:\n%s", a, b)
			}
		}
	}
}

// startProgram starts a program that says on its first line that it is ready (holders-target)
// or leaking (a lab scenario), and waits for that line; the test's cleanup ends it.
func startProgram(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || !strings.Contains(line, "ready") && !strings.Contains(line, "leaking") {
		t.Fatalf("%s: %q, %v", args[0], line, err)
	}
	return cmd
}

// comparable is a result as JSON without what differs between two readings of the same
// memory: their timings and what was copied.
func comparable(r *holders.Result) string {
	c := *r
	c.Timing, c.Copied, c.NotResident, c.Stopped, c.StoppedSeconds, c.EstimatedStop = holders.Timing{}, 0, 0, 0, 0, 0
	b, _ := json.MarshalIndent(c, "", "  ")
	return string(b)
}

// TestCopySkipsUnreadableStacks reads holders-target -guard, a page of two of whose goroutines'
// stacks cannot be read: one made inaccessible with mprotect (its memory map says so), the
// other a guard region made with madvise (Linux 6.13 on; its map shows it readable, and the
// copy finds it cannot read it). The reading goes around them: it finds the registry's path
// as ever, counts what it skipped, and says so in a note.
func TestCopySkipsUnreadableStacks(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "holders-target")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/memdoctor/testdata/holders-target").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-objects", "20000", "-rate", "4096", "-guard")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.Contains(line, "ready") {
		t.Fatalf("holders-target: %q, %v", line, err)
	}
	guarded := 0
	for _, f := range strings.Fields(line)[2:] {
		how, at, _ := strings.Cut(f, "=")
		switch {
		case strings.HasPrefix(at, "0x"):
			guarded++
		case how == "mprotect":
			t.Fatalf("holders-target could not make a page of its stack inaccessible: %s", line)
		default:
			t.Logf("no guard region: %s (this kernel makes none)", f)
		}
	}
	tg, err := process.Attach(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	res, err := walk.Read(context.Background(), tg, walk.Options{Sites: []string{"main.build"}, TempDir: t.TempDir(), MaxStop: -1})
	if err != nil {
		t.Fatalf("reading around the unreadable stacks (%s): %v", strings.TrimSpace(line), err)
	}
	page := uint64(os.Getpagesize())
	if res.SkippedRanges != guarded || res.SkippedBytes != uint64(guarded)*page {
		t.Errorf("skipped %d ranges, %d bytes; want the %d guarded pages (%s)", res.SkippedRanges, res.SkippedBytes, guarded, strings.TrimSpace(line))
	}
	what := "stack ranges"
	if guarded == 1 {
		what = "stack range"
	}
	want := fmt.Sprintf("%d %s (%d.0 KiB) could not be read while the process was stopped: paths through them are missing", guarded, what, guarded*int(page)>>10)
	if !slices.Contains(res.Notes, want) {
		t.Errorf("notes %q\nwant %q", res.Notes, want)
	}
	if len(res.Culprits) == 0 || len(res.Culprits[0].Paths) == 0 || res.Culprits[0].Paths[0].Expr != "main.registry[value].payload" {
		t.Errorf("want main.registry[value].payload: %+v", res.Culprits)
	}
}

// TestOutermostFrameNamesAHandedDownObject reads testdata/handdown, whose goroutine holds its
// server in two frames (serve, and handle, which serve called and which waits): the records
// are named from the outermost, serve's s, the frame that holds the server whichever call the
// goroutine is in when the process is read; never from the call it happens to be in. With
// -request, a second goroutine holds the server too (a request's handler): the records are
// named from the outermost frame of the goroutine with the lowest id, serve's or the
// request's (the runtime numbers goroutines in batches per P: started from two Ps, the request
// was numbered first in a CI run), never handle's, and the same at every reading.
func TestOutermostFrameNamesAHandedDownObject(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "handdown")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/handdown").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	t.Run("handdown", func(t *testing.T) {
		cmd := startProgram(t, bin)
		namedFrom(t, cmd.Process.Pid, "main.(*server).serve.s.recent[i]")
	})
	t.Run("handdown -request", func(t *testing.T) {
		cmd := startProgram(t, bin, "-request")
		first := namedFrom(t, cmd.Process.Pid, "main.(*server).serve.s.recent[i]", "main.(*server).request.s.recent[i]")
		if again := namedFrom(t, cmd.Process.Pid, first); again != first {
			t.Errorf("read again, the records are named %s, first %s", again, first)
		}
	})
}

// TestGlobalNamesWhatAFrameAlsoHolds reads testdata/globalframe, whose records a package
// variable reaches (defaultRegistry.vecs[value].series[value].buckets) and, at every reading, a
// goroutine's frame too by a shorter way ((*vec).with.v.series[value].buckets): they are named
// from the package variable, which holds them whatever the goroutines do, not from the call a
// goroutine happens to be in. What to cut is the package variable's chain. With -send, events
// only a waiting goroutine's frame holds (in a full channel it waits to send to) are still
// named from that frame, not through the runtime's package variables (runtime.allgs), which
// reach them only while it waits.
func TestGlobalNamesWhatAFrameAlsoHolds(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "globalframe")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/globalframe").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := startProgram(t, bin, "-send")
	tg, err := process.Attach(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	res, err := walk.Read(context.Background(), tg, walk.Options{Sites: []string{"main.newBuckets", "main.newEvent"}, TempDir: t.TempDir(), MaxStop: -1})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct{ root, path, cut string }{
		"main.newBuckets": {"global", "main.defaultRegistry.vecs[value].series[value].buckets", "main.defaultRegistry.vecs[value].series"},
		"main.newEvent":   {"goroutine", "main.sendEvents.ch.buf[i]", "main.sendEvents.ch"},
	}
	if len(res.Culprits) != len(want) {
		t.Fatalf("want %d culprits, got %+v", len(want), res.Culprits)
	}
	for _, c := range res.Culprits {
		w, ok := want[c.Site]
		if !ok || len(c.Paths) == 0 {
			t.Errorf("culprit %s: unexpected, or without a path: %+v", c.Site, c)
			continue
		}
		if p := c.Paths[0]; p.Expr != w.path || p.Root.Kind != w.root || p.Share < 0.9 {
			t.Errorf("%s: want all its records held by %s (a %s root), got %s (%s, %.0f%%)", c.Site, w.path, w.root, p.Expr, p.Root.Kind, 100*p.Share)
		}
		if len(c.Cuts) == 0 || c.Cuts[0].Expr != w.cut {
			t.Errorf("%s: want it cut at %s, got %+v", c.Site, w.cut, c.Cuts)
		}
	}
}

// namedFrom reads handdown's process pid: its records must be named as one of want, from a
// goroutine's frame. It returns the name.
func namedFrom(t *testing.T, pid int, want ...string) string {
	t.Helper()
	tg, err := process.Attach(pid)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	res, err := walk.Read(context.Background(), tg, walk.Options{Sites: []string{"main.(*server).keep"}, TempDir: t.TempDir(), MaxStop: -1})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Culprits) != 1 || len(res.Culprits[0].Paths) == 0 || !slices.Contains(want, res.Culprits[0].Paths[0].Expr) {
		t.Fatalf("want the records held by one of %q: %+v", want, res.Culprits)
	}
	p := res.Culprits[0].Paths[0]
	if p.Root.Kind != "goroutine" || p.Share < 0.9 {
		t.Errorf("want %s holding all the records from a goroutine's frame: %+v", p.Expr, p)
	}
	return p.Expr
}

// TestReadLeavesTheProcessAsItWas reads holders-target whose heap holds memory that is not
// resident: a buffer of 64 MiB it never touched, and 64 MiB of pointers it used, freed and gave
// back to the system. The reading (its estimate and rate measured while the process runs, the
// copy while it is stopped) makes none of it resident: the process's anonymous memory is the
// same after as before (within 1 MiB, or 1%), and the path is found as ever.
func TestReadLeavesTheProcessAsItWas(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "holders-target")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/memdoctor/testdata/holders-target").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := startProgram(t, bin, "-objects", "20000", "-rate", "4096", "-untouched", "64", "-released", "64")
	pid := cmd.Process.Pid
	before := rsstest.Settled(t, pid)
	tg, err := process.Attach(pid)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	res, err := walk.Read(context.Background(), tg, walk.Options{Sites: []string{"main.build"}, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	rsstest.Check(t, pid, before, "reading its heap")
	t.Logf("copied %d KiB, of which %d KiB not resident", res.Copied>>10, res.NotResident>>10)
	if len(res.Culprits) == 0 || len(res.Culprits[0].Paths) == 0 || res.Culprits[0].Paths[0].Expr != "main.registry[value].payload" {
		t.Errorf("want main.registry[value].payload: %+v", res.Culprits)
	}
}
