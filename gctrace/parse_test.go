package gctrace_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/gctrace"
)

const (
	us  = time.Microsecond
	ms  = time.Millisecond
	mib = 1 << 20
)

// go119Line is the example of runtime-memory-facts.md section 4.
const go119Line = "gc 29 @2.942s 0%: 0.13+1.3+0.005 ms clock, 0.26+0/0.40/0.83+0.010 ms cpu, 127->128->65 MB, 130 MB goal, 0 MB stacks, 0 MB globals, 2 P"

var go119Cycle = gctrace.Cycle{
	N: 29, At: 2942 * ms, CPUPercent: 0,
	ClockSweepTerm: 130 * us, ClockMark: 1300 * us, ClockMarkTerm: 5 * us,
	CPUSweepTerm: 260 * us, CPUAssist: 0, CPUBackground: 400 * us, CPUIdle: 830 * us, CPUMarkTerm: 10 * us,
	HeapStart: 127 * mib, HeapEnd: 128 * mib, HeapLive: 65 * mib, Goal: 130 * mib,
	HasStacksGlobals: true, Procs: 2,
}

func forced(c gctrace.Cycle) gctrace.Cycle { c.Forced = true; return c }

var parseTests = []struct {
	name string
	line string
	want gctrace.Cycle
}{
	{"go1.19+", go119Line, go119Cycle},
	{"go1.19+ forced", go119Line + " (forced)", forced(go119Cycle)},
	{"crlf", go119Line + "\r\n", go119Cycle},
	{
		"go1.26 leak check (real)",
		"gc 13 @0.038s 3% (checking for goroutine leaks): 0.23+0.43+0.056 ms clock, 0.46+0/0.096/0+0.11 ms cpu, 18->18->18 MB, 37 MB goal, 0 MB stacks, 0 MB globals, 2 P (forced)",
		gctrace.Cycle{
			N: 13, At: 38 * ms, CPUPercent: 3,
			ClockSweepTerm: 230 * us, ClockMark: 430 * us, ClockMarkTerm: 56 * us,
			CPUSweepTerm: 460 * us, CPUBackground: 96 * us, CPUMarkTerm: 110 * us,
			HeapStart: 18 * mib, HeapEnd: 18 * mib, HeapLive: 18 * mib, Goal: 37 * mib,
			HasStacksGlobals: true, Procs: 2, Forced: true, LeakCheck: true,
		},
	},
	{
		"go1.27 leak check (real)",
		"gc 2 @0.627s 0% (checking for goroutine leaks): 0.19+1.6+0.63 ms clock, 0.39+0/0.13/0.15+1.2 ms cpu, 7->7->7 MB, 8 MB goal, 0 MB stacks, 0 MB globals, 2 P (forced)",
		gctrace.Cycle{
			N: 2, At: 627 * ms, CPUPercent: 0,
			ClockSweepTerm: 190 * us, ClockMark: 1600 * us, ClockMarkTerm: 630 * us,
			CPUSweepTerm: 390 * us, CPUBackground: 130 * us, CPUIdle: 150 * us, CPUMarkTerm: 1200 * us,
			HeapStart: 7 * mib, HeapEnd: 7 * mib, HeapLive: 7 * mib, Goal: 8 * mib,
			HasStacksGlobals: true, Procs: 2, Forced: true, LeakCheck: true,
		},
	},
	{
		"first cycle at @0.000s (real)",
		"gc 1 @0.000s 11%: 0.18+0.16+0.023 ms clock, 0.36+0.017/0.088/0.077+0.047 ms cpu, 3->4->4 MB, 4 MB goal, 0 MB stacks, 0 MB globals, 2 P",
		gctrace.Cycle{
			N: 1, At: 0, CPUPercent: 11,
			ClockSweepTerm: 180 * us, ClockMark: 160 * us, ClockMarkTerm: 23 * us,
			CPUSweepTerm: 360 * us, CPUAssist: 17 * us, CPUBackground: 88 * us, CPUIdle: 77 * us, CPUMarkTerm: 47 * us,
			HeapStart: 3 * mib, HeapEnd: 4 * mib, HeapLive: 4 * mib, Goal: 4 * mib,
			HasStacksGlobals: true, Procs: 2,
		},
	},
	{
		"go1.7-1.17 without stacks/globals",
		"gc 17 @48.306s 2%: 0.31+95+0.12 ms clock, 2.4+190/188/0.52+0.97 ms cpu, 388->397->203 MB, 406 MB goal, 8 P",
		gctrace.Cycle{
			N: 17, At: 48306 * ms, CPUPercent: 2,
			ClockSweepTerm: 310 * us, ClockMark: 95 * ms, ClockMarkTerm: 120 * us,
			CPUSweepTerm: 2400 * us, CPUAssist: 190 * ms, CPUBackground: 188 * ms, CPUIdle: 520 * us, CPUMarkTerm: 970 * us,
			HeapStart: 388 * mib, HeapEnd: 397 * mib, HeapLive: 203 * mib, Goal: 406 * mib,
			Procs: 8,
		},
	},
	{
		"go1.5 five phases",
		"gc 7 @1.204s 1%: 0.21+0.62+2.9+8.1+0.23 ms clock, 0.84+0.62+0+0.012/2.7/9.5+0.92 ms cpu, 6->6->5 MB, 7 MB goal, 16 P",
		gctrace.Cycle{
			N: 7, At: 1204 * ms, CPUPercent: 1,
			ClockSweepTerm: 210 * us, ClockMark: (620 + 2900 + 8100) * us, ClockMarkTerm: 230 * us,
			CPUSweepTerm: 840 * us, CPUAssist: 12 * us, CPUBackground: (620 + 0 + 2700) * us, CPUIdle: 9500 * us, CPUMarkTerm: 920 * us,
			HeapStart: 6 * mib, HeapEnd: 6 * mib, HeapLive: 5 * mib, Goal: 7 * mib,
			Procs: 16,
		},
	},
	{
		"syslog prefix",
		"Mar  3 09:14:52.101 gc 412 @8120.553s 1%: 0.091+41+0.026 ms clock, 0.73+0.52/80/151+0.21 ms cpu, 310->316->178 MB, 322 MB goal, 8 P",
		gctrace.Cycle{
			N: 412, At: 8120553 * ms, CPUPercent: 1,
			ClockSweepTerm: 91 * us, ClockMark: 41 * ms, ClockMarkTerm: 26 * us,
			CPUSweepTerm: 730 * us, CPUAssist: 520 * us, CPUBackground: 80 * ms, CPUIdle: 151 * ms, CPUMarkTerm: 210 * us,
			HeapStart: 310 * mib, HeapEnd: 316 * mib, HeapLive: 178 * mib, Goal: 322 * mib,
			Procs: 8,
		},
	},
	{
		"windows zeros",
		"gc 88 @0.402s 0%: 0+0+0 ms clock, 0+0/0/0+0 ms cpu, 9->9->4 MB, 10 MB goal, 4 P",
		gctrace.Cycle{
			N: 88, At: 402 * ms,
			HeapStart: 9 * mib, HeapEnd: 9 * mib, HeapLive: 4 * mib, Goal: 10 * mib,
			Procs: 4,
		},
	},
	{
		"thousands",
		"gc 1203 @15230.887s 6%: 0.021+2410+0.11 ms clock, 0.66+1187/9640/28113+3.5 ms cpu, 12840->12903->12711 MB, 12930 MB goal, 96 MB stacks, 2 MB globals, 48 P",
		gctrace.Cycle{
			N: 1203, At: 15230887 * ms, CPUPercent: 6,
			ClockSweepTerm: 21 * us, ClockMark: 2410 * ms, ClockMarkTerm: 110 * us,
			CPUSweepTerm: 660 * us, CPUAssist: 1187 * ms, CPUBackground: 9640 * ms, CPUIdle: 28113 * ms, CPUMarkTerm: 3500 * us,
			HeapStart: 12840 * mib, HeapEnd: 12903 * mib, HeapLive: 12711 * mib, Goal: 12930 * mib,
			Stacks: 96 * mib, Globals: 2 * mib, HasStacksGlobals: true, Procs: 48,
		},
	},
	{
		"program output glued in front",
		"flushing cachgc 416 @8140.352s 1%: 1.0+12+0.023 ms clock, 8.0+0/24/31+0.18 ms cpu, 240->241->120 MB, 245 MB goal, 8 P (forced)",
		gctrace.Cycle{
			N: 416, At: 8140352 * ms, CPUPercent: 1,
			ClockSweepTerm: 1 * ms, ClockMark: 12 * ms, ClockMarkTerm: 23 * us,
			CPUSweepTerm: 8 * ms, CPUBackground: 24 * ms, CPUIdle: 31 * ms, CPUMarkTerm: 180 * us,
			HeapStart: 240 * mib, HeapEnd: 241 * mib, HeapLive: 120 * mib, Goal: 245 * mib,
			Procs: 8, Forced: true,
		},
	},
	{
		"broken cycle before an intact one",
		"gc 5 @0.1s 2%: 0.1+gc 6 @0.2s 3%: 0.1+0.2+0.3 ms clock, 0.2+0.1/0.2/0+0.3 ms cpu, 4->4->2 MB, 5 MB goal, 2 P",
		gctrace.Cycle{
			N: 6, At: 200 * ms, CPUPercent: 3,
			ClockSweepTerm: 100 * us, ClockMark: 200 * us, ClockMarkTerm: 300 * us,
			CPUSweepTerm: 200 * us, CPUAssist: 100 * us, CPUBackground: 200 * us, CPUMarkTerm: 300 * us,
			HeapStart: 4 * mib, HeapEnd: 4 * mib, HeapLive: 2 * mib, Goal: 5 * mib,
			Procs: 2,
		},
	},
	{
		"unknown note and field are ignored",
		"gc 3 @1.000s 4% (some future note): 0.1+0.2+0.3 ms clock, 0.2+0.1/0.2/0+0.3 ms cpu, 4->4->2 MB, 5 MB goal, 7 MB future, 1 MB stacks, 3 MB globals, 2 P",
		gctrace.Cycle{
			N: 3, At: 1 * time.Second, CPUPercent: 4,
			ClockSweepTerm: 100 * us, ClockMark: 200 * us, ClockMarkTerm: 300 * us,
			CPUSweepTerm: 200 * us, CPUAssist: 100 * us, CPUBackground: 200 * us, CPUMarkTerm: 300 * us,
			HeapStart: 4 * mib, HeapEnd: 4 * mib, HeapLive: 2 * mib, Goal: 5 * mib,
			Stacks: 1 * mib, Globals: 3 * mib, HasStacksGlobals: true, Procs: 2,
		},
	},
	{
		"sub-nanosecond digits truncate",
		"gc 2 @0.0000000019s 0%: 0.0000019+0.0000001+0 ms clock, 0+0/0/0+0 ms cpu, 0->0->0 MB, 4 MB goal, 1 P",
		gctrace.Cycle{
			N: 2, At: 1, ClockSweepTerm: 1, Goal: 4 * mib, Procs: 1,
		},
	},
}

