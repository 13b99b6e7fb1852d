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
			p.sites(held, snapTotal(v.InuseBytes, v.InuseObjects), v.Retainers)
			p.sites(allocated, snapTotal(v.AllocBytes, v.AllocObjects), v.Allocators)
			for _, pat := range v.Patterns {
				p.f("%s\n", indentWrapFirst(fmt.Sprintf("%s (%s, %s of the bytes): %s", pat.Function, pat.Name, Percent(pat.Share), pat.Advice), "  pattern: ", "           ", 92))
			}
		case "goroutine":
			p.f("%s %s\n", p.paint(ansiBold, "Goroutine snapshot"), p.paint(ansiDim, fmt.Sprintf("(%s, %s: %d goroutines, by the site where they wait)", profileWhich(v, "goroutine"), when, v.Goroutines)))
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

// snapTotal says a heap snapshot's total: bytes, else objects.
func snapTotal(bytes, objects int64) string {
	if bytes == 0 && objects != 0 {
		return fmt.Sprintf("%d objects", objects)
	}
	return Bytes(uint64(max(bytes, 0)))
}

// amount says a culprit's bytes, or its count of objects.
func amount(c diagnose.Culprit) string {
	if c.Bytes == 0 && c.Count != 0 {
		return fmt.Sprint(c.Count)
	}
	return Bytes(uint64(max(c.Bytes, 0)))
}

// sites prints a heap snapshot's top sites for one sample type.
func (p *printer) sites(what string, total string, cs []diagnose.Culprit) {
	if len(cs) == 0 && total == "0 B" {
		p.f("  %s: not in this profile\n", what)
		return
	}
	p.f("  %s: %s\n", what, total)
	if len(cs) == 0 {
		p.f("    no site of the program's own code\n")
	}
	for _, c := range cs {
		line := fmt.Sprintf("%10s %5s  %s", amount(c), Percent(c.Share), c.Function)
		if c.File != "" {
			line += fmt.Sprintf("  %s:%d", shortFile(c.File), c.Line)
		}
		p.f("    %s\n", line)
	}
}

// heapWhat says what a heap snapshot is: one profile at an instant, or a delta profile's window.
func heapWhat(v diagnose.SnapshotView, when string) string {
	if v.WindowSeconds > 0 {
		return fmt.Sprintf("one heap profile covering %s, ending %s (a delta or merged profile): what its window saw, not a trend", Duration(time.Duration(v.WindowSeconds*float64(time.Second))), when)
	}
	return fmt.Sprintf("%s, %s: what it held then, not a trend", profileWhich(v, "heap"), when)
}

// profileWhich says which profile a snapshot view shows: the only one, or the last of
// several taken too close together for a trend.
func profileWhich(v diagnose.SnapshotView, kind string) string {
	if v.Of > 1 {
		return fmt.Sprintf("the last of %d %s profiles taken too close together for a trend", v.Of, kind)
	}
	return "one " + kind + " profile"
}

// heapHeadings name a heap snapshot's two lists.
func heapHeadings(v diagnose.SnapshotView) (held, allocated string) {
	if v.WindowSeconds > 0 {
		return "held, over the window (inuse)", "allocated during the window (alloc)"
	}
	return "held (inuse, as of the last GC)", "allocated since the program started (alloc)"
}
