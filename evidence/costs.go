package evidence

import (
	"fmt"
	"strings"

	"github.com/memdoctor/memdoctor/session"
)

// fromCosts says in one note what the collector's reads cost the target (the manifest's
// Costs): per kind of data, where it came from, how often, and what that cost it (its CPU
// while its pprof served the requests, its runtime's stop-the-world pauses meanwhile, the
// stops memdoctor made to read its memory). A session written before Costs existed, or by a
// collector that read nothing from the target, has no such note.
func (ev *Evidence) fromCosts(costs []session.Cost) {
	if len(costs) == 0 {
		return
	}
	parts := make([]string, 0, len(costs))
	for _, c := range costs {
		parts = append(parts, describeCost(c))
	}
	ev.Notes = append(ev.Notes, CostNotePrefix+strings.Join(parts, "; "))
}

// CostNotePrefix starts the note of what memdoctor's reads cost the target.
const CostNotePrefix = "what memdoctor's reads cost the target: "

// describeCost says one entry of the manifest's Costs in words.
func describeCost(c session.Cost) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d ", costData(c.Data), c.Reads)
	switch c.Source {
	case session.SourceMemory:
		b.WriteString("from its memory, none of its CPU")
		if c.Stops > 0 {
			fmt.Fprintf(&b, ", stopped %d time(s) (%s in all, %s at most)", c.Stops, seconds(c.StoppedSeconds), seconds(c.LongestStopSeconds))
		} else {
			b.WriteString(", never stopped")
		}
		return b.String()
	case session.SourcePprof:
		b.WriteString("from net/http/pprof")
	default:
		fmt.Fprintf(&b, "from %s", c.Source)
	}
	if c.CPUMeasured {
		fmt.Fprintf(&b, ", %s of its CPU at most", seconds(c.TargetCPUSeconds))
	} else {
		b.WriteString(", its CPU not measured (no /proc)")
	}
	switch {
	case !c.PausesMeasured:
	case c.Pauses == 0:
		b.WriteString(", no stop-the-world pause")
	default:
		fmt.Fprintf(&b, ", %d stop-the-world pause(s) of its runtime, the longest under %s", c.Pauses, seconds(c.LongestPauseSeconds))
	}
	return b.String()
}

// costData names a kind of data of the manifest's Costs.
func costData(data string) string {
	switch data {
	case session.AttemptHeap:
		return "heap profiles"
	case session.AttemptGoroutine:
		return "goroutine profiles"
	case session.AttemptGoroutineText:
		return "goroutine dumps"
	case session.DataFigures:
		return "runtime figures"
	case session.DataIndex:
		return "pprof index pages"
	case session.DataGoroutineLeak:
		return "goroutineleak profiles"
	case session.DataHeapAfterGC:
		return "GCs asked for a reading of the live heap (heap profiles with gc=1)"
	case session.DataCmdline:
		return "its command line"
	}
	return data
}

// seconds says a short duration given in seconds.
func seconds(s float64) string {
	switch {
	case s >= 1:
		return fmt.Sprintf("%.1f s", s)
	case s >= 0.01:
		return fmt.Sprintf("%.0f ms", s*1000)
	case s >= 0.001:
		return fmt.Sprintf("%.1f ms", s*1000)
	}
	return fmt.Sprintf("%.2f ms", s*1000)
}
