package diagnose

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/session"
)

// floodSession is the lab's subscriber-flood (a push gateway of 100,000 goroutines leaking
// about 2,000 more a second) watched through its pprof endpoint for 65 s, read from its memory
// (testdata/recorded/subscriber-flood-watch-pprof). Its heap profiles hold the leaked
// goroutines' g structs, allocated by runtime.malg on the system stack (no frame of the
// program's in the stack: runtime.mallocgc <- runtime.newobject <- runtime.malg <-
// runtime.newproc1 <- runtime.newproc.func1 <- runtime.systemstack), the runtime's list of
// all goroutines (runtime.allgadd), and the records of memdoctor's own goroutine profiles
// (runtime.saveg). The watch ends with the lab's shutdown: its last 3 s see the goroutines
// end (213,336 -> 333) as the lab closes every channel.
const floodSession = "testdata/recorded/subscriber-flood-watch-pprof"

// TestNoFindingNamesTheRuntime: a heap-leak's title (or any finding's named site) never names
// a runtime function. Before the fix the heap-leak of the whole session said "the heap
// retained by runtime.mallocgc grows 61.1 MiB/min": the site of every stack of the runtime
// alone was its leaf, the allocator, and the goroutines' own g structs were followed as a
// heap site of their own.
func TestNoFindingNamesTheRuntime(t *testing.T) {
	s, err := session.Open(floodSession)
	if err != nil {
		t.Fatal(err)
	}
	for _, until := range []time.Duration{45 * time.Second, time.Minute, 0} {
		opts := evidence.Options{}
		if until > 0 {
			opts.Until = s.Manifest.Start.Add(until)
		}
		d, _, err := DiagnoseSession(s, opts, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range d.Findings {
			if strings.Contains(f.Title, "runtime.") || strings.Contains(f.Detail, "allocated at runtime.") {
				t.Errorf("window %s: %s names the runtime: %s\n%s", until, f.Kind, f.Title, f.Detail)
			}
			for _, c := range f.Culprits {
				if strings.HasPrefix(c.Function, "runtime.") {
					t.Errorf("window %s: %s's culprit is %s", until, f.Kind, c.Function)
				}
			}
		}
	}
}

// TestGoroutineCountAloneIsALeak: the same watch with its goroutine counts as the pprof index
// page gives them (every second, as watch reads them when the service's memory cannot be
// read) and no goroutine profile (a service this large leaves them unanswered): the count's
// climb, tens of thousands a minute, is a goroutine leak, and the finding says that which
// code starts them is not known, and why.
func TestGoroutineCountAloneIsALeak(t *testing.T) {
	dir := indexOnly(t, floodSession, time.Date(2026, 12, 2, 4, 43, 21, 500e6, time.UTC))
	leak, _ := floodVerdict(t, dir, 0)
	if leak == nil || leak.Severity.Rank() < Warning.Rank() || leak.Confidence != Confirmed {
		t.Fatalf("no confirmed goroutine-leak warning from the index page's counts: %+v", leak)
	}
	if len(leak.Culprits) != 0 {
		t.Errorf("culprits named without a goroutine profile: %+v", leak.Culprits)
	}
	if !strings.Contains(leak.Detail, "is not known: no goroutine profile was read") {
		t.Errorf("the finding does not say its code is unknown, and why: %s", leak.Detail)
	}
}

// indexOnly copies a recorded session into a temporary directory with its goroutine counts
// moved to the pprof index page's and its goroutine profiles left out, up to end.
func indexOnly(t *testing.T, src string, end time.Time) string {
	t.Helper()
	dst := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dst, "profiles"), 0o755); err != nil {
		t.Fatal(err)
	}
	copyFile(t, filepath.Join(src, "manifest.json"), filepath.Join(dst, "manifest.json"))
	heaps, err := filepath.Glob(filepath.Join(src, "profiles", "heap-*"))
	if err != nil || len(heaps) == 0 {
		t.Fatalf("no heap profiles in %s: %v", src, err)
	}
	for _, h := range heaps {
		copyFile(t, h, filepath.Join(dst, "profiles", filepath.Base(h)))
	}
	in, err := os.Open(filepath.Join(src, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(filepath.Join(dst, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	sc := bufio.NewScanner(in)
	sc.Buffer(nil, 1<<20)
	enc := json.NewEncoder(out)
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatal(err)
		}
		at, err := time.Parse(time.RFC3339Nano, line["t"].(string))
		if err != nil {
			t.Fatal(err)
		}
		if at.After(end) {
			continue
		}
		if g, ok := line["go"].(map[string]any); ok {
			if n, ok := g["goroutines"]; ok {
				delete(g, "goroutines")
				line["pprof"] = map[string]any{"goroutines": n, "goroutineleak": -1}
			}
		}
		if err := enc.Encode(line); err != nil {
			t.Fatal(err)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return dst
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// floodVerdict diagnoses a recorded session of the subscriber-flood over its first window
// (all of it when 0) and returns its goroutine-leak and heap-leak findings (nil when absent).
func floodVerdict(t *testing.T, dir string, window time.Duration) (leak, heap *Finding) {
	t.Helper()
	s, err := session.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	opts := evidence.Options{Source: true}
	if window > 0 {
		opts.Until = s.Manifest.Start.Add(window)
	}
	d, _, err := DiagnoseSession(s, opts, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range d.Findings {
		switch f := &d.Findings[i]; f.Kind {
		case KindGoroutineLeak:
			leak = f
		case KindHeapLeak:
			heap = f
		}
	}
	return leak, heap
}

const deliver = "github.com/memdoctor/memdoctor/lab.(*pushGateway).deliver"

// TestFloodFromProfilesAlone: the subscriber-flood's heap and goroutine profiles alone, as
// memdoctor run took them (testdata/recorded/subscriber-flood-profiles): six heap profiles,
// and four goroutine profiles in 48 s (each a long request at 200,000 goroutines), every one
// higher (114,177 -> 212,267). Four counts are too few to confirm a rise; the live heap,
// confirmed over its six readings (80.6 -> 182.2 MiB), grew by what the new goroutines hold
// (1.1 KiB each), which confirms it. Before: a heap-leak warning, not attributed to the
// goroutines, and the goroutine leak only suspected.
func TestFloodFromProfilesAlone(t *testing.T) {
	leak, heap := floodVerdict(t, "testdata/recorded/subscriber-flood-profiles", time.Minute)
	if leak == nil || leak.Confidence != Confirmed || leak.Severity.Rank() < Warning.Rank() {
		t.Fatalf("goroutine-leak %+v, want a confirmed warning", leak)
	}
	if len(leak.Culprits) == 0 || leak.Culprits[0].Function != deliver {
		t.Errorf("goroutine-leak culprits %+v, want %s first", leak.Culprits, deliver)
	}
	if heap != nil && (heap.Severity.Rank() >= Warning.Rank() || !strings.Contains(heap.Title, "with the leaked goroutines")) {
		t.Errorf("heap-leak %s: %s, want it said as the goroutines'", heap.Severity, heap.Title)
	}
}

// TestFloodOnABusyMachine: the subscriber-flood under memdoctor run on a loaded machine
// (testdata/recorded/subscriber-flood-busy-run): the service leaked more slowly, 109,590 ->
// 140,752 goroutines over 38 s (ten readings, every one higher), 28% of its start, short of
// the 30% a small service's rise must reach; 10,000 more goroutines matter whatever the start.
// At 45 s one goroutine profile had been read: its pile-up names the culprit. Before: a
// suspected goroutine leak, "watch 1.9 s more", at 45 s and at 60 s.
func TestFloodOnABusyMachine(t *testing.T) {
	for _, w := range []time.Duration{45 * time.Second, time.Minute} {
		leak, _ := floodVerdict(t, "testdata/recorded/subscriber-flood-busy-run", w)
		if leak == nil || leak.Confidence != Confirmed || leak.Severity.Rank() < Warning.Rank() {
			t.Fatalf("%s: goroutine-leak %+v, want a confirmed warning", w, leak)
		}
		if len(leak.Culprits) == 0 || leak.Culprits[0].Function != deliver {
			t.Errorf("%s: goroutine-leak culprits %+v, want %s first", w, leak.Culprits, deliver)
		}
	}
}

// TestShutdownIsNoRecovery: the whole watch of floodSession ends with the lab's shutdown:
// 213,336 -> 333 goroutines in its last 3 s of readings, then nothing for 19 s (the service
// gone). Judged over all of it, the goroutines "came back" and there was no goroutine-leak
// finding at all; the shutdown is said, and the goroutines judged up to it.
func TestShutdownIsNoRecovery(t *testing.T) {
	leak, _ := floodVerdict(t, floodSession, 0)
	if leak == nil || leak.Confidence != Confirmed || leak.Severity.Rank() < Warning.Rank() {
		t.Fatalf("goroutine-leak %+v, want a confirmed warning", leak)
	}
	if len(leak.Culprits) == 0 || leak.Culprits[0].Function != deliver {
		t.Errorf("goroutine-leak culprits %+v, want %s first", leak.Culprits, deliver)
	}
	if !strings.Contains(leak.Detail, "fell from 213336 to 333") {
		t.Errorf("the shutdown is not said: %s", leak.Detail)
	}
}
