package words

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/memdoctor/memdoctor/diagnose/rule"
	"github.com/memdoctor/memdoctor/facts"
)

func goroutineLeak(f *Finding, c *rule.GoroutineLeakCase) {
	if g := c.Rise; g != nil {
		f.Title = fmt.Sprintf("goroutines pile up: %+.0f per minute, %.0f -> %.0f", g.PerMinute, g.First, g.Last)
		f.Detail = fmt.Sprintf("The number of goroutines rose from %.0f to %.0f over %s, judged on its lows (%s; Kendall's tau %.2f, "+
			"Mann-Kendall %s over %d readings), and is %s at the end. Goroutines that never return keep their stacks and everything they reference.",
			g.First, g.Last, humanDuration(g.Span.Seconds()), c.Src, g.Tau, pValue(g.P), g.N, risingWord(*g))
		f.Evidence["goroutines_start_count"] = g.First
		f.Evidence["goroutines_end_count"] = g.Last
		f.Evidence["growth_goroutines_per_minute"] = g.PerMinute
		f.Evidence["window_seconds"] = g.Span.Seconds()
		f.Evidence["kendall_tau"] = g.Tau
		f.Evidence["mann_kendall_p"] = g.P
		if g.Confidence == rule.Suspected {
			f.Title = fmt.Sprintf("goroutines may be piling up: %.0f -> %.0f", g.First, g.Last)
			f.Detail += notYet(g.WatchMore)
		}
	}
	if p := c.Proof; p != nil {
		f.Evidence["leaked_goroutines_count"] = p.Leaked
		proof := fmt.Sprintf("The runtime's leak detector (the goroutineleak profile) proved %.0f goroutine(s) blocked forever on something no running goroutine can reach.", p.Leaked)
		if f.Title == "" {
			f.Title = fmt.Sprintf("%.0f goroutines leaked, proved by the runtime's leak detector", p.Leaked)
		}
		f.Detail = strings.TrimSpace(proof + " " + f.Detail)
		if s := p.Top; s != nil {
			f.Title = fmt.Sprintf("%.0f goroutines leaked (proved): %d blocked forever in %s in %s", p.Leaked, s.Count, rule.WaitState(s.GoroutineGroup), s.Blocking)
			f.Advice = append(f.Advice, goroutineAdvice(s.GoroutineGroup)...)
		}
		if p.Snap != "" {
			f.Advice = append(f.Advice, "See the leaked goroutines' stacks: go tool pprof -traces "+p.Snap)
		}
	}
	if sd := c.Shutdown; sd != nil {
		f.Detail += fmt.Sprintf(" Then the service shut down: its goroutines fell from %.0f to %.0f in %s and it went away; a shutdown ends its goroutines, it does not undo what piled up before, so they are judged up to it.",
			sd.From, sd.To, humanDuration(sd.Span.Seconds()))
	}
	if n := c.PinnedStacks; n > 0 {
		f.Evidence["pinned_stack_bytes"] = n
		f.Detail += fmt.Sprintf(" The new ones pin about %s of stacks alone.", bytesStr(n))
	}
	if b := c.Blame; b != nil {
		if g := b.Top; g != nil {
			if b.Titled {
				f.Title = fmt.Sprintf("goroutines pile up (%+.0f/min): %d more %s in %s", c.Rise.PerMinute, b.Delta, waiting(rule.WaitState(g.GoroutineGroup)), g.Blocking)
			}
			f.Detail += fmt.Sprintf(" The largest growing site: %d more goroutines %s at %s, started by %s.",
				b.Delta, waiting(rule.WaitState(g.GoroutineGroup)), g.Blocking, g.CreatedBy)
			if rule.WaitState(g.GoroutineGroup) == "running" {
				f.Detail += " They were never parked: goroutines that grow are a leak whatever their state, and these spin on the CPU besides, which starves the rest of the service (its pprof included) as they pile up."
			}
		}
		if n := c.ByCensus; n > 0 && c.Rise != nil && c.CensusOf != "" {
			f.Detail += fmt.Sprintf(" The %d goroutine counts do not confirm the rise by their order alone (other goroutines came and went around it); each of the %d goroutine profiles holds more goroutines started in %s than the one before (those that run are caught at a different line in each), and they made most of the growth: the census confirms it.", c.Rise.N, n, c.CensusOf)
		} else if n > 0 && c.Rise != nil && b.Top != nil {
			f.Detail += fmt.Sprintf(" %d goroutine counts are too few to confirm the rise by their order alone; each of the %d goroutine profiles holds more goroutines at that site than the one before, and that site made most of the growth: the census confirms it.", c.Rise.N, n)
		}
		if c.Spinning > 0 {
			f.Detail += fmt.Sprintf(" The count rose more slowly at the end, yet %.0f%% of these goroutines were caught running or runnable, never parked: they spin, and take the CPU from the service that makes them, which then makes fewer of them; a pool warming up would wait parked.", 100*c.Spinning)
		}
		f.Advice = append(f.Advice, fmt.Sprintf("Compare the goroutine snapshots: go tool pprof -diff_base %s %s", b.Old, b.New))
		if b.Top != nil {
			f.Advice = append(f.Advice, goroutineAdvice(b.Top.GoroutineGroup)...)
		}
	}
	if m := c.Made; m != nil && len(m.Makers) > 0 {
		f.Detail += madeBy(m)
	}
	if p := c.OnlyProfile; p != nil {
		f.Detail += fmt.Sprintf(" In the only goroutine profile read, %d of its %d goroutines (%.1f%%) wait in %s at %s, started by %s: a pile-up, most likely the goroutines that grow (a second profile tells which site grew).",
			p.Top.Count, p.Total, 100*p.Share, p.State, p.Top.Culprit.Function, orGap(p.Top.CreatedBy, "an unknown creator"))
		f.Advice = append(f.Advice, goroutineAdvice(p.Top.GoroutineGroup)...)
		f.Advice = append(f.Advice, "See their stacks: go tool pprof -traces "+p.Snap)
	}
	if c.Unnamed {
		f.Detail += unnamedGoroutines(c.Stacks)
		f.Advice = append(f.Advice, "See where they wait: go tool pprof -traces on a goroutine profile of the service (/debug/pprof/goroutine), or memdoctor watch by PID, which reads the stacks from the process's memory when its pprof cannot serve them.")
	}
	f.Advice = append(f.Advice, "Give every goroutine a way out: a context it watches, a buffered or closed channel for its result, and Close on every response body (defer resp.Body.Close() right after the error check).")
	if h := c.Holds; h != nil {
		f.Evidence["heap_held_bytes"] = h.Bytes
		f.Detail += fmt.Sprintf(" The live heap grew %s with them, about %s per goroutine: what they hold.", bytesStr(h.Bytes), bytesStr(h.Bytes/h.Goroutines))
		if c.ByHeap && c.Rise != nil {
			f.Detail += fmt.Sprintf(" %d goroutine counts are too few to confirm the rise alone; the live heap's growth, confirmed over its own readings and no more than what the new goroutines hold, confirms it.", c.Rise.N)
		}
	}
}

