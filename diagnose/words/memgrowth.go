package words

import (
	"fmt"
	"strings"

	"github.com/memdoctor/memdoctor/diagnose/rule"
	"github.com/memdoctor/memdoctor/facts"
)

// partAdvice says what each part of memory that grows calls for.
var partAdvice = map[string]string{
	facts.PartLive:     "Reachable objects accumulate: see the heap-leak advice and the growing sites.",
	facts.PartGarbage:  "The heap in use grows faster than the live heap: the GC goal grows with it (GOGC), or garbage piles up between cycles; GOMEMLIMIT bounds it.",
	facts.PartRetained: "The runtime keeps freed heap for reuse: not a leak of objects; GOMEMLIMIT makes the scavenger return it.",
	facts.PartReleased: "Pages released with MADV_FREE stay resident until the kernel needs them (GODEBUG=madvdontneed=1 returns them at once).",
	facts.PartStacks:   "Goroutine stacks grow with the number of goroutines: see the goroutine counts.",
	facts.PartNonGo:    "Memory outside the Go runtime (cgo, C libraries, mmap) grows: Go's profiles cannot see it; look at /proc/PID/smaps.",
	facts.PartFiles:    "File-backed memory grows: mapped files or the page cache of files the process maps.",
}

// memoryWhat names the memory a memory-growth finding judged.
func memoryWhat(runtime bool) string {
	if runtime {
		return "memory the Go runtime holds (its total less what it released to the OS)"
	}
	return "resident memory (RSS)"
}

func memoryGrowth(f *Finding, c *rule.MemoryCase) {
	if c.Step != nil {
		memoryStep(f, c)
		return
	}
	what, g := memoryWhat(c.Runtime), c.Rise
	f.Title = fmt.Sprintf("%s grows %s/min and does not come back: %s -> %s", what, bytesStr(g.PerMinute), bytesStr(g.First), bytesStr(g.Last))
	f.Detail = fmt.Sprintf("The lows of %s (%s) rose from %s to %s over %s (Kendall's tau %.2f, Mann-Kendall %s over %d lows), %s at the end.",
		what, c.Src, bytesStr(g.First), bytesStr(g.Last), humanDuration(g.Span.Seconds()), g.Tau, pValue(g.P), g.N, risingWord(g))
	f.Evidence = map[string]float64{
		"memory_start_bytes":      g.First,
		"memory_end_bytes":        g.Last,
		"growth_bytes":            g.Grew,
		"growth_bytes_per_minute": g.PerMinute,
		"window_seconds":          g.Span.Seconds(),
		"kendall_tau":             g.Tau,
		"mann_kendall_p":          g.P,
	}
	if c.Part != "" {
		f.Title += "; most of it is " + c.Part
		var said []string
		for _, p := range c.Parts {
			if p.Bytes >= 1<<20 {
				said = append(said, fmt.Sprintf("%s +%s", p.Name, bytesStr(p.Bytes)))
				f.Evidence[strings.ReplaceAll(p.Name, " ", "_")+"_growth_bytes"] = p.Bytes
			}
		}
		f.Detail += " What grew, by the split of memory: " + strings.Join(said, ", ") + ". " + partAdvice[c.Part]
		if c.Sites != nil {
			growingSites(f, *c.Sites)
		}
	} else {
		f.Detail += " What grows cannot be told: no Go reading was taken with the /proc readings (see the notes)."
	}
	if g.Confidence == rule.Suspected {
		f.Detail += notYet(g.WatchMore)
	}
	budget(f, c.Budget)
}

// memoryStep says resident memory that rose steeply and has not come back.
func memoryStep(f *Finding, c *rule.MemoryCase) {
	what, st := memoryWhat(c.Runtime), c.Step
	first, low := st.First, st.Low
	f.Title = fmt.Sprintf("%s rose %.0fx, %s -> %s, and has not come back", what, low/first, bytesStr(first), bytesStr(low))
	f.Detail = fmt.Sprintf("%s (%s) was %s at the start and at least %s over the last %s of the window (it passed half way %s in). "+
		"It no longer rises, so it is no leak yet, but the process now needs %.0f times the memory it started with: "+
		"a burst the GC has not collected, a cache or pool that filled, or memory kept. Watch longer to see whether it comes back, "+
		"and size the memory limit from this peak, not from the start.",
		what, c.Src, bytesStr(first), bytesStr(low), humanDuration(st.LastQuarter.Seconds()), humanDuration(st.Rose.Seconds()), low/first)
	f.Evidence = map[string]float64{
		"memory_start_bytes": first,
		"memory_end_bytes":   low,
		"growth_bytes":       low - first,
		"growth_ratio":       low / first,
		"window_seconds":     st.Window,
	}
	if c.Part != "" {
		top := c.Parts[0]
		f.Title += "; most of it is " + top.Name
		f.Detail += " The part that grew most: " + top.Name + " (+" + bytesStr(top.Bytes) + "). " + partAdvice[top.Name]
		if c.Sites != nil {
			growingSites(f, *c.Sites)
		}
	}
}
