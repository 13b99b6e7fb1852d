package gctrace_test

import (
	"testing"

	"github.com/memdoctor/memdoctor/gctrace"
)

func TestIsRuntimeTrace(t *testing.T) {
	trace := []string{
		go119Line,
		go119Line + " (forced)\n",
		"gc 13 @0.038s 3% (checking for goroutine leaks): 0.23+0.43+0.056 ms clock, 0.46+0/0.096/0+0.11 ms cpu, 18->18->18 MB, 37 MB goal, 0 MB stacks, 0 MB globals, 2 P (forced)",
		"gc 4 @0.714s 0%: 0.16+0.50+3.8+9.9+0.17 ms clock, 0.64+0.50+0+0.007/3.4/10+0.69 ms cpu, 3->3->3 MB, 3 MB goal, 32 P",
		"Mar  3 09:14:52.101 gc 412 @8120.553s 1%: 0.091+41+0.026 ms clock",
		"gc 5 @0.1s 2%: truncated by the shipper", // still trace: ParseLine reports an error for it
		"scav 0 KiB work (bg), 0 KiB work (eager), 4792 KiB now, 99% util",
		"scav 10624 KiB work (bg), 0 KiB work (eager), 41568 KiB now, 61% util\r\n",
		"scav 5 704 KiB work, 70028 KiB total, 84% util", // Go 1.13-era layout
		"scvg0: inuse: 3, idle: 1, sys: 5, released: 0, consumed: 5 (MB)",
		"scvg12: 0 MB released",
		"scvg-1: 2 MB released",
		"pacer: assist ratio=0.95670166015625 (scan 0 MB in 3->4 MB) workers=0+0.25",
		"pacer: 27% CPU (25 exp.) for 52624+2304+156746 B work (156746 B exp.) in 4030464 B -> 5013504 B (∆goal 819200, cons/mark 0)",
		"pacer: sweep done at heap size 7MB; allocated 3MB during sweep; swept 612 pages at 0 pages/byte",
		"pacer: H_m_prev=4194304 h_t=+9.500000e-001 H_T=8178892 h_a=+1.000000e+000 H_a=8388608 h_g=+1.000000e+000 H_g=8388608 u_a=+2.500000e-001 u_g=+2.500000e-001 W_a=28608 goalΔ=+5.000000e-002 actualΔ=+5.000000e-002 u_a/u_g=+1.000000e+000",
		"GC forced",
		"GC forced\r\n",
		"scan: total 530+1407+4499=6436 objs, 252+159=411 spans",
		"scan: class L 38+0+0=38 objs, 0+0=0 spans",
		"scan: class 16B 736+23953+3389=28078 objs, 2327+45=2372 spans",
		"  pacer: indented",
	}
	output := []string{
		"",
		"\n",
		"listening on :8080",
		"gcc: error: unrecognized option",
		"gc is fun",
		"gc 5 @ noon",
		"gc @1s",
		"running gc 5 times",
		"scav",
		"scav the pantry",
		"scavenger started",
		"scvg",
		"scvg: 3",    // the runtime always printed a number
		"scvgx: ok",  // not a number
		"pacer:",     // no space after the colon
		"pacers: 3",  // not "pacer: "
		"GC forced!", // not exactly the runtime's line
		"GC forced by user",
		"scan: complete",
		"scan: total",
		"scan: class of 2024",
		"2024/05/01 12:00:00 pacer: prefixed lines are program output",
		"gc1(1): 0+0+0+0 us, 0 -> 0 MB", // Go 1.4 gctrace, not supported
	}
	for _, line := range trace {
		if !gctrace.IsRuntimeTrace(line) {
			t.Errorf("IsRuntimeTrace(%q) = false, want true", line)
		}
	}
	for _, line := range output {
		if gctrace.IsRuntimeTrace(line) {
			t.Errorf("IsRuntimeTrace(%q) = true, want false", line)
		}
	}
}

func TestIsRuntimeTraceAllocs(t *testing.T) {
	lines := []string{go119Line, "listening on :8080", "pacer: x", "scvg1: 0 MB released", "GC forced\n"}
	allocs := testing.AllocsPerRun(100, func() {
		for _, l := range lines {
			gctrace.IsRuntimeTrace(l)
		}
	})
	if allocs != 0 {
		t.Errorf("IsRuntimeTrace allocates %.1f times per round, want 0", allocs)
	}
}
