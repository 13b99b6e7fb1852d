package report

import (
	"fmt"
	"time"

	"github.com/memdoctor/memdoctor/diagnose"
)

// snapshots prints what single profiles show: said as an instant, not a trend.
func (p *printer) snapshots(d *diagnose.Diagnosis) {
	for _, v := range d.Snapshots {
		when := v.Time.Local().Format("2006-01-02 15:04:05")
		switch v.Kind {
		case "heap":
			held, allocated := heapHeadings(v)
			p.f("%s %s\n", p.paint(ansiBold, "Heap snapshot"), p.paint(ansiDim, "("+heapWhat(v, when)+")"))
			p.f("  %s\n", p.paint(ansiDim, v.Profile))
			p.sites(held, v.InuseBytes, v.Retainers)
			p.sites(allocated, v.AllocBytes, v.Allocators)
			for _, pat := range v.Patterns {
				p.f("%s\n", indentWrapFirst(fmt.Sprintf("%s (%s, %s of the bytes): %s", pat.Function, pat.Name, Percent(pat.Share), pat.Advice), "  pattern: ", "           ", 92))
			}
		case "goroutine":
			p.f("%s %s\n", p.paint(ansiBold, "Goroutine snapshot"), p.paint(ansiDim, fmt.Sprintf("(one goroutine profile, %s: %d goroutines, by the site where they wait)", when, v.Goroutines)))
			p.f("  %s\n", p.paint(ansiDim, v.Profile))
			for _, g := range v.Groups {
				line := fmt.Sprintf("%6d %5s  %-14s %s", g.Count, Percent(g.Share), g.State, g.Function)
				if g.File != "" {
					line += fmt.Sprintf("  %s:%d", shortFile(g.File), g.Line)
				}
				if g.WaitMinutes > 0 {
					line += fmt.Sprintf(" (up to %d min)", g.WaitMinutes)
				}
				if g.Leaked > 0 {
					line += fmt.Sprintf(" (%d leaked)", g.Leaked)
				}
				p.f("  %s\n", line)
			}
		}
		p.f("\n")
	}
}

// sites prints a heap snapshot's top sites for one sample type.
func (p *printer) sites(what string, total int64, cs []diagnose.Culprit) {
	p.f("  %s: %s\n", what, Bytes(uint64(max(total, 0))))
	if len(cs) == 0 {
		p.f("    no site of the program's own code\n")
	}
	for _, c := range cs {
		line := fmt.Sprintf("%10s %5s  %s", Bytes(uint64(max(c.Bytes, 0))), Percent(c.Share), c.Function)
		if c.File != "" {
			line += fmt.Sprintf("  %s:%d", shortFile(c.File), c.Line)
		}
		p.f("    %s\n", line)
	}
}

// heapWhat says what a heap snapshot is: one profile at an instant, or a delta profile's window.
func heapWhat(v diagnose.SnapshotView, when string) string {
	if v.WindowSeconds > 0 {
		return fmt.Sprintf("one delta heap profile ending %s: what changed over %s, not a trend", when, Duration(time.Duration(v.WindowSeconds*float64(time.Second))))
	}
	return fmt.Sprintf("one heap profile, %s: what it held then, not a trend", when)
}

// heapHeadings name a heap snapshot's two lists.
func heapHeadings(v diagnose.SnapshotView) (held, allocated string) {
	if v.WindowSeconds > 0 {
		return "held, change over the window (inuse_space)", "allocated during the window (alloc_space)"
	}
	return "held (inuse_space, as of the last GC)", "allocated since the program started (alloc_space)"
}
