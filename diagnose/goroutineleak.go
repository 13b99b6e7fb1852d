package diagnose

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/memdoctor/memdoctor/facts"
)

// What growth of the goroutine count's floor matters.
var gleakLimits = limits{minAbs: 30, minRel: 0.3, minSpan: 10 * time.Second}

// Thresholds of the proof by the goroutineleak profile.
const (
	// provenWarn: this many goroutines proved leaked is worth a warning on its own.
	provenWarn = 20
	// gleakCritical: goroutines per minute from which a confirmed leak is critical.
	gleakCritical = 1000
)

// goroutineLeak reports goroutines that pile up: proved by the runtime's leak detector (the
// goroutineleak profile: blocked forever on something nobody can reach), or a goroutine
// count whose floor grows for good. It names the sites where the new goroutines block.
func goroutineLeak(in *input) outcome {
	fs := in.f
	proof := fs.Goroutine.Proof
	s := &fs.Goroutines
	if s.Empty() && proof == nil {
		return cannot(KindGoroutineLeak, 0, "goroutines were never counted: %s", fs.Gaps[facts.GapGoroutines])
	}
	var g growth
	if !s.Empty() {
		g = judgeGrowth(fs.Goroutine.Floor, gleakLimits, 1)
	}
	if proof == nil && !g.judged {
		if fs.Goroutine.Single != nil && s.Len() <= 1 {
			if f, ok := in.pileUp(); ok {
				return found(f)
			}
			return cannot(KindGoroutineLeak, 0, "one goroutine profile is a snapshot: no blocked site of the program holds %s of its goroutines "+
				"and %d or more (its sites are listed); whether they pile up needs two or more profiles taken minutes apart", pct(pileUpShare), pileUpCount)
		}
		return cannot(KindGoroutineLeak, g.watchMore, "%d goroutine count(s) over %s: a trend needs %s or more",
			s.Len(), humanDuration(s.Span().Seconds()), humanDuration(gleakLimits.minSpan.Seconds()))
	}
	if proof == nil && g.conf == "" {
		return outcome{}
	}
	f := Finding{Kind: KindGoroutineLeak, Severity: Warning, Confidence: g.conf, WatchMoreSeconds: g.watchMore.Seconds(), Evidence: map[string]float64{}}
	perMin := 0.0
	if g.conf != "" {
		perMin = g.perMinute()
		f.Title = fmt.Sprintf("goroutines pile up: %+.0f per minute, %.0f -> %.0f", perMin, g.first, g.last)
		f.Detail = fmt.Sprintf("The number of goroutines rose from %.0f to %.0f over %s, judged on its lows (%s; Kendall's tau %.2f, "+
			"Mann-Kendall p=%.2g over %d readings), and is %s at the end. Goroutines that never return keep their stacks and everything they reference.",
			g.first, g.last, humanDuration(g.span.Seconds()), s.Src, g.tau, g.p, g.n, risingWord(g))
		f.Evidence["goroutines_start_count"] = g.first
		f.Evidence["goroutines_end_count"] = g.last
		f.Evidence["growth_goroutines_per_minute"] = perMin
		f.Evidence["window_seconds"] = g.span.Seconds()
		f.Evidence["kendall_tau"] = g.tau
		f.Evidence["mann_kendall_p"] = g.p
		f.Start, f.End = s.First().T, s.Last().T
		if g.conf == Suspected {
			f.Title = fmt.Sprintf("goroutines may be piling up: %.0f -> %.0f", g.first, g.last)
			f.Detail += fmt.Sprintf(" Not yet proved: watch about %s more to confirm or dismiss it.", humanDuration(g.watchMore.Seconds()))
		}
	}
	if proof != nil {
		in.addProof(&f, proof, g)
	}
	if n, ok := pinnedStacks(fs, f.Evidence["goroutines_end_count"]-f.Evidence["goroutines_start_count"]); ok {
		f.Evidence["pinned_stack_bytes"] = n
		f.Detail += fmt.Sprintf(" The new ones pin about %s of stacks alone.", bytesStr(n))
	}
	if f.Confidence == Confirmed && perMin > gleakCritical {
		f.Severity = Critical
	}
	if proof == nil || len(f.Culprits) == 0 {
		in.blameGoroutines(&f, perMin)
	}
	f.Advice = append(f.Advice, "Give every goroutine a way out: a context it watches, a buffered or closed channel for its result, and Close on every response body (defer resp.Body.Close() right after the error check).")
	return found(f)
}

