package evidence

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/collect/pprofio"
	"github.com/memdoctor/memdoctor/gctrace"
	"github.com/memdoctor/memdoctor/session"
)

// realProfiles holds real profiles of other programs (see PROVENANCE.tsv there).
const realProfiles = "../testdata/profiles"

// TestReadProfileInfo: every real profile's kind comes from its content; what is not about
// memory says what it is.
func TestReadProfileInfo(t *testing.T) {
	for _, c := range []struct {
		file, kind, what string
		goroutines       int64
	}{
		{"loki_heap_4types.pb.gz", session.KindHeap, "heap profile", 0},
		{"allocs_small_req5.pb", session.KindHeap, "heap profile", 0},
		{"gobench_legacy_text.heap", session.KindHeap, "heap profile", 0},
		{"mimir_inuse_space_merged_truncated.pb.gz", session.KindHeap, "heap profile covering 3h0m0s", 0},
		{"loki_alloc_objects_merged_big.pb.gz", session.KindHeap, "heap profile covering 1h0m0s", 0},
		{"k8s_controller_heap_delta.pb.gz", session.KindHeap, "heap profile covering", 0},
		{"node_exporter_goroutine.pb.gz", session.KindGoroutine, "goroutine profile", 37},
		{"goroutine_small_req2.pb", session.KindGoroutine, "goroutine profile", 10},
		{"goroutine_unnamed_sampletype.pb.gz", session.KindGoroutine, "goroutine profile (its sample type unnamed)", 53},
		{"node_exporter_cpu_10s.pb.gz", "", "CPU profile", 0},
		{"../../culprit/testdata/goroutines.debug1.txt", session.KindGoroutine, "goroutine profile (debug=1 text)", -1},
		{"../../culprit/testdata/goroutines.debug2.txt", session.KindGoroutine, "goroutine dump (debug=2 text)", -1},
	} {
		ev := New("profiles", Target{}, Options{})
		in, err := ev.ReadProfileInfo(filepath.Join(realProfiles, c.file))
		if err != nil {
			t.Errorf("%s: %v", c.file, err)
			continue
		}
		if in.Kind != c.kind || !strings.HasPrefix(in.What, c.what) {
			t.Errorf("%s: kind %q (%s), want %q (%s)", c.file, in.Kind, in.What, c.kind, c.what)
		}
		if c.goroutines > 0 && in.Goroutines != c.goroutines || c.goroutines < 0 && in.Goroutines <= 0 {
			t.Errorf("%s: %d goroutines, want %d", c.file, in.Goroutines, c.goroutines)
		}
		if in.Kind == session.KindHeap && !in.HasInuse && !in.HasAlloc && in.Heap.AllocObjects == 0 {
			t.Errorf("%s: a heap profile without totals: %+v", c.file, in)
		}
	}
}

