package leaktest

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// summary is the line a passing Loop logs (go test -v shows it).
func (rep *Report) summary() string {
	var b strings.Builder
	verdict := "no leak"
	if rep.TooFew {
		verdict = "not judged"
	}
	fmt.Fprintf(&b, "leaktest: %s in %d rounds of %d %ss (%s)", verdict, rep.Rounds, rep.CallsPerRound, rep.Unit, rep.Elapsed.Round(time.Millisecond))
	if h := rep.Heap; h != nil {
		fmt.Fprintf(&b, "; live heap %s -> %s (%s per %s)", bytesText(h.Start), bytesText(h.End), signedBytes(h.PerCall), rep.Unit)
	}
	if g := rep.Goroutines; g != nil {
		fmt.Fprintf(&b, "; goroutines %.0f -> %.0f", g.Start, g.End)
	}
	if rep.TimedOut {
		fmt.Fprintf(&b, "; stopped at the time limit (%s)", rep.TimeLimit)
	}
	if rep.TooFew || rep.ReadLate {
		fmt.Fprintf(&b, "\n  not judged: %s", rep.tooFewText())
	}
	if rep.Slow != "" {
		fmt.Fprintf(&b, "\n  %s", strings.ReplaceAll(rep.Slow, "\n", "\n  "))
	}
	if rep.Spinning > 0 {
		fmt.Fprintf(&b, "\n  %s", rep.spunText())
	}
	if rep.TimedOut {
		for _, s := range rep.suspicions() {
			fmt.Fprintf(&b, "\n  %s", s)
		}
	}
	return b.String()
}

// tooFewText says why a run is not judged: too few readings, or a reading late.
func (rep *Report) tooFewText() string {
	switch {
	case rep.ReadLate:
		return fmt.Sprintf("a reading (its garbage collection) had not ended %s after the time limit: goroutines that never block, which each collection waits behind, may have taken the CPU", readGrace)
	case rep.Hung != "" || rep.Slow != "":
		return fmt.Sprintf("only %d readings before a %s of %s stopped returning, %d needed for a verdict", rep.Rounds+1, rep.Unit, rep.of, minConfirmReadings)
	}
	within := fmt.Sprintf("within the time limit (%s)", rep.TimeLimit)
	if rep.extended {
		within = fmt.Sprintf("in %d times the time limit (%s)", maxLimits, maxLimits*rep.TimeLimit)
	}
	return fmt.Sprintf("only %d readings %s, %d needed for a verdict: the machine is too slow for this function at this limit; raise TimeLimit", rep.Rounds+1, within, minConfirmReadings)
}

// spunText says why the heap was not judged: the calls left goroutines that never block.
func (rep *Report) spunText() string {
	return fmt.Sprintf("the live heap was not judged: the %ss left %d goroutines that never block, behind which every garbage collection waits its turn", rep.Unit, rep.Spinning)
}

// suspicions says, for a run the time limit stopped, each growth that stayed a suspicion.
func (rep *Report) suspicions() []string {
	var out []string
	for _, s := range []struct {
		what string
		s    *Series
	}{{"the live heap's", rep.Heap}, {"the goroutines'", rep.Goroutines}} {
		if s.s == nil || s.s.Verdict != VerdictSuspected {
			continue
		}
		line := fmt.Sprintf("within the time limit, %s growth stayed a suspicion, not confirmed (%s); a longer TimeLimit would tell", s.what, s.s.Proof)
		if s.s.InFlight > 0 {
			line += fmt.Sprintf("; %.0f%% of it was memory in flight (allocated %d times over what it holds, or more)", 100*s.s.InFlight, inFlightTurnover)
		}
		out = append(out, line)
	}
	return out
}

// reason says why a run that did not fail is not judged, or what stayed a suspicion.
func (rep *Report) reason() string {
	switch {
	case rep.Hung != "":
		return strings.TrimPrefix(rep.Hung, "leaktest: ")
	case rep.TooFew || rep.ReadLate:
		return rep.tooFewText()
	case rep.TimedOut:
		return strings.Join(rep.suspicions(), "\n")
	}
	return ""
}

