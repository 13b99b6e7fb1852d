package tune

import (
	"fmt"

	"github.com/memdoctor/memdoctor/units"
)

// caveats say what an experiment on this machine cannot promise about production.
func caveats(base Run, opts Options) []string {
	ev := base.Ev
	secs := ev.Seconds()
	out := []string{
		fmt.Sprintf("Load: each run saw the load of this experiment for about %s; the GC's work follows the allocation rate, so production traffic with other peaks, payloads or request mixes moves every figure here.", units.Duration(ev.Window())),
	}
	procs := ev.Pacer.GOMAXPROCS
	if procs > 0 {
		out = append(out, fmt.Sprintf("CPU: the program ran with GOMAXPROCS=%d here; with another CPU count (or cgroup CPU limit) the GC's background workers (a quarter of GOMAXPROCS) and its share of the CPU differ.", procs))
	} else {
		out = append(out, "CPU: the GC's share of the CPU depends on GOMAXPROCS, which production may set differently from this machine.")
	}
	out = append(out,
		"Neighbours: other processes on this machine took CPU and memory during the runs; in production the co-tenants differ, and so does the time the GC's marking takes.",
		fmt.Sprintf("Growth: %.0f seconds cannot show a live heap that grows over hours (caches filling, more connections, a leak). Under GOMEMLIMIT a live heap that approaches the limit makes the GC run almost continuously (the runtime caps it at about half the CPU, and then lets memory exceed the limit); with GOGC alone the peak grows in proportion to the live heap.", secs),
		fmt.Sprintf("Headroom: a setting is kept only if its measured peak RSS stayed within %.0f%% of the budget: that margin, not the peak measured here, is what covers memory outside Go, stacks and the heap's growth in production.", (1-opts.Margin)*100),
	)
	return out
}