func TestParseLine(t *testing.T) {
	for _, tt := range parseTests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, err := gctrace.ParseLine(tt.line)
			if err != nil || !ok {
				t.Fatalf("ParseLine(%q) = ok %v, err %v", tt.line, ok, err)
			}
			if got != tt.want {
				t.Errorf("ParseLine(%q)\n got %+v\nwant %+v", tt.line, got, tt.want)
			}
			checkInvariants(t, tt.line, got)
		})
	}
}

func TestParseLineNotCycle(t *testing.T) {
	for _, line := range []string{
		"",
		"\n",
		"listening on :8080",
		"gc is fun",
		"gcc: error: unrecognized option",
		"gc 5 @ noon", // no digit after @
		"gc 5 @",
		"gc @1.2s 3%:", // no cycle number
		"gc1(1): 0+0+0+0 us, 0 -> 0 MB, 21 (21-0) objects, 0/0/0 sweeps, 0(0) handoff, 0(0) steal, 0/0/0 yields", // Go 1.4
		"scav 0 KiB work (bg), 0 KiB work (eager), 4792 KiB now, 99% util",
		"scvg0: inuse: 3, idle: 1, sys: 5, released: 0, consumed: 5 (MB)",
		"pacer: assist ratio=0.95670166015625 (scan 0 MB in 3->4 MB) workers=0+0.25",
		"GC forced",
		"scan: total 530+1407+4499=6436 objs, 252+159=411 spans",
	} {
		c, ok, err := gctrace.ParseLine(line)
		if ok || err != nil || c != (gctrace.Cycle{}) {
			t.Errorf("ParseLine(%q) = %+v, %v, %v; want not a cycle", line, c, ok, err)
		}
	}
}

