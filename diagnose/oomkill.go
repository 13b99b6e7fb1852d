package diagnose

import (
	"fmt"
	"strings"
	"time"

	"github.com/memdoctor/memdoctor/evidence"
)

// oomKill is an end of the target that the kernel's OOM killer is behind: its cgroup's
// oom_kill count rose in the window, or (watch, which cannot see how a process ends) the
// target ended while its last reading was within 10% of its limit.
type oomKill struct {
	counted  uint64    // kills the cgroup counted in the window (0: inferred from the end)
	at       time.Time // the target's last reading
	share    float64   // that reading's share of the limit
	use      float64
	limit    float64
	what     string // "RSS" or "the cgroup's usage"
	heap     *evidence.Snapshot
	heapView SnapshotView
	heapOK   bool
}

// oomKilled finds an OOM kill in the evidence, with the last heap profile before it.
func (in *input) oomKilled() (oomKill, bool) {
	ev := in.ev
	k := oomKill{counted: ev.OOMKillsInWindow}
	if ev.RSS.Len() > 0 {
		last := ev.RSS.Last()
		k.at, k.use, k.what = last.T, last.V, "RSS"
		k.limit = float64(ev.Budget)
	}
	// The cgroup's usage while the target lived: its last reading up to the last RSS
	// reading (one after the target's end is no longer the target's).
	if ev.CgroupLimit > 0 {
		var last evidence.Point
		for _, p := range ev.CgroupUsage.Points {
			if !k.at.IsZero() && p.T.After(k.at) {
				break
			}
			last = p
		}
		limit := float64(ev.CgroupLimit)
		if last.V > 0 && (k.limit == 0 || last.V/limit > k.use/k.limit) {
			k.use, k.limit, k.what = last.V, limit, "the cgroup's usage"
		}
	}
	if k.limit > 0 {
		k.share = k.use / k.limit
	}
	ended := ev.Target.Status == "target-exited"
	switch {
	case k.counted > 0:
	case ended && ev.Mode == "watch" && k.share >= oomNear:
	default:
		return oomKill{}, false
	}
	if n := len(ev.Heaps); n > 0 {
		s := ev.Heaps[n-1]
		if v, err := in.heapView(s); err == nil && len(v.Retainers) > 0 {
			k.heap, k.heapView, k.heapOK = &s, v, true
		}
	}
	return k, true
}

// finding says the kill, and what the last heap profile before it held.
func (k oomKill) finding() Finding {
	f := Finding{Kind: KindOOMRisk, Severity: Critical, Confidence: Confirmed, Evidence: map[string]float64{}}
	var what string
	if k.counted > 0 {
		what = fmt.Sprintf("the kernel OOM-killed the process (its memory cgroup counted %d OOM kill(s) in the window)", k.counted)
		f.Evidence["cgroup_oom_kills_in_window_count"] = float64(k.counted)
	} else {
		what = fmt.Sprintf("the process ended with %s at %s of its limit: most likely OOM-killed", k.what, pct(k.share))
	}
	if k.limit > 0 {
		f.Evidence["last_reading_of_limit_fraction"] = k.share
		f.Evidence["limit_bytes"] = k.limit
	}
	f.Title = "memory ran out: " + what
	sentence := strings.ToUpper(what[:1]) + what[1:]
	f.Detail = sentence + "."
	if !k.at.IsZero() {
		f.Start, f.End = k.at, k.at
		if k.limit > 0 {
			f.Detail = fmt.Sprintf("%s. Its last reading, at %s, had %s at %s of the %s limit.", sentence, k.at.UTC().Format("15:04:05"), k.what, pct(k.share), bytesStr(k.limit))
		}
	}
	if k.heapOK {
		v := k.heapView
		top := v.Retainers[0]
		before := k.at.Sub(k.heap.T).Seconds()
		label := "The last heap profile"
		if k.heap.Label != "" {
			label = fmt.Sprintf("The last heap profile (%s)", k.heap.Label)
		}
		f.Detail += fmt.Sprintf(" %s, taken %.1f s before that reading, held %s in use; the most at %s (%s, %s).",
			label, max(before, 0), bytesStr(float64(v.InuseBytes)), top.Function, bytesStr(float64(top.Bytes)), pct(top.Share))
		f.Title += fmt.Sprintf("; before it, %s held %s of the heap", top.Function, pct(top.Share))
		f.Culprits = v.Retainers
		f.Profiles = []string{k.heap.Path}
		f.Evidence["last_heap_inuse_bytes"] = float64(v.InuseBytes)
		f.Evidence["last_heap_age_seconds"] = max(before, 0)
	} else {
		f.Detail += " No heap profile was taken before it: watch a pprof endpoint, or embed the memdoctor agent, which keeps one from just before memory runs out."
	}
	f.Advice = []string{
		"Find what holds the memory at the top of the heap profile before the kill; the heap-leak, transient-spike and non-go-memory findings say whether it grew steadily or at once.",
		"Set GOMEMLIMIT below the limit so the GC works harder before it (it cannot save a real leak), shed load near the limit, or give the process more memory.",
	}
	return f
}