// pinnedStacks estimates the stack memory of n more goroutines, from the latest stacks total.
func pinnedStacks(fs *facts.Facts, n float64) (float64, bool) {
	g := fs.Goroutines.Last().V
	st := fs.Stacks.Last().V
	if n <= 0 || g <= 0 || st <= 0 {
		return 0, false
	}
	return st / g * n, true
}

// addProof makes the finding a proved leak and names the leaked goroutines' sites.
func (in *input) addProof(f *Finding, p *facts.LeakProof, g growth) {
	f.Confidence, f.WatchMoreSeconds = Confirmed, 0
	if p.Leaked < provenWarn && (p.Readings < 2 || p.Leaked <= p.First) && g.conf != Confirmed {
		f.Severity = Info // a handful of leaked goroutines, not growing: a bug, not yet a memory problem
	}
	f.Evidence["leaked_goroutines_count"] = p.Leaked
	proof := fmt.Sprintf("The runtime's leak detector (the goroutineleak profile) proved %.0f goroutine(s) blocked forever on something no running goroutine can reach.", p.Leaked)
	if f.Title == "" {
		f.Title = fmt.Sprintf("%.0f goroutines leaked, proved by the runtime's leak detector", p.Leaked)
		f.Start, f.End = p.At.T, p.At.T
	}
	f.Detail = strings.TrimSpace(proof + " " + f.Detail)
	if !p.HasSnap {
		return
	}
	sites, err := p.Sites, p.SitesErr
	if err != nil {
		in.notef("goroutine-leak: %v", err)
		return
	}
	var total int
	for _, s := range sites {
		total += s.Count
	}
	for i, s := range sites {
		f.Culprits = append(f.Culprits, Culprit{
			Function: s.Culprit.Function, File: s.Culprit.File, Line: s.Culprit.Line,
			Count: int64(s.Count), Share: float64(s.Count) / math.Max(float64(total), 1), Stack: s.Stack, Own: s.Culprit.Own,
		})
		if i == 0 {
			f.Title = fmt.Sprintf("%.0f goroutines leaked (proved): %d blocked forever in %s in %s", p.Leaked, s.Count, waitState(s.GoroutineGroup), s.Blocking)
			f.Advice = append(f.Advice, goroutineAdvice(s.GoroutineGroup)...)
		}
	}
	f.Culprits = keepCulprits(f.Culprits, 5)
	f.Profiles = []string{p.Snap.Path}
	f.Advice = append(f.Advice, "See the leaked goroutines' stacks: go tool pprof -traces "+p.Snap.Path)
}

// blameGoroutines names the sites whose goroutines grew between the first and last goroutine
// snapshots, and gives advice for the largest.
func (in *input) blameGoroutines(f *Finding, perMin float64) {
	gr := &in.f.Goroutine
	if !gr.GrowthPair {
		return
	}
	old, new := gr.Old, gr.New
	groups, err := gr.Growth, gr.GrowthErr
	if err != nil {
		in.notef("goroutine-leak: %v", err)
	}
	var total int
	for _, g := range groups {
		total += g.Delta
	}
	for i, g := range groups {
		f.Culprits = append(f.Culprits, Culprit{
			Function: g.Site.Culprit.Function, File: g.Site.Culprit.File, Line: g.Site.Culprit.Line,
			Count: int64(g.Delta), Share: float64(g.Delta) / math.Max(float64(total), 1),
			Stack: g.Site.Stack, Own: g.Site.Culprit.Own,
		})
		if i == 0 {
			if f.Confidence == Confirmed && f.Evidence["leaked_goroutines_count"] == 0 {
				f.Title = fmt.Sprintf("goroutines pile up (%+.0f/min): %d more blocked in %s in %s", perMin, g.Delta, waitState(g.Site.GoroutineGroup), g.Site.Blocking)
			}
			f.Detail += fmt.Sprintf(" The largest growing site: %d more goroutines blocked in %s at %s, started by %s.",
				g.Delta, waitState(g.Site.GoroutineGroup), g.Site.Blocking, g.Site.CreatedBy)
		}
	}
	f.Culprits = keepCulprits(f.Culprits, 5)
	f.Profiles = []string{old.Path, new.Path}
	f.Advice = append(f.Advice, fmt.Sprintf("Compare the goroutine snapshots: go tool pprof -diff_base %s %s", old.Path, new.Path))
	if len(groups) > 0 {
		f.Advice = append(f.Advice, goroutineAdvice(groups[0].Site.GoroutineGroup)...)
	}
}
