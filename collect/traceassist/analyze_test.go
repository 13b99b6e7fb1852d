package traceassist

import (
	"bytes"
	"runtime"
	"runtime/debug"
	"runtime/trace"
	"strings"
	"sync"
	"testing"
	"time"
)

type node struct {
	next *node
	_    [6]*int // pointer slots the GC scans, never set
}

var live []*node

// hardAllocator allocates small pointerful objects as fast as it can until stop: while the
// GC marks a large pointerful live heap, it is made to assist.
//
//go:noinline
func hardAllocator(stop <-chan struct{}) {
	var keep *node
	for i := 0; ; i++ {
		if i%1024 == 0 {
			select {
			case <-stop:
				return
			default:
			}
		}
		n := &node{next: keep}
		if i%64 == 0 {
			keep = n // some survive a while, so marking has work
		}
		if i%65536 == 0 {
			keep = nil
		}
	}
}

// captureTrace records a flight-recorder snapshot while two goroutines allocate hard against
// a 48 MiB pointer-rich live heap with GOGC=25.
func captureTrace(t testing.TB, d time.Duration) []byte {
	t.Helper()
	defer debug.SetGCPercent(debug.SetGCPercent(25))
	live = make([]*node, 0, 1<<20)
	for range 1 << 20 { // ~48 MiB of nodes, all pointers for the GC to follow
		live = append(live, &node{})
	}
	defer func() { live = nil }()
	fr := trace.NewFlightRecorder(trace.FlightRecorderConfig{MinAge: 10 * time.Second, MaxBytes: 32 << 20})
	if err := fr.Start(); err != nil {
		t.Fatal(err)
	}
	defer fr.Stop()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() { hardAllocator(stop) })
	}
	time.Sleep(d)
	close(stop)
	wg.Wait()
	var buf bytes.Buffer
	if _, err := fr.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	runtime.KeepAlive(live)
	return buf.Bytes()
}

func TestAnalyzeRealTrace(t *testing.T) {
	var s *Summary
	for attempt := 0; attempt < 5 && (s == nil || s.AssistTotal == 0); attempt++ {
		var err error
		s, err = Analyze(bytes.NewReader(captureTrace(t, 500*time.Millisecond)))
		if err != nil {
			t.Fatal(err)
		}
	}
	if s.AssistTotal == 0 || len(s.ByGoroutine) == 0 {
		t.Fatalf("no mark assists in five traces of hard allocation: %+v", s)
	}
	if s.GCCycles == 0 || s.GCMark <= 0 || s.WallTime < 400*time.Millisecond || s.WallTime > time.Minute {
		t.Errorf("gc cycles %d, mark %v, wall %v", s.GCCycles, s.GCMark, s.WallTime)
	}
	if s.Start.IsZero() || !s.End.After(s.Start) || time.Since(s.End) > time.Minute || s.End.Sub(s.Start) != s.WallTime {
		t.Errorf("window %v .. %v (wall %v)", s.Start, s.End, s.WallTime)
	}
	var sum time.Duration
	for _, g := range s.ByGoroutine {
		sum += g.Assist
		if g.Assist <= 0 || g.Assists == 0 || g.Function == "" {
			t.Errorf("goroutine %+v", g)
		}
	}
	if sum != s.AssistTotal {
		t.Errorf("per-goroutine assists add up to %v, total %v", sum, s.AssistTotal)
	}
	// The allocators pay most: both are hardAllocator goroutines created by captureTrace.
	top := s.ByGoroutine[0]
	if !strings.Contains(top.Function, ".captureTrace.func") && !strings.HasSuffix(top.Function, ".hardAllocator") || !strings.HasSuffix(top.CreatedBy, ".captureTrace") {
		t.Errorf("the top assisting goroutine runs %s (created by %s, site %s), want the hardAllocator goroutines:\n%+v", top.Function, top.CreatedBy, top.AssistSite, s.ByGoroutine)
	}
	if !strings.HasSuffix(top.AssistSite, ".hardAllocator") {
		t.Errorf("the top assist site is %s, want hardAllocator", top.AssistSite)
	}
	var alloc time.Duration
	for _, g := range s.ByGoroutine {
		if strings.HasSuffix(g.AssistSite, ".hardAllocator") {
			alloc += g.Assist
		}
	}
	if alloc < s.AssistTotal/2 {
		t.Errorf("the allocators paid %v of %v", alloc, s.AssistTotal)
	}
}

func TestAnalyzeRejectsNonTraces(t *testing.T) {
	for _, in := range []string{"", "not a trace", "go 1.26 trace\x00\x00\x00"} {
		if _, err := Analyze(strings.NewReader(in)); err == nil {
			t.Errorf("Analyze(%q) accepted it", in)
		}
	}
}

func TestAnalyzeTruncated(t *testing.T) {
	b := captureTrace(t, 100*time.Millisecond)
	for _, cut := range []int{len(b) / 3, len(b) * 2 / 3, len(b) - 1} {
		if _, err := Analyze(bytes.NewReader(b[:cut])); err == nil {
			t.Errorf("a trace cut at %d of %d bytes read without an error", cut, len(b))
		}
	}
	if s, err := Analyze(bytes.NewReader(b)); err != nil || s.WallTime <= 0 {
		t.Errorf("the whole trace: %+v, %v", s, err)
	}
}

// FuzzAnalyze's seeds are the heads of a real trace (testdata/fuzz/FuzzAnalyze, captured by
// captureTrace): fixed, so that every run starts from the same corpus, and small, so that the
// fuzzer mutates and minimises quickly.
func FuzzAnalyze(f *testing.F) {
	f.Add([]byte("go 1.26 trace\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Analyze(bytes.NewReader(data))
		if err == nil && s == nil {
			t.Fatal("no summary and no error")
		}
		if s != nil && s.AssistTotal < 0 {
			t.Fatalf("negative assist total %v", s.AssistTotal)
		}
	})
}
