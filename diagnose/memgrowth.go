package diagnose

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/memdoctor/memdoctor/facts"
)

// What growth of resident memory's floor matters: half again what it was (a process warming
// up to its steady state grows too, by less), and 32 MiB.
var memGrowthLimits = limits{minAbs: 32 << 20, minRel: 0.5, minSpan: 15 * time.Second}

// memoryGrowth reports resident memory (or, for a remote process, what the Go runtime
// holds) that grows for good, whichever part of it grows: whatever grows without bound is a
// finding, even when no other rule's shape matched. It names the part that grew most; the
// consistency pass drops it when another finding already explains that part.
func memoryGrowth(in *input) outcome {
	fs := in.f
	r := &fs.Resident
	s, what := &r.Series, "resident memory (RSS)"
	if r.Runtime {
		what = "memory the Go runtime holds (its total less what it released to the OS)"
	}
	if s.Empty() {
		return cannot(KindMemoryGrowth, 0, "resident memory was never read: %s", fs.Gaps[facts.GapRSS])
	}
	pts := r.Floor
	g := judgeGrowth(pts, memGrowthLimits, 0)
	if !g.judged {
		return cannot(KindMemoryGrowth, g.watchMore, "%d reading(s) of %s over %s: a trend needs %s or more",
			s.Len(), what, humanDuration(s.Span().Seconds()), humanDuration(memGrowthLimits.minSpan.Seconds()))
	}
	if g.conf == "" {
		return in.memoryStep(s, what)
	}
	perMin := g.perMinute()
	f := Finding{
		Kind:             KindMemoryGrowth,
		Severity:         Warning,
		Confidence:       g.conf,
		WatchMoreSeconds: g.watchMore.Seconds(),
		Title:            fmt.Sprintf("%s grows %s/min and does not come back: %s -> %s", what, bytesStr(perMin), bytesStr(g.first), bytesStr(g.last)),
		Detail: fmt.Sprintf("The lows of %s (%s) rose from %s to %s over %s (Kendall's tau %.2f, Mann-Kendall p=%.2g over %d lows), %s at the end.",
			what, s.Src, bytesStr(g.first), bytesStr(g.last), humanDuration(g.span.Seconds()), g.tau, g.p, g.n, risingWord(g)),
		Evidence: map[string]float64{
			"memory_start_bytes":      g.first,
			"memory_end_bytes":        g.last,
			"growth_bytes":            g.grew(),
			"growth_bytes_per_minute": perMin,
			"window_seconds":          g.span.Seconds(),
			"kendall_tau":             g.tau,
			"mann_kendall_p":          g.p,
		},
		Start: pts[0].T, End: pts[len(pts)-1].T,
	}
	parts := r.FloorParts
	if len(parts) > 0 && parts[0].Name == facts.PartGarbage && facts.PartBytes(parts, facts.PartLive) < 0.1*g.grew() {
		// The heap in use rose toward its GC goal while the live heap stayed: a process
		// warming up to its steady state, bounded by the goal. Not growth for good.
		return outcome{}
	}
	if len(parts) > 0 && parts[0].Bytes > 0 {
		top := parts[0]
		in.growthPart = top.Name
		f.Title += "; most of it is " + top.Name
		var said []string
		for _, p := range parts {
			if p.Bytes >= 1<<20 {
				said = append(said, fmt.Sprintf("%s +%s", p.Name, bytesStr(p.Bytes)))
				f.Evidence[strings.ReplaceAll(p.Name, " ", "_")+"_growth_bytes"] = p.Bytes
			}
		}
		f.Detail += " What grew, by the split of memory: " + strings.Join(said, ", ") + ". " + partAdvice[top.Name]
		if top.Name == facts.PartLive {
			in.leakCulprits(&f)
		}
	} else {
		f.Detail += " What grows cannot be told: no Go reading was taken with the /proc readings (see the notes)."
	}
	if g.conf == Suspected {
		f.Detail += fmt.Sprintf(" Not yet proved: watch about %s more to confirm or dismiss it.", humanDuration(g.watchMore.Seconds()))
	}
	timeToBudget(fs, &f, g.perMinute()/60/2)
	return found(f)
}

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

// What a step of resident memory must be to be said though it stopped rising: three times
// where it started, and a quarter GiB more. A service warming a cache or its pools grows by
// less; one that buffers requests whole can reach a GiB in seconds.
const (
	stepMinRatio = 3
	stepMinBytes = 256 << 20
)

// memoryStep reports resident memory that rose steeply in the window and has not come back:
// not growth for good (it stopped), so the growth rule says nothing, yet the process now
// needs several times the memory it started with, start-up included. Whatever holds it (a
// burst the GC has not collected yet, a cache that warmed, memory kept), it sets what the
// process must be given. It is judged on the settled readings (the binary's own start-up
// excluded), from the lowest of the first few to the lowest of the last quarter.
func (in *input) memoryStep(s *facts.Series, what string) outcome {
	fs := in.f
	pts := fs.Resident.Settled
	n := len(pts)
	if n < 8 {
		return outcome{}
	}
	first := slices.Min(facts.Values(pts[:min(3, n/4)])) // a step can be over by the second reading
	lastQ := pts[n-max(n/4, 2):]
	low := math.Inf(1)
	for _, p := range lastQ {
		low = math.Min(low, p.V)
	}
	if first <= 0 || low < stepMinRatio*first || low-first < stepMinBytes {
		return outcome{}
	}
	// When it rose: the first reading past half the step.
	rose := pts[0].T
	for _, p := range pts {
		if p.V >= first+(low-first)/2 {
			rose = p.T
			break
		}
	}
	f := Finding{
		Kind:       KindMemoryGrowth,
		Severity:   Warning,
		Confidence: Confirmed,
		Title: fmt.Sprintf("%s rose %.0fx, %s -> %s, and has not come back", what, low/first,
			bytesStr(first), bytesStr(low)),
		Detail: fmt.Sprintf("%s (%s) was %s at the start and at least %s over the last %s of the window (it passed half way %s in). "+
			"It no longer rises, so it is no leak yet, but the process now needs %.0f times the memory it started with: "+
			"a burst the GC has not collected, a cache or pool that filled, or memory kept. Watch longer to see whether it comes back, "+
			"and size the memory limit from this peak, not from the start.",
			what, s.Src, bytesStr(first), bytesStr(low), humanDuration(lastQ[len(lastQ)-1].T.Sub(lastQ[0].T).Seconds()),
			humanDuration(rose.Sub(fs.Start).Seconds()), low/first),
		Evidence: map[string]float64{
			"memory_start_bytes": first,
			"memory_end_bytes":   low,
			"growth_bytes":       low - first,
			"growth_ratio":       low / first,
			"window_seconds":     fs.Seconds(),
		},
		Start: pts[0].T, End: pts[n-1].T,
	}
	parts := fs.Resident.SettledParts
	if len(parts) > 0 && parts[0].Bytes > 0 {
		top := parts[0]
		in.growthPart = top.Name
		f.Title += "; most of it is " + top.Name
		f.Detail += " The part that grew most: " + top.Name + " (+" + bytesStr(top.Bytes) + "). " + partAdvice[top.Name]
		if top.Name == facts.PartLive || top.Name == facts.PartGarbage {
			in.leakCulprits(&f)
		}
	}
	return found(f)
}