func TestParseLineErrors(t *testing.T) {
	const (
		head  = "gc 5 @0.100s 2%: "
		clock = "0.1+0.2+0.3 ms clock"
		cpu   = "0.2+0.1/0.2/0+0.3 ms cpu"
		tail  = "4->4->2 MB, 5 MB goal, 2 P"
	)
	for _, tt := range []struct{ line, want string }{
		{"gc 5 @0.100s 2% 0.1+0.2+0.3 ms clock", "no ':'"},
		{"gc 99999999999999999999 @0.1s 2%: " + clock, "cycle number"},
		{"gc 5 @0.1 2%: " + clock, "start time"},
		{"gc 5 @0.1.2s 2%: " + clock, "start time"},
		{"gc 5 @0.100s 2: " + clock, "GC CPU %"},
		{"gc 5 @0.100s x%: " + clock, "GC CPU percentage"},
		{head + "0.1+x+0.3 ms clock, " + cpu + ", " + tail, "clock phase 2"},
		{head + "0.1+0.3 ms clock, " + cpu + ", " + tail, "at least 3 phases"},
		{head + "-0.1+0.2+0.3 ms clock, " + cpu + ", " + tail, "clock phase 1"},
		{head + "18446744073709+0.2+0.3 ms clock, " + cpu + ", " + tail, "clock phase 1"},
		{head + clock + ", 0.2+0.1+0.3 ms cpu, " + tail, "no assist/background/idle"},
		{head + clock + ", 0.2+0.1/0.2+0.3 ms cpu, " + tail, "assist/background/idle group"},
		{head + clock + ", 0.2+0.1/0.2/0/9+0.3 ms cpu, " + tail, "assist/background/idle group"},
		{head + clock + ", 0.2+1/2/3+1/2/3+0.3 ms cpu, " + tail, "two assist"},
		{head + clock + ", 0.2+0.1/0.2/0+0.3 ms cpu", `"->-> MB"`},
		{head + clock + ", " + cpu + ", 4->4 MB, 5 MB goal, 2 P", "heap sizes"},
		{head + clock + ", " + cpu + ", 4->4->2 MB, 2 P", `"MB goal"`},
		{head + clock + ", " + cpu + ", 4->4->2 MB, 5 MB goal", `"P"`},
		{head + clock + ", " + cpu + ", 4->4->2 MB, 5 MB goal, x MB stacks, 2 P", "MB stacks"},
		{head + clock + ", " + cpu + ", 4->4->2 MB, 5 MB goal, -2 P", "GOMAXPROCS"},
		{head + clock + ", " + cpu + ", 4->4->2 MB, 99999999999999999999 MB goal, 2 P", "MB goal"},
		{head + cpu + ", " + tail, `"ms clock"`},
	} {
		c, ok, err := gctrace.ParseLine(tt.line)
		if ok || err == nil {
			t.Errorf("ParseLine(%q) = %+v, %v, nil; want an error containing %q", tt.line, c, ok, tt.want)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "gctrace: ") {
			t.Errorf("ParseLine(%q) error %q; want it to start with \"gctrace: \" and contain %q", tt.line, err, tt.want)
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseLine(%q) error %q spans lines", tt.line, err)
		}
	}
}