func pileUp(f *Finding, c *rule.PileUpCase) {
	top := c.Top
	f.Title = fmt.Sprintf("one goroutine profile: %d of its %d goroutines (%.1f%%) are blocked in %s at %s: a pile-up, or a large idle pool",
		top.Count, c.Total, 100*c.Share, c.State, top.Culprit.Function)
	f.Detail = fmt.Sprintf("This is one snapshot, not a trend. One site holds %.1f%% of the goroutines, blocked in %s and started by %s; "+
		"a service's steady goroutines spread over many sites, while goroutines that never return pile up at one. "+
		"A single profile cannot tell a pile-up from a large pool of idle workers: take a second goroutine profile a few minutes later "+
		"and compare them (memdoctor diff OLD NEW): a pile-up grows.", 100*c.Share, c.State, orGap(top.CreatedBy, "an unknown creator"))
	f.Evidence = map[string]float64{
		"goroutines_count":          float64(c.Total),
		"top_site_goroutines_count": float64(top.Count),
		"top_site_share_fraction":   c.Share,
		"pile_up_share_fraction":    c.MinShare,
		"pile_up_min_count":         float64(c.MinCount),
	}
	if top.WaitMinutes > 0 {
		f.Evidence["longest_wait_seconds"] = 60 * float64(top.WaitMinutes)
		f.Detail += fmt.Sprintf(" The longest of them has waited %d minute(s).", top.WaitMinutes)
	}
	if top.Leaked > 0 {
		f.Evidence["leaked_goroutines_count"] = float64(top.Leaked)
		f.Detail += fmt.Sprintf(" The runtime's leak detector marked %d of them leaked.", top.Leaked)
	}
	if c.PinnedStacks > 0 {
		f.Evidence["pinned_stack_bytes"] = c.PinnedStacks
	}
	f.Advice = append(goroutineAdvice(top.GoroutineGroup), "See their stacks: go tool pprof -traces "+c.Snap)
}

// goroutineAdvice is specific advice for the largest growing group.
func goroutineAdvice(g facts.StackGroup) []string {
	stack := strings.Join(g.Stack, " ")
	switch state := rule.WaitState(g); {
	case strings.Contains(stack, "net/http.(*persistConn)"):
		return []string{"These are HTTP client connections kept alive by response bodies nobody closed or drained: close every resp.Body (also on error paths and when the status is not 200)."}
	case state == "chan send":
		return []string{"The senders block because nobody receives any more (the receiver returned on a timeout or error): make the channel buffered with room for every sender, or select on ctx.Done() when sending."}
	case state == "chan receive":
		return []string{"The receivers wait for a value or a close that never comes: close the channel when the producer is done, or select on ctx.Done()."}
	case state == "running":
		return []string{"These goroutines never block: a loop that polls without waiting (a zero or missing period, a time.Sleep(0), a select with a default case) spins on the CPU. Give it a real period (a time.Ticker) and a way out on every path: close its stop channel, or cancel its context, when what it follows ends, cancellations and errors included."}
	case state == "IO wait":
		return []string{"The goroutines wait on network reads that never end: set deadlines (SetReadDeadline, http.Client.Timeout, server ReadTimeout/IdleTimeout)."}
	}
	return nil
}

