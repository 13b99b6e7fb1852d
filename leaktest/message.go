package leaktest

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// summary is the line a passing Loop logs (go test -v shows it).
func (r *run) summary(res result) string {
	var b strings.Builder
	verdict := "no leak"
	if res.tooFew {
		verdict = "not judged"
	}
	fmt.Fprintf(&b, "leaktest: %s in %d rounds of %d calls (%s)", verdict, len(r.readings)-1, r.perRound, r.elapsed.Round(time.Millisecond))
	first, last := r.readings[0], r.readings[len(r.readings)-1]
	if res.heapOn {
		fmt.Fprintf(&b, "; live heap %s -> %s (%s per call)", bytesText(first.heap), bytesText(last.heap), signedBytes(res.heap.perCall))
	}
	if res.gorOn {
		fmt.Fprintf(&b, "; goroutines %.0f -> %.0f", first.goroutines, last.goroutines)
	}
	if res.timedOut {
		fmt.Fprintf(&b, "; stopped at the time limit (%s)", r.cfg.timeLimit)
	}
	switch {
	case r.readLate:
		fmt.Fprintf(&b, "\n  not judged: a reading (its garbage collection) had not ended %s after the time limit: goroutines that never block, which each collection waits behind, may have taken the CPU", readGrace)
	case res.tooFew && (res.hung || res.slow):
		fmt.Fprintf(&b, "\n  not judged: only %d readings before a call of fn stopped returning, %d needed for a verdict", len(r.readings), minConfirmReadings)
	case res.tooFew:
		fmt.Fprintf(&b, "\n  not judged: only %d readings within the time limit (%s), %d needed for a verdict: the machine is too slow for this function at this limit; raise TimeLimit", len(r.readings), r.cfg.timeLimit, minConfirmReadings)
	}
	if res.slow {
		fmt.Fprintf(&b, "\n  %s", strings.ReplaceAll(r.slowText(), "\n", "\n  "))
	}
	if r.spun > 0 && r.cfg.heap {
		fmt.Fprintf(&b, "\n  %s", r.spunText())
	}
	if res.timedOut {
		for _, s := range []struct {
			on   bool
			what string
			g    growth
		}{{res.heapOn, "the live heap's", res.heap}, {res.gorOn, "the goroutines'", res.goroutines}} {
			if s.on && s.g.conf == suspected {
				fmt.Fprintf(&b, "\n  within the time limit, %s growth stayed a suspicion, not confirmed (%s); a longer TimeLimit would tell", s.what, proofText(s.g))
				if s.g.inFlight > 0 {
					fmt.Fprintf(&b, "; %.0f%% of it was memory in flight (allocated %d times over what it holds, or more)", 100*s.g.inFlight, inFlightTurnover)
				}
			}
		}
	}
	return b.String()
}

