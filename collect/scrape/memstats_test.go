package scrape

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
)

var update = flag.Bool("update", false, "recapture testdata/heap_debug1_go1.26.txt from this process and rewrite the golden files")

const (
	heapTextFile   = "testdata/heap_debug1_go1.26.txt"
	heapGoldenFile = "testdata/heap_debug1_go1.26.memstats.json"
	legacyHeapFile = "../../testdata/profiles/gobench_legacy_text.heap"
)

// captureHeapText fetches heap?debug=1 from this process through the real
// net/http/pprof handler.
func captureHeapText(t *testing.T) []byte {
	t.Helper()
	if !strings.HasPrefix(runtime.Version(), "go1.26") {
		t.Fatalf("recapturing %s needs Go 1.26, this is %s", heapTextFile, runtime.Version())
	}
	heapTestSink = allocateForHeapTest(8, 1<<20)
	runtime.GC()
	runtime.GC()
	defer func() { heapTestSink = nil }()
	srv := newPprofServer(t, "")
	resp, err := http.Get(srv.URL + "/debug/pprof/heap?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET heap?debug=1: %d %v", resp.StatusCode, err)
	}
	return b
}

func TestParseMemStatsGolden(t *testing.T) {
	if *update {
		text := captureHeapText(t)
		ms, err := ParseMemStats(bytes.NewReader(text))
		if err != nil {
			t.Fatal(err)
		}
		js, _ := json.MarshalIndent(ms, "", "  ")
		writeFile(t, heapTextFile, text)
		writeFile(t, heapGoldenFile, append(js, '\n'))
	}
	text := readFile(t, heapTextFile)
	var want MemStats
	if err := json.Unmarshal(readFile(t, heapGoldenFile), &want); err != nil {
		t.Fatal(err)
	}
	got, err := ParseMemStats(bytes.NewReader(text))
	if err != nil {
		t.Fatalf("ParseMemStats(%s): %v", heapTextFile, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseMemStats(%s) =\n%+v\nwant\n%+v", heapTextFile, got, want)
	}
	// The golden values were printed by runtime.ReadMemStats: they obey its
	// identities whoever wrote the golden file.
	checkMemStatsInvariants(t, got)
	if got.MaxRSS == 0 || got.NumGC == 0 {
		t.Errorf("MaxRSS %d, NumGC %d: the capture should have both", got.MaxRSS, got.NumGC)
	}

	// Byte-at-a-time and in one block: the same result.
	slow, err := ParseMemStats(iotest.OneByteReader(bytes.NewReader(text)))
	if err != nil || !reflect.DeepEqual(slow, want) {
		t.Errorf("ParseMemStats one byte at a time differs: %v", err)
	}
	block := text[bytes.Index(text, []byte("\n# runtime.MemStats")):]
	if only, err := ParseMemStats(bytes.NewReader(block)); err != nil || !reflect.DeepEqual(only, want) {
		t.Errorf("ParseMemStats of the block alone differs: %v", err)
	}

	first, _, _ := bytes.Cut(text, []byte("\n"))
	h, err := ParseHeapProfileHeader(string(first))
	if err != nil {
		t.Fatal(err)
	}
	if h.MemProfileRate != 512*1024 || h.InUseBytes <= 0 || h.AllocBytes < h.InUseBytes || h.AllocObjects < h.InUseObjects {
		t.Errorf("header %q parsed to %+v", first, h)
	}
}

func readFile(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatalf("%v (run go test -run Golden -update to create it)", err)
	}
	return b
}

