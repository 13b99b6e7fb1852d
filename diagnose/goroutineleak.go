package diagnose

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/memdoctor/memdoctor/internal/culprit"
	"github.com/memdoctor/memdoctor/session"
)

func init() { register(KindGoroutineLeak, goroutineLeak) }

// Thresholds of the goroutine-leak rule.
const (
	gleakAlpha     = 0.001
	gleakMinGrowth = 50  // goroutines
	gleakMinRatio  = 0.5 // growth relative to the starting count
)

// goroutineLeak reports a goroutine count that grows steadily, and names the groups of
// goroutines (same wait, stack and creator) that grow.
func goroutineLeak(in *Input) []Finding {
	var pts []Point
	for _, g := range in.Go {
		if g.Goroutines > 0 && !g.T.Before(in.Start) && !g.T.After(in.End) {
			pts = append(pts, Point{g.T, float64(g.Goroutines)})
		}
	}
	if len(pts) < 6 || pts[len(pts)-1].T.Sub(pts[0].T) < leakMinSpan {
		return nil
	}
	tr := trend(pts)
	if !tr.Increasing(gleakAlpha) {
		return nil
	}
	mid := pts[0].T.Add(pts[len(pts)-1].T.Sub(pts[0].T) / 2)
	if late := trend(between(pts, mid, in.End)); late.N >= 3 && late.Slope < leakLateSlope*tr.Slope {
		return nil // it grew, then stopped: a pool warming up
	}
	first, last := pts[0].V, pts[len(pts)-1].V
	growth := last - first
	if growth < gleakMinGrowth || growth < gleakMinRatio*first {
		return nil
	}
	perMin := tr.Slope * 60
	f := Finding{
		Kind:     KindGoroutineLeak,
		Severity: Warning,
		Title:    fmt.Sprintf("goroutines pile up: %+.0f per minute, %.0f -> %.0f", perMin, first, last),
		Detail: fmt.Sprintf("The number of goroutines rose steadily from %.0f to %.0f over %s (Mann-Kendall p=%.1g). "+
			"Goroutines that never return keep their stacks and everything they reference.",
			first, last, tr.Span.Round(time.Second), tr.P),
		Evidence: map[string]float64{
			"goroutines_start_count":       first,
			"goroutines_end_count":         last,
			"growth_goroutines_per_minute": perMin,
			"window_seconds":               tr.Span.Seconds(),
			"mann_kendall_z":               tr.Z,
			"mann_kendall_p":               tr.P,
		},
		Start: pts[0].T, End: pts[len(pts)-1].T,
	}
	if g := in.Go[len(in.Go)-1]; g.Goroutines > 0 && g.HeapStacksBytes > 0 {
		perG := float64(g.HeapStacksBytes) / float64(g.Goroutines)
		f.Evidence["stack_bytes_per_goroutine"] = perG
		f.Evidence["pinned_stack_bytes"] = perG * growth
		f.Detail += fmt.Sprintf(" The new ones pin about %s of stacks alone.", bytesStr(perG*growth))
	}
	if perMin > 1000 {
		f.Severity = Critical
	}
	in.blameGoroutines(&f, perMin)
	f.Advice = append(f.Advice, "Give every goroutine a way out: a context it watches, a buffered or closed channel for its result, and Close on every response body (defer resp.Body.Close() right after the error check).")
	return []Finding{f}
}

