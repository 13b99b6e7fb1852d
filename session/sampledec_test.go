package session

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

// randomSample fills every field the writer can write, with values that exercise the number
// forms encoding/json produces (large, fractional, exponents).
func randomSample(r *rand.Rand) Sample {
	u := func() uint64 {
		switch r.IntN(4) {
		case 0:
			return 0
		case 1:
			return math.MaxUint64 - r.Uint64N(10)
		}
		return r.Uint64N(1 << 40)
	}
	f := func() float64 {
		switch r.IntN(4) {
		case 0:
			return 0
		case 1:
			return r.Float64() * 1e-9
		case 2:
			return r.Float64() * 1e25
		}
		return float64(r.IntN(1000)) / 7
	}
	i := func() int { return r.IntN(1<<20) - 1 }
	s := Sample{Time: time.Unix(r.Int64N(4e9), r.Int64N(1e9)).UTC()}
	if r.IntN(2) == 0 {
		s.Proc = &Proc{PID: i(), RSSBytes: u(), RSSAnonBytes: u(), RSSFileBytes: u(), RSSShmemBytes: u(), HWMBytes: u(),
			LazyFreeBytes: u(), Threads: i(), CPUSeconds: f(), TreeRSSBytes: u(), TreeProcs: i()}
	}
	if r.IntN(2) == 0 {
		s.Cgroup = &Cgroup{Version: i(), LimitBytes: u(), UsageBytes: u(), WorkingSetBytes: u(), AnonBytes: u(), FileBytes: u(), OOMKills: u()}
	}
	if r.IntN(2) == 0 {
		s.Go = &GoMem{Source: []string{"memstats", "runtime/metrics", "é\"\\\n"}[r.IntN(3)],
			HeapObjectsBytes: u(), HeapUnusedBytes: u(), HeapFreeBytes: u(), HeapReleasedBytes: u(), HeapStacksBytes: u(),
			OSStacksBytes: u(), MetadataBytes: u(), OtherBytes: u(), TotalBytes: u(), HeapLiveBytes: u(), HeapGoalBytes: u(),
			StackScanBytes: u(), GlobalsScanBytes: u(), AllocBytesTotal: u(), AllocObjectsTotal: u(), GCCycles: u(),
			GCForcedCycles: u(), GCTotalSeconds: f(), GCAssistSeconds: f(), GCIdleSeconds: f(), GCPauseSeconds: f(),
			CPUTotalSeconds: f(), GCCPUFraction: f(), PauseTotalSeconds: f(), Goroutines: i(), GOGC: i(),
			GOMemLimitBytes: u(), GOMAXPROCS: i()}
	}
	if r.IntN(2) == 0 {
		s.Pprof = &PprofCounts{Goroutines: i(), GoroutineLeak: i(), Threads: i(), HeapRecords: i()}
	}
	if r.IntN(2) == 0 {
		s.Sched = &Sched{RunSeconds: f(), WaitSeconds: f(), Tasks: i()}
	}
	return s
}

// TestSampleDecoderRoundTrip decodes what encoding/json writes for random samples: the
// decoder must give back exactly what was written.
func TestSampleDecoderRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var d sampleDecoder
	for n := range 5000 {
		want := randomSample(r)
		line, err := json.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		got, err := d.decode(line)
		if err != nil {
			t.Fatalf("sample %d: %v\n%s", n, err, line)
		}
		if !reflect.DeepEqual(*got, want) {
			t.Fatalf("sample %d:\n got %+v\nwant %+v\n%s", n, *got, want, line)
		}
	}
}

func TestSampleDecoderTolerance(t *testing.T) {
	var d sampleDecoder
	for _, tc := range []struct {
		line string
		ok   bool
	}{
		{`{"t":"2026-11-22T10:00:01Z","proc":{"rss_bytes":5,"new_field":{"a":[1,2,{"b":null}]}},"future":"x"}`, true},
		{` { "t" : "2026-11-22T10:00:01.5Z" , "go" : null } `, true},
		{`{"t":"2026-11-22T10:00:01Z","proc":{"rss_bytes":-5}}`, false},
		{`{"t":"2026-11-22T10:00:01Z","proc":{"rss_bytes":1.5}}`, false},
		{`{"t":"2026-11-22T10:00:01Z","proc":{"rss_bytes":18446744073709551616}}`, false},
		{`{"t":"2026-11-22T10:00:01Z"} x`, false},
		{`{"t":"2026-11-22T10:00:01Z","proc":{"rss_bytes":`, false},
		{`{"t":"yesterday"}`, false},
		{"\x00\x00garbage", false},
		{`[` + string(bytes.Repeat([]byte("["), 200)), false},
	} {
		_, err := d.decode([]byte(tc.line))
		if (err == nil) != tc.ok {
			t.Errorf("%q: err %v, want ok=%v", tc.line, err, tc.ok)
		}
	}
}

// FuzzSampleDecoder: any input either decodes or fails, never panics; whatever encoding/json
// writes for a decoded sample decodes to the same sample again.
func FuzzSampleDecoder(f *testing.F) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 8 {
		b, _ := json.Marshal(randomSample(r))
		f.Add(b)
	}
	f.Add([]byte(`{"t":"2026-11-22T10:00:01Z","proc":{"rss_bytes":5}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		var d sampleDecoder
		s, err := d.decode(line)
		if err != nil {
			return
		}
		again, err := json.Marshal(s)
		if err != nil {
			return // a time encoding/json cannot write (year > 9999)
		}
		var d2 sampleDecoder
		s2, err := d2.decode(again)
		if err != nil {
			t.Fatalf("re-decoding %s: %v", again, err)
		}
		if !reflect.DeepEqual(*s, *s2) {
			t.Fatalf("round trip changed the sample:\n%+v\n%+v", *s, *s2)
		}
	})
}

func BenchmarkSampleDecoder(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	lines := make([][]byte, 256)
	for i := range lines {
		s := randomSample(r)
		s.Proc, s.Go = &Proc{RSSBytes: 1 << 30, CPUSeconds: 12.5}, &GoMem{Source: "runtime/metrics", TotalBytes: 1 << 29, GCTotalSeconds: 3.25}
		lines[i], _ = json.Marshal(s)
	}
	var d sampleDecoder
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := d.decode(lines[i%len(lines)]); err != nil {
			b.Fatal(err)
		}
	}
}