// shortFuncs shortens each of fns (shortFunc).
func shortFuncs(fns []string) []string {
	out := make([]string, len(fns))
	for i, f := range fns {
		out[i] = shortFunc(f)
	}
	return out
}

// waiting says where goroutines are: blocked in a wait state, or running (not parked: they
// spin).
func waiting(state string) string {
	if state == "running" || state == "runnable" {
		return "running (never blocked)"
	}
	return "blocked in " + state
}

// madeBy says which of the program's functions made goroutines that run a library's code,
// and at which of its calls.
func madeBy(m *facts.Made) string {
	top := m.Makers[0]
	s := fmt.Sprintf(" The goroutines that grew run %s's code, with no frame of the program in their stacks; the program's code that made them is %s",
		strings.Join(m.Libs, " and "), top.Site.Function)
	if at := callAt(top); at != "" {
		s += ", " + at
	}
	switch {
	case top.LineBy == facts.LineBySource:
		s += fmt.Sprintf(", which reaches the go statement that starts them (%s, read in the program's source)", strings.Join(shortFuncs(top.Via), " -> "))
	case m.By == facts.MadeByCreator:
		s += fmt.Sprintf(", whose calls reached %s, the function whose go statement started them (the goroutine profiles' \"created by\")",
			strings.Join(m.Creators, " and "))
	case m.By == facts.MadeByConstructor && top.Call != "":
		s += fmt.Sprintf(" (%s makes the value they serve: the program calls that value's methods afterwards, and its goroutines come with it)", shortFunc(top.Call))
	}
	if top.LineBy == facts.LineByAllocation && m.By != facts.MadeByCreator {
		s += "; that line is the function's call into the library through which most was allocated: the runtime's profiles do not record which call started them, and the program's source, where it is at hand, reaches their go statement through no static call of the function"
	}
	if top.Held > 0 {
		s += fmt.Sprintf(". What was allocated through those calls into %s and is still in use grew %s from the first heap profile to the last: what the leaked goroutines hold (the requests a leaked connection carries, a library's buffers).",
			m.Libs[0], bytesStr(float64(top.Held)))
	} else {
		s += fmt.Sprintf(". It allocated %s through those calls into %s since the program started (the last heap profile's count).", bytesStr(float64(top.Allocated)), m.Libs[0])
		if len(m.Makers) > 1 {
			others := fmt.Sprintf("%d other functions (%s first)", len(m.Makers)-1, m.Makers[1].Site.Function)
			if len(m.Makers) == 2 {
				others = "another function, " + m.Makers[1].Site.Function + ","
			}
			s += fmt.Sprintf(" The program calls %s from %s too, and the heap profiles sampled nothing still in use through any of them: which one leaves the goroutines behind is ranked by what each allocated, not proved (a longer watch samples what they retain).",
				m.Libs[0], others)
		}
	}
	switch {
	case slices.Contains(m.Libs, "net/http"):
		s += " An HTTP client's connection keeps its two goroutines until its response body is read to the end or closed: look there for a return that skips resp.Body.Close()."
	case (m.By == facts.MadeByConstructor || m.By == facts.MadeByCreator) && top.Call != "":
		s += fmt.Sprintf(" What %s returns keeps its goroutines until it is closed: make it once and share it, or Close it when done.", shortFunc(top.Call))
	}
	return s
}

// callAt says where a maker's call is: "its call to database/sql.Open at ledger.go:85".
func callAt(mk facts.Maker) string {
	var s string
	if mk.Call != "" {
		s = "its call to " + mk.Call
	}
	at := ""
	switch {
	case mk.Site.Line > 0 && mk.Site.File != "":
		at = fmt.Sprintf("at %s:%d", path.Base(mk.Site.File), mk.Site.Line)
	case mk.Site.Line > 0:
		at = fmt.Sprintf("at line %d", mk.Site.Line)
	}
	return strings.TrimSpace(s + " " + at)
}

// unnamedGoroutines says that a goroutine leak's code is not known, and why.
func unnamedGoroutines(profiles int) string {
	why := "no goroutine profile was read"
	switch profiles {
	case 1:
		why = "only one goroutine profile was read, and it takes two to see which site grew"
	case 2:
		why = "the goroutine profiles compared showed no site that grew"
	}
	return fmt.Sprintf(" Which code starts them and where they wait is not known: %s (the count alone showed the growth).", why)
}