// TestReadProfileInfoTotals: the totals read from the encoding are those of the parsed
// profile, and the time is the profile's own.
func TestReadProfileInfoTotals(t *testing.T) {
	ev := New("profiles", Target{}, Options{})
	path := filepath.Join(realProfiles, "parca_heap_series", "1644509299337903000.pb.gz")
	in, err := ev.ReadProfileInfo(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ev.Profile(Snapshot{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	var want HeapTotal
	for _, s := range p.Sample {
		want.AllocObjects += s.Value[0]
		want.AllocSpace += s.Value[1]
		want.InuseObjects += s.Value[2]
		want.InuseSpace += s.Value[3]
	}
	if in.Heap != want || !in.HasInuse || !in.HasAlloc {
		t.Errorf("totals %+v, want %+v", in.Heap, want)
	}
	if !in.Time.Equal(time.Unix(0, 1644509299337903000)) {
		t.Errorf("time %v", in.Time)
	}
}

// TestReadProfileInfoRefuses: what is not a readable profile is an error, remembered, and not
// named in the notes (the caller says what it skipped); a rule reading it later notes it
// once.
func TestReadProfileInfoRefuses(t *testing.T) {
	dir := t.TempDir()
	var bomb bytes.Buffer
	zw := gzip.NewWriter(&bomb)
	zw.Write(bytes.Repeat([]byte{0}, 4<<20))
	zw.Close()
	files := map[string][]byte{"html": []byte("<html>login</html>"), "bomb.gz": bomb.Bytes(), "truncated": mustRead(t, filepath.Join(realProfiles, "loki_heap_4types.pb.gz"))[:1000]}
	ev := New("profiles", Target{}, Options{MaxProfileBytes: 1 << 20})
	for name, b := range files {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := ev.ReadProfileInfo(path); !errors.Is(err, pprofio.ErrNotProfile) && !errors.Is(err, pprofio.ErrTooLarge) {
			t.Errorf("%s: %v", name, err)
		}
		if _, err := ev.Profile(Snapshot{Path: path}); err == nil {
			t.Errorf("%s parsed", name)
		}
	}
	if n := len(ev.ProfileNotes()); n != 3 {
		t.Errorf("%d notes, want one per file read by a rule: %q", n, ev.ProfileNotes())
	}
}

func mustRead(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestNewWithProfilesAndGC: evidence built with New from snapshots and gctrace cycles gets
// the series a session gets: the live heap from gctrace (more readings) rather than from the
// heap profiles, the allocation counters and goroutine counts from the profiles, the GC
// counters from the cycles.
func TestNewWithProfilesAndGC(t *testing.T) {
	dir := t.TempDir()
	ev := New("profiles", Target{}, Options{})
	for i := range 4 {
		at := t0.Add(time.Duration(i*10) * time.Second)
		path := filepath.Join(dir, "g"+string(rune('0'+i)))
		if err := os.WriteFile(path, goroutineProfile(t, 100*(i+1)), 0o600); err != nil {
			t.Fatal(err)
		}
		ev.AddSnapshot(Snapshot{Kind: session.KindGoroutine, T: at, Path: path})
	}
	for i, name := range []string{"1644509272337470000.pb.gz", "1644509299337903000.pb.gz"} {
		ev.AddSnapshot(Snapshot{Kind: session.KindHeap, T: t0.Add(time.Duration(i*30) * time.Second), Path: filepath.Join(realProfiles, "parca_heap_series", name)})
	}
	for i := range 20 {
		line := "gc " + strconv.Itoa(i+1) + " @" + strconv.Itoa(i*2) + ".000s 1%: 0.1+1.0+0.1 ms clock, 0.2+0.1/1.0/0.5+0.2 ms cpu, 20->22->10 MB, 21 MB goal, 0 MB stacks, 0 MB globals, 2 P"
		c, ok, err := gctrace.ParseLine(line)
		if !ok || err != nil {
			t.Fatal(line, err)
		}
		ev.AddGCCycle(t0.Add(time.Duration(i*2)*time.Second), c)
	}
	ev.Finish(Options{})
	if ev.Live.Src != SourceGCTrace || ev.Live.Len() != 20 {
		t.Errorf("live heap from %v, %d points: gctrace has the most readings", ev.Live.Src, ev.Live.Len())
	}
	if ev.Goroutines.Src != SourceGoroutineProfile || ev.Goroutines.Last().V != 400 {
		t.Errorf("goroutines %v, last %v", ev.Goroutines.Src, ev.Goroutines.Last().V)
	}
	if ev.AllocBytes.Src != SourceHeapProfile || ev.AllocBytes.Len() != 2 {
		t.Errorf("alloc counter %v, %d points", ev.AllocBytes.Src, ev.AllocBytes.Len())
	}
	if ev.GCCycles.Increase() != 20 || ev.GCCPU.Len() < 2 || ev.Pacer.GOMAXPROCS != 2 || ev.Pacer.GOGC != 100 {
		t.Errorf("gc: %v cycles, %d CPU points, pacer %+v", ev.GCCycles.Increase(), ev.GCCPU.Len(), ev.Pacer)
	}
	if ev.GCLines != 20 || ev.Start.Sub(t0).Abs() > time.Millisecond {
		t.Errorf("%d lines, start %v", ev.GCLines, ev.Start)
	}
}

// TestSessionAndNewAgree: the same heap profiles give the same series whether they come
// from a session or are added to evidence built with New: one function reads them.
func TestSessionAndNewAgree(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join(realProfiles, "parca_heap_series", "*.pb.gz"))
	fromSession := newSession(t, session.Manifest{Mode: "watch", Start: t0}, func(w *session.Writer) {
		for i, p := range paths {
			if _, err := w.WriteProfile(session.KindHeap, t0.Add(time.Duration(i*3)*time.Second), "", mustRead(t, p)); err != nil {
				t.Fatal(err)
			}
		}
	})
	ev := New("profiles", Target{}, Options{})
	for i, p := range paths {
		ev.AddSnapshot(Snapshot{Kind: session.KindHeap, T: t0.Add(time.Duration(i*3) * time.Second), Path: p})
	}
	ev.Finish(Options{})
	for _, c := range []struct {
		name string
		a, b Series
		n    int
	}{
		{"live", fromSession.Live, ev.Live, 2}, // 47.8 MB 8 times (no GC in between), then 137 MB twice
		{"alloc bytes", fromSession.AllocBytes, ev.AllocBytes, len(paths)},
		{"alloc objects", fromSession.AllocObjects, ev.AllocObjects, len(paths)},
	} {
		if c.a.Len() != c.n || c.a.Len() != c.b.Len() || c.a.Src != c.b.Src {
			t.Errorf("%s: %d/%d points, %v/%v", c.name, c.a.Len(), c.b.Len(), c.a.Src, c.b.Src)
			continue
		}
		for i := range c.a.Points {
			if c.a.Points[i] != c.b.Points[i] {
				t.Errorf("%s point %d: %+v, %+v", c.name, i, c.a.Points[i], c.b.Points[i])
			}
		}
	}
}

// FuzzReadProfileInfo: whatever a file holds, reading what it is never panics, stays within
// the limits, and agrees with a full parse on the kind and the totals.
func FuzzReadProfileInfo(f *testing.F) {
	for _, name := range []string{"goroutine_small_req2.pb", "allocs_small_req5.pb", "gobench_legacy_text.heap", "node_exporter_goroutine.pb.gz", "node_exporter_cpu_10s.pb.gz"} {
		f.Add(mustRead(f, filepath.Join(realProfiles, name)))
	}
	f.Add([]byte("goroutine profile: total 2\n2 @ 0x1 0x2\n#\t0x1\tmain.f+0x1\t/x.go:3\n"))
	f.Add([]byte("goroutine 7 [chan send, 3 minutes]:\nmain.f()\n\t/x.go:3 +0x1\ncreated by main.g in goroutine 1\n\t/x.go:9 +0x2\n"))
	f.Add([]byte("heap profile: 1: 2 [3: 4] @ heap/1048576\n1: 2 [3: 4] @ 0x1\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		tmp, err := os.CreateTemp(dir, "p")
		if err != nil {
			t.Fatal(err)
		}
		path := tmp.Name()
		defer os.Remove(path)
		_, err = tmp.Write(data)
		if cerr := tmp.Close(); err != nil || cerr != nil {
			t.Fatal(err, cerr)
		}
		ev := New("profiles", Target{}, Options{MaxProfileBytes: 1 << 20})
		in, err := ev.ReadProfileInfo(path)
		if err != nil {
			return
		}
		if in.Kind != "" && in.Kind != session.KindHeap && in.Kind != session.KindGoroutine && in.Kind != KindGoroutineLeak || in.What == "" {
			t.Fatalf("kind %q, what %q", in.Kind, in.What)
		}
		p, err := ev.Profile(Snapshot{Path: path})
		if err != nil || in.Format == pprofio.FormatGoroutineText || in.Kind != session.KindHeap {
			return
		}
		var inuse int64
		idx := -1
		for i, st := range p.SampleType {
			if st.Type == "inuse_space" {
				idx = i
			}
		}
		if idx < 0 {
			return
		}
		for _, s := range p.Sample {
			inuse += s.Value[idx]
		}
		if inuse != in.Heap.InuseSpace {
			t.Errorf("inuse_space %d, parsed %d", in.Heap.InuseSpace, inuse)
		}
	})
}
