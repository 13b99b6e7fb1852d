package diagnose

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/memdoctor/memdoctor/evidence"
)

func init() { register(KindGoroutineLeak, goroutineLeak) }

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
	ev := in.ev
	proof := in.leakProof()
	s := &ev.Goroutines
	if s.Empty() && proof == nil {
		return cannot(KindGoroutineLeak, 0, "goroutines were never counted: %s", ev.Gaps[evidence.GapGoroutines])
	}
	var g growth
	if !s.Empty() {
		g = judgeGrowth(floor(settled(ev, s.Points)), gleakLimits, 1)
	}
	if proof == nil && !g.judged {
		if snap, one := singleSnapshot(ev.GoroutineSnaps); one && s.Len() <= 1 {
			if f, ok := in.pileUp(snap); ok {
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
	if n, ok := pinnedStacks(ev, f.Evidence["goroutines_end_count"]-f.Evidence["goroutines_start_count"]); ok {
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
func pinnedStacks(ev *evidence.Evidence, n float64) (float64, bool) {
	g := ev.Goroutines.Last().V
	st := ev.Stacks.Last().V
	if n <= 0 || g <= 0 || st <= 0 {
		return 0, false
	}
	return st / g * n, true
}

// leakProof is what the goroutineleak profiles proved: the last snapshot with leaked
// goroutines and its count, growing or not.
type leakProof struct {
	snap     evidence.Snapshot
	hasSnap  bool
	first    float64 // leaked goroutines at the first reading
	leaked   float64 // ... at the last
	at       time.Time
	readings int
}

func (in *input) leakProof() *leakProof {
	ev := in.ev
	s := &ev.Leaked
	if s.Empty() {
		return nil
	}
	last := s.Last()
	if last.V <= 0 {
		return nil
	}
	p := &leakProof{first: s.First().V, leaked: last.V, at: last.T, readings: s.Len()}
	if n := len(ev.LeakSnaps); n > 0 {
		p.snap, p.hasSnap = ev.LeakSnaps[n-1], true
	}
	return p
}

// addProof makes the finding a proved leak and names the leaked goroutines' sites.
func (in *input) addProof(f *Finding, p *leakProof, g growth) {
	f.Confidence, f.WatchMoreSeconds = Confirmed, 0
	if p.leaked < provenWarn && (p.readings < 2 || p.leaked <= p.first) && g.conf != Confirmed {
		f.Severity = Info // a handful of leaked goroutines, not growing: a bug, not yet a memory problem
	}
	f.Evidence["leaked_goroutines_count"] = p.leaked
	proof := fmt.Sprintf("The runtime's leak detector (the goroutineleak profile) proved %.0f goroutine(s) blocked forever on something no running goroutine can reach.", p.leaked)
	if f.Title == "" {
		f.Title = fmt.Sprintf("%.0f goroutines leaked, proved by the runtime's leak detector", p.leaked)
		f.Start, f.End = p.at, p.at
	}
	f.Detail = strings.TrimSpace(proof + " " + f.Detail)
	if !p.hasSnap {
		return
	}
	sites, err := in.ev.GoroutineSites(p.snap)
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
			f.Title = fmt.Sprintf("%.0f goroutines leaked (proved): %d blocked forever in %s in %s", p.leaked, s.Count, waitState(s.GoroutineGroup), s.Blocking)
			f.Advice = append(f.Advice, goroutineAdvice(s.GoroutineGroup)...)
		}
	}
	f.Culprits = keepCulprits(f.Culprits, 5)
	f.Profiles = []string{p.snap.Path}
	f.Advice = append(f.Advice, "See the leaked goroutines' stacks: go tool pprof -traces "+p.snap.Path)
}

// blameGoroutines names the sites whose goroutines grew between the first and last goroutine
// snapshots, and gives advice for the largest.
func (in *input) blameGoroutines(f *Finding, perMin float64) {
	var refs []evidence.Snapshot
	for _, s := range in.ev.GoroutineSnaps {
		if s.Periodic() {
			refs = append(refs, s)
		}
	}
	if len(refs) < 2 {
		return
	}
	old, new := refs[0], refs[len(refs)-1]
	groups, err := in.growingSites(old, new)
	if err != nil {
		in.notef("goroutine-leak: %v", err)
	}
	var total int
	for _, g := range groups {
		total += g.delta
	}
	for i, g := range groups {
		f.Culprits = append(f.Culprits, Culprit{
			Function: g.site.Culprit.Function, File: g.site.Culprit.File, Line: g.site.Culprit.Line,
			Count: int64(g.delta), Share: float64(g.delta) / math.Max(float64(total), 1),
			Stack: g.site.Stack, Own: g.site.Culprit.Own,
		})
		if i == 0 {
			if f.Confidence == Confirmed && f.Evidence["leaked_goroutines_count"] == 0 {
				f.Title = fmt.Sprintf("goroutines pile up (%+.0f/min): %d more blocked in %s in %s", perMin, g.delta, waitState(g.site.GoroutineGroup), g.site.Blocking)
			}
			f.Detail += fmt.Sprintf(" The largest growing site: %d more goroutines blocked in %s at %s, started by %s.",
				g.delta, waitState(g.site.GoroutineGroup), g.site.Blocking, g.site.CreatedBy)
		}
	}
	f.Culprits = keepCulprits(f.Culprits, 5)
	f.Profiles = []string{old.Path, new.Path}
	f.Advice = append(f.Advice, fmt.Sprintf("Compare the goroutine snapshots: go tool pprof -diff_base %s %s", old.Path, new.Path))
	if len(groups) > 0 {
		f.Advice = append(f.Advice, goroutineAdvice(groups[0].site.GoroutineGroup)...)
	}
}

type siteDelta struct {
	site  evidence.GoroutineGroup
	delta int
}

// growingSites returns the goroutine sites that grew between two snapshots, most first.
func (in *input) growingSites(old, new evidence.Snapshot) ([]siteDelta, error) {
	og, err := in.ev.GoroutineSites(old)
	if err != nil {
		return nil, err
	}
	ng, err := in.ev.GoroutineSites(new)
	if err != nil {
		return nil, err
	}
	before := make(map[string]int, len(og))
	for _, g := range og {
		before[g.SiteKey] = g.Count
	}
	var out []siteDelta
	for _, g := range ng {
		if d := g.Count - before[g.SiteKey]; d > 0 {
			out = append(out, siteDelta{g, d})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].delta > out[j].delta })
	return out, nil
}