func writeFile(t *testing.T, name string, b []byte) {
	t.Helper()
	if err := os.WriteFile(name, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeMemStatsLikeRuntime prints the MemStats block exactly as
// runtime/pprof's writeHeapInternal does (Go 1.26).
func writeMemStatsLikeRuntime(w io.Writer, s *runtime.MemStats, maxRSS uint64) {
	fmt.Fprintf(w, "\n# runtime.MemStats\n")
	fmt.Fprintf(w, "# Alloc = %d\n", s.Alloc)
	fmt.Fprintf(w, "# TotalAlloc = %d\n", s.TotalAlloc)
	fmt.Fprintf(w, "# Sys = %d\n", s.Sys)
	fmt.Fprintf(w, "# Lookups = %d\n", s.Lookups)
	fmt.Fprintf(w, "# Mallocs = %d\n", s.Mallocs)
	fmt.Fprintf(w, "# Frees = %d\n", s.Frees)
	fmt.Fprintf(w, "# HeapAlloc = %d\n", s.HeapAlloc)
	fmt.Fprintf(w, "# HeapSys = %d\n", s.HeapSys)
	fmt.Fprintf(w, "# HeapIdle = %d\n", s.HeapIdle)
	fmt.Fprintf(w, "# HeapInuse = %d\n", s.HeapInuse)
	fmt.Fprintf(w, "# HeapReleased = %d\n", s.HeapReleased)
	fmt.Fprintf(w, "# HeapObjects = %d\n", s.HeapObjects)
	fmt.Fprintf(w, "# Stack = %d / %d\n", s.StackInuse, s.StackSys)
	fmt.Fprintf(w, "# MSpan = %d / %d\n", s.MSpanInuse, s.MSpanSys)
	fmt.Fprintf(w, "# MCache = %d / %d\n", s.MCacheInuse, s.MCacheSys)
	fmt.Fprintf(w, "# BuckHashSys = %d\n", s.BuckHashSys)
	fmt.Fprintf(w, "# GCSys = %d\n", s.GCSys)
	fmt.Fprintf(w, "# OtherSys = %d\n", s.OtherSys)
	fmt.Fprintf(w, "# NextGC = %d\n", s.NextGC)
	fmt.Fprintf(w, "# LastGC = %d\n", s.LastGC)
	fmt.Fprintf(w, "# PauseNs = %d\n", s.PauseNs)
	fmt.Fprintf(w, "# PauseEnd = %d\n", s.PauseEnd)
	fmt.Fprintf(w, "# NumGC = %d\n", s.NumGC)
	fmt.Fprintf(w, "# NumForcedGC = %d\n", s.NumForcedGC)
	fmt.Fprintf(w, "# GCCPUFraction = %v\n", s.GCCPUFraction)
	fmt.Fprintf(w, "# DebugGC = %v\n", s.DebugGC)
	fmt.Fprintf(w, "# MaxRSS = %d\n", maxRSS)
}

// TestParseMemStatsRoundTrip prints a real runtime.MemStats the way the
// runtime does and checks every field comes back.
func TestParseMemStatsRoundTrip(t *testing.T) {
	var s runtime.MemStats
	runtime.ReadMemStats(&s) // a test, not a hot path
	s.DebugGC = true
	s.GCCPUFraction = 1.2345e-05
	s.PauseNs[3] = 1<<64 - 1
	var buf bytes.Buffer
	buf.WriteString("heap profile: 1: 2 [3: 4] @ heap/1048576\n1: 2 [3: 4] @ 0x1\n#\t0x1\tmain.f+0x1\t/x.go:1\n")
	writeMemStatsLikeRuntime(&buf, &s, 12345678)
	got, err := ParseMemStats(&buf)
	if err != nil {
		t.Fatal(err)
	}
	want := MemStats{
		Alloc: s.Alloc, TotalAlloc: s.TotalAlloc, Sys: s.Sys, Lookups: s.Lookups, Mallocs: s.Mallocs, Frees: s.Frees,
		HeapAlloc: s.HeapAlloc, HeapSys: s.HeapSys, HeapIdle: s.HeapIdle, HeapInuse: s.HeapInuse,
		HeapReleased: s.HeapReleased, HeapObjects: s.HeapObjects,
		StackInuse: s.StackInuse, StackSys: s.StackSys, MSpanInuse: s.MSpanInuse, MSpanSys: s.MSpanSys,
		MCacheInuse: s.MCacheInuse, MCacheSys: s.MCacheSys,
		BuckHashSys: s.BuckHashSys, GCSys: s.GCSys, OtherSys: s.OtherSys, NextGC: s.NextGC, LastGC: s.LastGC,
		PauseNs: s.PauseNs[:], PauseEnd: s.PauseEnd[:], NumGC: s.NumGC, NumForcedGC: s.NumForcedGC,
		GCCPUFraction: s.GCCPUFraction, DebugGC: s.DebugGC, MaxRSS: 12345678,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, want)
	}
}

func TestParseMemStatsCases(t *testing.T) {
	long := "#\t0x1\t" + strings.Repeat("x", 200<<10) + "\n"
	for _, tc := range []struct {
		name, in string
		want     MemStats
		err      string // "" for success
	}{
		{name: "block alone", in: "# Alloc = 7\n# Sys = 9\n", want: MemStats{Alloc: 7, Sys: 9}},
		{name: "no final newline", in: "# Alloc = 7\n# Sys = 9", want: MemStats{Alloc: 7, Sys: 9}},
		{name: "CRLF", in: "# Alloc = 7\r\n# Stack = 1 / 2\r\n", want: MemStats{Alloc: 7, StackInuse: 1, StackSys: 2}},
		{name: "unknown fields ignored", in: "# EnableGC = true\n# Alloc = 7\n# Future = [x]\n", want: MemStats{Alloc: 7}},
		{name: "old Go: no MaxRSS, no NumForcedGC", in: "# Alloc = 1\n# NumGC = 4\n# DebugGC = false\n", want: MemStats{Alloc: 1, NumGC: 4}},
		{name: "last wins", in: "# Alloc = 1\n# Alloc = 2\n", want: MemStats{Alloc: 2}},
		{name: "over-long line skipped", in: long + "# Alloc = 3\n" + long, want: MemStats{Alloc: 3}},
		{name: "short ring", in: "# Alloc = 1\n# PauseNs = [5 6]\n# PauseEnd = []\n", want: MemStats{Alloc: 1, PauseNs: []uint64{5, 6}, PauseEnd: []uint64{}}},
		{name: "float forms", in: "# Alloc = 1\n# GCCPUFraction = 2.5e-06\n", want: MemStats{Alloc: 1, GCCPUFraction: 2.5e-06}},
		{name: "records with # lines", in: "heap profile: 0: 0 [0: 0] @ heap/1048576\n0: 0 [1: 8] @ 0x1\n#\t0x1\tmain.f = 3+0x1\t/a.go:1\n\n# Alloc = 4\n", want: MemStats{Alloc: 4}},
		{name: "empty", in: "", err: "no runtime.MemStats block"},
		{name: "HTML", in: "<html><body># Alloc = 1</body></html>", err: "no runtime.MemStats block"},
		{name: "legacy without MemStats", in: "heap profile: 1: 2 [3: 4] @ heap/1048576\n", err: "no runtime.MemStats block"},
		{name: "bad number", in: "# Alloc = 12x\n", err: "line 1: # Alloc = 12x: invalid syntax"},
		{name: "negative", in: "# Alloc = 1\n# Sys = -1\n", err: "line 2"},
		{name: "NumGC overflow", in: "# Alloc = 1\n# NumGC = 4294967296\n", err: "value out of range"},
		{name: "bad pair", in: "# Alloc = 1\n# Stack = 12\n", err: `want "inuse / sys"`},
		{name: "bad ring", in: "# Alloc = 1\n# PauseNs = 1 2\n", err: `want "[n n ...]"`},
		{name: "ring too long", in: "# Alloc = 1\n# PauseNs = [" + strings.Repeat("1 ", 257) + "]\n", err: "more than 256 numbers"},
		{name: "NaN", in: "# Alloc = 1\n# GCCPUFraction = NaN\n", err: "not a finite number"},
		{name: "bad bool", in: "# Alloc = 1\n# DebugGC = maybe\n", err: "DebugGC"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseMemStats(strings.NewReader(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error = %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestParseMemStatsReadError(t *testing.T) {
	r := io.MultiReader(strings.NewReader("# Alloc = 1\n"), iotest.ErrReader(errors.New("connection reset")))
	if _, err := ParseMemStats(r); err == nil || !strings.Contains(err.Error(), "connection reset") {
		t.Fatalf("error = %v, want the read error", err)
	}
}

// The legacy text heap profile from google/pprof's testdata has no MemStats
// block (it predates it or was trimmed); its header still parses.
func TestLegacyTextHeap(t *testing.T) {
	b, err := os.ReadFile(filepath.FromSlash(legacyHeapFile))
	if err != nil {
		t.Fatal(err)
	}
	ms, err := ParseMemStats(bytes.NewReader(b))
	if bytes.Contains(b, []byte("\n# Alloc = ")) {
		if err != nil {
			t.Fatalf("ParseMemStats: %v", err)
		}
		t.Logf("legacy MemStats: %+v", ms)
	} else if !errors.Is(err, ErrNoMemStats) {
		t.Fatalf("ParseMemStats of a page without MemStats = %v, want ErrNoMemStats", err)
	}
	first, _, _ := bytes.Cut(b, []byte("\n"))
	h, err := ParseHeapProfileHeader(string(first))
	if err != nil {
		t.Fatal(err)
	}
	want := HeapProfileHeader{InUseObjects: 13, InUseBytes: 1595680, AllocObjects: 47130736, AllocBytes: 2584596557304, MemProfileRate: 524288}
	if h != want {
		t.Errorf("header = %+v, want %+v", h, want)
	}
}

func TestParseHeapProfileHeader(t *testing.T) {
	for line, want := range map[string]HeapProfileHeader{
		"heap profile: 18: 4718592 [18: 4718593] @ heap/1048576":  {18, 4718592, 18, 4718593, 524288},
		"heap profile: 0: 0 [0: 1] @ heap/2":                      {0, 0, 0, 1, 1},
		"heap profile: 1: 2 [3: 4] @ heap_v2/524288\n":            {1, 2, 3, 4, 524288},
		"  heap profile:   5:   6 [  7:   8 ] @   heap/1048576  ": {5, 6, 7, 8, 524288},
	} {
		got, err := ParseHeapProfileHeader(line)
		if err != nil || got != want {
			t.Errorf("ParseHeapProfileHeader(%q) = %+v, %v; want %+v", line, got, err, want)
		}
	}
	for _, line := range []string{
		"", "goroutine profile: total 5", "heap profile: 1: 2 [3: 4]", "heap profile: 1 2 [3: 4] @ heap/2",
		"heap profile: 1: 2 3: 4 @ heap/2", "heap profile: 1: 2 [3: 4] @ cpu/2", "heap profile: 1: x [3: 4] @ heap/2",
		"heap profile: 1: 2 [3: 4] @ heap/-2",
	} {
		if _, err := ParseHeapProfileHeader(line); err == nil || !strings.Contains(err.Error(), "want like") {
			t.Errorf("ParseHeapProfileHeader(%q) error = %v", line, err)
		}
	}
}