// blameGoroutines names the goroutine groups that grew between the first and last goroutine
// snapshots, and gives advice for the largest.
func (in *Input) blameGoroutines(f *Finding, perMin float64) {
	refs := in.Session.ProfilesOf(session.KindGoroutine, true)
	if len(refs) < 2 {
		return
	}
	old, new := refs[0], refs[len(refs)-1]
	groups, err := in.growingGroups(old, new)
	if err != nil {
		in.notef("goroutine-leak: %v", err)
	}
	var total int
	for _, g := range groups {
		total += g.delta
	}
	for i, g := range groups {
		c := Culprit{
			Function: g.Culprit.Function, File: g.Culprit.File, Line: g.Culprit.Line,
			Count: int64(g.delta), Share: float64(g.delta) / math.Max(float64(total), 1),
			Stack: g.Stack, Own: g.Culprit.Own,
		}
		f.Culprits = append(f.Culprits, c)
		if i == 0 {
			f.Title = fmt.Sprintf("goroutines pile up (%+.0f/min): %d more blocked in %s in %s", perMin, g.delta, waitState(g.GoroutineGroup), g.Blocking)
			f.Detail += fmt.Sprintf(" The largest growing group: %d goroutines blocked in %s at %s, started by %s.",
				g.delta, waitState(g.GoroutineGroup), g.Blocking, g.CreatedBy)
		}
	}
	f.Culprits = keepCulprits(f.Culprits, 5)
	f.Profiles = profileNames(old, new)
	f.Advice = append(f.Advice, "Compare the goroutine snapshots: "+
		fmt.Sprintf("go tool pprof -diff_base %s %s", old.Path, new.Path))
	if len(groups) > 0 {
		f.Advice = append(f.Advice, goroutineAdvice(groups[0].GoroutineGroup)...)
	}
}

type groupDelta struct {
	culprit.GoroutineGroup
	delta int
}

// growingGroups returns the goroutine groups that grew between two snapshots, most first.
func (in *Input) growingGroups(old, new session.ProfileRef) ([]groupDelta, error) {
	op, err := in.Profile(old)
	if err != nil {
		return nil, err
	}
	np, err := in.Profile(new)
	if err != nil {
		return nil, err
	}
	og, err := culprit.GroupGoroutineProfile(op, in.Culprit)
	if err != nil {
		return nil, err
	}
	ng, err := culprit.GroupGoroutineProfile(np, in.Culprit)
	if err != nil {
		return nil, err
	}
	before := make(map[string]int, len(og))
	for _, g := range og {
		before[g.Key] = g.Count
	}
	var out []groupDelta
	for _, g := range ng {
		if d := g.Count - before[g.Key]; d > 0 {
			out = append(out, groupDelta{g, d})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].delta > out[j].delta })
	return out, nil
}

// waitState names what a group waits on, from its state or its runtime frames.
func waitState(g culprit.GoroutineGroup) string {
	if g.State != "" {
		return g.State
	}
	for _, fr := range g.Stack {
		switch {
		case strings.HasPrefix(fr, "runtime.chansend"):
			return "chan send"
		case strings.HasPrefix(fr, "runtime.chanrecv"):
			return "chan receive"
		case fr == "runtime.selectgo" || fr == "runtime.block":
			return "select"
		case strings.Contains(fr, "runtime_pollWait") || fr == "runtime.netpollblock":
			return "IO wait"
		case strings.Contains(fr, "SemacquireMutex") || strings.Contains(fr, "(*Mutex).Lock") || strings.Contains(fr, "(*RWMutex)"):
			return "mutex wait"
		case strings.Contains(fr, "(*WaitGroup).Wait") || strings.Contains(fr, "runtime_Semacquire"):
			return "semaphore wait"
		case strings.Contains(fr, "(*Cond).Wait"):
			return "sync.Cond wait"
		case fr == "time.Sleep":
			return "sleep"
		}
	}
	return "a wait"
}

// goroutineAdvice is specific advice for the largest growing group.
func goroutineAdvice(g culprit.GoroutineGroup) []string {
	stack := strings.Join(g.Stack, " ")
	switch state := waitState(g); {
	case strings.Contains(stack, "net/http.(*persistConn)"):
		return []string{"These are HTTP client connections kept alive by response bodies nobody closed or drained: close every resp.Body (also on error paths and when the status is not 200)."}
	case state == "chan send":
		return []string{"The senders block because nobody receives any more (the receiver returned on a timeout or error): make the channel buffered with room for every sender, or select on ctx.Done() when sending."}
	case state == "chan receive":
		return []string{"The receivers wait for a value or a close that never comes: close the channel when the producer is done, or select on ctx.Done()."}
	case state == "IO wait":
		return []string{"The goroutines wait on network reads that never end: set deadlines (SetReadDeadline, http.Client.Timeout, server ReadTimeout/IdleTimeout)."}
	}
	return nil
}