// message is the failure: what grows and by how much per call, the proof, and where.
func (r *run) message(res result) string {
	var b strings.Builder
	b.WriteString("leaktest: ")
	var what []string
	if res.gorOn && res.goroutines.conf == confirmed {
		what = append(what, "goroutines")
	}
	if res.heapOn && res.heap.conf == confirmed {
		what = append(what, "the live heap")
	}
	verb := "keeps"
	if what[0] == "goroutines" {
		verb = "keep"
	}
	fmt.Fprintf(&b, "%s %s growing with the calls of fn: a leak\n", strings.Join(what, " and "), verb)
	fmt.Fprintf(&b, "  measured over %d rounds of %d calls after %d warm-up calls (%s)\n", len(r.readings)-1, r.perRound, r.warmup, r.elapsed.Round(time.Millisecond))
	var deltas []heapDelta
	if r.baseHeap != nil {
		deltas = diffHeap(r.baseHeap, heapProfile())
	}
	if res.gorOn && res.goroutines.conf == confirmed {
		g := res.goroutines
		fmt.Fprintf(&b, "\ngoroutines: %.3g per call (%.0f -> %.0f over %d calls); %s\n", g.perCall, g.first, g.last, g.calls, proofText(g))
		r.writeGoroutines(&b, deltas)
	}
	if res.heapOn && res.heap.conf == confirmed {
		g := res.heap
		fmt.Fprintf(&b, "\nlive heap: %s per call (%s -> %s over %d calls); %s\n", bytesText(g.perCall), bytesText(g.first), bytesText(g.last), g.calls, proofText(g))
		sites := r.writeHeapSites(&b, deltas)
		if r.cfg.holders && len(sites) > 0 {
			b.WriteString(r.holdersSection(sites))
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// proofText is the statistics of a growth, in words.
func proofText(g growth) string {
	p := fmt.Sprintf("p = %.2g", g.p)
	if g.p < 1e-4 {
		p = "p < 0.0001"
	}
	end := "still rising at the end"
	if g.lateRatio < lateRising || g.lateShare < minLateShare {
		end = "levelling off at the end"
	}
	return fmt.Sprintf("Kendall's tau %.2f, %s (Mann-Kendall), %.0f times the readings' scatter, %s (the last third's slope %.2f of the whole)",
		g.tau, p, math.Min(g.snr, 9999), end, g.lateRatio)
}

// heapSite is one program line whose memory grew, with the library lines under it.
type heapSite struct {
	site  site
	bytes int64
	objs  int64
	libs  []libLine
}

type libLine struct {
	at    frame
	bytes int64
}

// writeHeapSites names where the heap's growth was allocated, largest first, and returns the
// sites it named.
func (r *run) writeHeapSites(b *strings.Builder, deltas []heapDelta) []heapSite {
	if deltas == nil {
		b.WriteString("  (the heap profile could not be read: no allocation site to name)\n")
		return nil
	}
	bySite := map[frame]*heapSite{}
	var total int64
	for _, d := range deltas {
		if d.inUseBytes <= 0 {
			continue
		}
		fr, fromFn := r.attr.frames(d.stack)
		if len(fr) == 0 || r.leftOut(fr) {
			continue // left out of the heap's readings too
		}
		s := r.attr.attribute(fr, fromFn)
		hs := bySite[s.program]
		if hs == nil {
			hs = &heapSite{site: s}
			bySite[s.program] = hs
		}
		hs.bytes += d.inUseBytes
		hs.objs += d.inUseObjects
		total += d.inUseBytes
		i := slices.IndexFunc(hs.libs, func(l libLine) bool { return l.at == s.lib })
		if i < 0 {
			hs.libs = append(hs.libs, libLine{at: s.lib})
			i = len(hs.libs) - 1
		}
		hs.libs[i].bytes += d.inUseBytes
	}
	sites := make([]heapSite, 0, len(bySite))
	for _, hs := range bySite {
		sites = append(sites, *hs)
	}
	slices.SortFunc(sites, func(a, b heapSite) int {
		return cmpDesc(a.bytes, b.bytes, a.site.program.String(), b.site.program.String())
	})
	if total <= 0 {
		b.WriteString("  (no allocation site holds more memory than at the start of the rounds: the growth is the runtime's own)\n")
		return nil
	}
	calls := float64(max(r.calls, 1))
	shown := sites[:0:0]
	for _, hs := range sites {
		if len(shown) == 3 || float64(hs.bytes) < 0.1*float64(total) && len(shown) > 0 {
			break
		}
		shown = append(shown, hs)
		share := 100 * float64(hs.bytes) / float64(total)
		switch {
		case hs.site.elsewhere != "" && hs.site.inFn:
			fmt.Fprintf(b, "  %s per call (%.0f%% of the growth, %.3g objects per call) allocated on %s, under your code at %s\n", bytesText(float64(hs.bytes)/calls), share, float64(hs.objs)/calls, hs.site.elsewhere, hs.site.program.where())
			fmt.Fprintf(b, "    %s\n", hs.site.program)
		case hs.site.elsewhere != "":
			fmt.Fprintf(b, "  %s per call (%.0f%% of the growth, %.3g objects per call) allocated by %s\n", bytesText(float64(hs.bytes)/calls), share, float64(hs.objs)/calls, hs.site.elsewhere)
		case hs.site.inFn:
			fmt.Fprintf(b, "  %s per call (%.0f%% of the growth, %.3g objects per call) allocated under your code at %s\n", bytesText(float64(hs.bytes)/calls), share, float64(hs.objs)/calls, hs.site.program.where())
			fmt.Fprintf(b, "    %s\n", hs.site.program)
		default:
			fmt.Fprintf(b, "  %s per call (%.0f%% of the growth, %.3g objects per call) allocated by fn, which the test at %s passed to Loop\n", bytesText(float64(hs.bytes)/calls), share, float64(hs.objs)/calls, hs.site.program.where())
		}
		slices.SortFunc(hs.libs, func(a, b libLine) int { return cmpDesc(a.bytes, b.bytes, a.at.String(), b.at.String()) })
		for i, l := range hs.libs {
			if i == 3 || float64(l.bytes) < 0.05*float64(hs.bytes) {
				break
			}
			if l.at.fn == "" {
				if hs.site.elsewhere == "" || hs.site.inFn {
					fmt.Fprintf(b, "    %3.0f%% allocated right there\n", 100*float64(l.bytes)/float64(hs.bytes))
				}
				continue
			}
			fmt.Fprintf(b, "    %3.0f%% allocated at %s\n", 100*float64(l.bytes)/float64(hs.bytes), l.at.where())
			fmt.Fprintf(b, "         %s\n", l.at)
		}
	}
	return shown
}

// ignoredStack reports whether a stack holds a function IgnoreSites names.
func ignoredStack(fr []frame, ignore []string) bool {
	for _, f := range fr {
		if slices.Contains(ignore, f.fn) {
			return true
		}
	}
	return false
}

// writeGoroutines names the groups of goroutines that grew: what they wait for and where (or
// that they never wait), their own function and where it is defined, the go statement that
// started them and the line of the program that made them.
func (r *run) writeGoroutines(b *strings.Builder, deltas []heapDelta) {
	if r.baseGroups == nil {
		return
	}
	grown := grownGroups(r.baseGroups, groupGoroutines(r.others(), r.cfg.ignoreTop))
	if len(grown) == 0 {
		b.WriteString("  (no group of goroutines has more than at the start of the rounds)\n")
		return
	}
	total := 0
	for _, g := range grown {
		total += g.added
	}
	defineFuncs(grown, funcStarts())
	// Go 1.27's goroutineleak profile collects the garbage: not behind goroutines that never
	// block, and not for long.
	var proven map[frame]int
	if r.spun == 0 {
		proven, _ = within(time.Now().Add(leakProfileWait), provenLeaked)
	}
	calls := float64(max(r.calls, 1))
	for i, g := range grown {
		if i == 3 || float64(g.added) < 0.1*float64(total) && i > 0 {
			break
		}
		if g.state == "running" {
			fmt.Fprintf(b, "  %d more goroutines [running] (%.3g per call), never blocked: running or ready to run, they take the CPU; one of them was at %s\n", g.added, float64(g.added)/calls, g.wait.where())
		} else {
			fmt.Fprintf(b, "  %d more goroutines [%s] (%.3g per call), waiting at %s\n", g.added, g.state, float64(g.added)/calls, g.wait.where())
		}
		fmt.Fprintf(b, "    %s\n", g.wait)
		if n := proven[g.wait]; n > 0 {
			fmt.Fprintf(b, "    Go's goroutineleak profile proves %d goroutines waiting there leaked (the warm-up's included): blocked on what no running goroutine can reach, they can never run again\n", n)
		}
		if w, ok := r.firstNotStd(g.sample.stack); ok && w != g.wait && g.state != "running" && w.fn != g.fn.fn {
			fmt.Fprintf(b, "    under %s\n", w)
		}
		switch {
		case g.fn.line > 0:
			fmt.Fprintf(b, "    their function, defined at %s\n", g.fn.where())
			fmt.Fprintf(b, "      %s\n", g.fn)
		case g.fn.fn != "":
			fmt.Fprintf(b, "    their function: %s\n", g.fn.fn)
		}
		if g.createdBy.fn != "" {
			fmt.Fprintf(b, "    started by the go statement at %s\n", g.createdBy.where())
			fmt.Fprintf(b, "      %s\n", g.createdBy)
		}
		if r.attr.mods.classify(g.createdBy.fn) == classMain {
			continue // the go statement is the program's own: it made them
		}
		if m, ok := r.maker(g, deltas); ok {
			fmt.Fprintf(b, "    made by your code at %s\n", m.where())
			fmt.Fprintf(b, "      %s\n", m)
		}
	}
	if r.spun > 0 && r.cfg.heap {
		fmt.Fprintf(b, "  (%s)\n", r.spunText())
	}
}

// leakProfileWait is the longest a failure waits for the goroutineleak profile.
const leakProfileWait = 2 * time.Second

// spunText says why the heap was not judged: the calls left goroutines that never block.
func (r *run) spunText() string {
	return fmt.Sprintf("the live heap was not judged: the calls left %d goroutines that never block, behind which every garbage collection waits its turn", r.spun)
}

// firstNotStd is the innermost frame of a stack outside the standard library.
func (r *run) firstNotStd(stack []frame) (frame, bool) {
	for _, f := range stack {
		if c := r.attr.mods.classify(f.fn); c == classMain || c == classDep {
			return f, true
		}
	}
	return frame{}, false
}

// maker is the program's line that made a group of goroutines: the go statement itself when
// it is the program's own, else the program's line under the allocations the go statement's
// function made during the rounds (its closure, the state it hands the goroutine), as the heap
// profile, sampling every allocation, recorded them.
func (r *run) maker(g *goroutineGroup, deltas []heapDelta) (frame, bool) {
	if g.createdBy.fn == "" {
		return frame{}, false
	}
	if r.attr.mods.classify(g.createdBy.fn) == classMain {
		return g.createdBy, true
	}
	best, bestN := frame{}, int64(0)
	for _, d := range deltas {
		if d.allocObjects <= 0 {
			continue
		}
		fr, fromFn := r.attr.frames(d.stack)
		at := slices.IndexFunc(fr, func(f frame) bool { return f.fn == g.createdBy.fn })
		if at < 0 {
			continue
		}
		s := r.attr.attribute(fr, fromFn)
		if !s.inFn {
			continue
		}
		n := d.allocObjects
		if fr[at].line == g.createdBy.line {
			n *= 1000 // the go statement's own line: its closure
		}
		if n > bestN {
			best, bestN = s.program, n
		}
	}
	return best, bestN > 0
}

func cmpDesc(a, b int64, ka, kb string) int {
	if a != b {
		if a > b {
			return -1
		}
		return 1
	}
	return strings.Compare(ka, kb)
}

// bytesText writes a size as people read it: 512 B, 1.5 KiB, 38.4 MiB.
func bytesText(v float64) string {
	a := math.Abs(v)
	switch {
	case a < 1<<10:
		return fmt.Sprintf("%.3g B", v)
	case a < 1<<20:
		return fmt.Sprintf("%.3g KiB", v/(1<<10))
	case a < 1<<30:
		return fmt.Sprintf("%.3g MiB", v/(1<<20))
	}
	return fmt.Sprintf("%.3g GiB", v/(1<<30))
}

func signedBytes(v float64) string {
	if v > 0 {
		return "+" + bytesText(v)
	}
	return bytesText(v)
}