func TestGCCPU(t *testing.T) {
	if got, want := go119Cycle.GCCPU(), (260+0+400+10)*us; got != want {
		t.Errorf("GCCPU = %v, want %v (idle 830µs excluded)", got, want)
	}
	var five gctrace.Cycle
	for _, tt := range parseTests {
		if tt.name == "go1.5 five phases" {
			five = tt.want
		}
	}
	if got, want := five.GCCPU(), (840+12+3320+920)*us; got != want {
		t.Errorf("five-phase GCCPU = %v, want %v", got, want)
	}
	big := gctrace.Cycle{CPUSweepTerm: math.MaxInt64, CPUMarkTerm: 1, CPUAssist: 5}
	if got := big.GCCPU(); got != math.MaxInt64 {
		t.Errorf("GCCPU overflowed: %v", got)
	}
}

func TestParseLineAllocs(t *testing.T) {
	for _, tt := range parseTests {
		if strings.Count(tt.line, "gc ") > 1 {
			continue // the broken first cycle builds an error message
		}
		allocs := testing.AllocsPerRun(50, func() {
			if _, ok, _ := gctrace.ParseLine(tt.line); !ok {
				panic("not parsed")
			}
		})
		if allocs != 0 {
			t.Errorf("%s: ParseLine allocates %.0f times per call, want 0", tt.name, allocs)
		}
	}
}