// message is the failure: what grows and by how much per call, the proof, and where.
func (rep *Report) message() string {
	var b strings.Builder
	b.WriteString("leaktest: ")
	gor := rep.Goroutines != nil && rep.Goroutines.Verdict == VerdictLeak
	heap := rep.Heap != nil && rep.Heap.Verdict == VerdictLeak
	var what []string
	if gor {
		what = append(what, "goroutines")
	}
	if heap {
		what = append(what, "the live heap")
	}
	verb := "keeps"
	if what[0] == "goroutines" {
		verb = "keep"
	}
	u := rep.Unit
	fmt.Fprintf(&b, "%s %s growing with the %ss of %s: a leak\n", strings.Join(what, " and "), verb, u, rep.of)
	fmt.Fprintf(&b, "  measured over %d rounds of %d %ss after %d warm-up %ss (%s)\n", rep.Rounds, rep.CallsPerRound, u, rep.WarmupCalls, u, rep.Elapsed.Round(time.Millisecond))
	if gor {
		g := rep.Goroutines
		fmt.Fprintf(&b, "\ngoroutines: %.3g per %s (%.0f -> %.0f over %d %ss); %s\n", g.PerCall, u, g.First, g.Last, g.Calls, u, g.Proof)
		rep.writeGoroutines(&b)
	}
	if heap {
		g := rep.Heap
		fmt.Fprintf(&b, "\nlive heap: %s per %s (%s -> %s over %d %ss); %s\n", bytesText(g.PerCall), u, bytesText(g.First), bytesText(g.Last), g.Calls, u, g.Proof)
		rep.writeHeapSites(&b)
		b.WriteString(rep.Holders)
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

// writeHeapSites names where the heap's growth was allocated, largest first.
func (rep *Report) writeHeapSites(b *strings.Builder) {
	if rep.HeapNote != "" {
		b.WriteString("  " + rep.HeapNote + "\n")
		return
	}
	u := rep.Unit
	for _, hs := range rep.HeapSites {
		prog := hs.Program.frame()
		amount := fmt.Sprintf("%s per %s (%.0f%% of the growth, %.3g objects per %s)", bytesText(hs.BytesPerCall), u, 100*hs.Share, hs.ObjectsPerCall, u)
		switch {
		case hs.Elsewhere != "" && hs.InFn:
			fmt.Fprintf(b, "  %s allocated on %s, under your code at %s\n", amount, hs.Elsewhere, prog.where())
			fmt.Fprintf(b, "    %s\n", prog)
		case hs.Elsewhere != "":
			fmt.Fprintf(b, "  %s allocated by %s\n", amount, hs.Elsewhere)
		case hs.InFn:
			fmt.Fprintf(b, "  %s allocated under your code at %s\n", amount, prog.where())
			fmt.Fprintf(b, "    %s\n", prog)
		default:
			if rep.of == "fn" {
				fmt.Fprintf(b, "  %s allocated by fn, which the test at %s passed to Loop\n", amount, prog.where())
			} else {
				fmt.Fprintf(b, "  %s allocated by %s at %s\n", amount, rep.of, prog.where())
			}
		}
		for _, l := range hs.Libs {
			if l.At.Function == "" {
				if hs.Elsewhere == "" || hs.InFn {
					fmt.Fprintf(b, "    %3.0f%% allocated right there\n", 100*l.Share)
				}
				continue
			}
			fmt.Fprintf(b, "    %3.0f%% allocated at %s\n", 100*l.Share, l.At.frame().where())
			fmt.Fprintf(b, "         %s\n", l.At)
		}
	}
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
func (rep *Report) writeGoroutines(b *strings.Builder) {
	if rep.GroupsNote != "" {
		b.WriteString("  " + rep.GroupsNote + "\n")
	}
	for _, g := range rep.Groups {
		if g.State == "running" {
			fmt.Fprintf(b, "  %d more goroutines [running] (%.3g per %s), never blocked: running or ready to run, they take the CPU; one of them was at %s\n", g.Added, g.PerCall, rep.Unit, g.Wait.frame().where())
		} else {
			fmt.Fprintf(b, "  %d more goroutines [%s] (%.3g per %s), waiting at %s\n", g.Added, g.State, g.PerCall, rep.Unit, g.Wait.frame().where())
		}
		fmt.Fprintf(b, "    %s\n", g.Wait)
		if n := g.ProvenLeaked; n > 0 {
			fmt.Fprintf(b, "    Go's goroutineleak profile proves %d goroutines waiting there leaked (the warm-up's included): blocked on what no running goroutine can reach, they can never run again\n", n)
		}
		if g.Under.Function != "" {
			fmt.Fprintf(b, "    under %s\n", g.Under)
		}
		switch {
		case g.Function.Line > 0:
			fmt.Fprintf(b, "    their function, defined at %s\n", g.Function.frame().where())
			fmt.Fprintf(b, "      %s\n", g.Function)
		case g.Function.Function != "":
			fmt.Fprintf(b, "    their function: %s\n", g.Function.Function)
		}
		if g.CreatedBy.Function != "" {
			fmt.Fprintf(b, "    started by the go statement at %s\n", g.CreatedBy.frame().where())
			fmt.Fprintf(b, "      %s\n", g.CreatedBy)
		}
		if g.MadeBy.Function != "" {
			fmt.Fprintf(b, "    made by your code at %s\n", g.MadeBy.frame().where())
			fmt.Fprintf(b, "      %s\n", g.MadeBy)
		}
	}
	if rep.Spinning > 0 {
		fmt.Fprintf(b, "  (%s)\n", rep.spunText())
	}
}

// leakProfileWait is the longest a failure waits for the goroutineleak profile.
const leakProfileWait = 2 * time.Second

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
