package facts

import (
	"time"

	"github.com/memdoctor/memdoctor/evidence"
)

// OOMNear is how close to its limit a watched process must have been when it vanished for
// its end to count as an OOM kill: its last reading within 10% of the limit.
const OOMNear = 0.90

// OOMKill is an end of the target that the kernel's OOM killer is behind: its cgroup's
// oom_kill count rose in the window, or (watch, which cannot see how a process ends) the
// target ended while its last reading was within 10% of its limit.
type OOMKill struct {
	Counted uint64    // kills the cgroup counted in the window (0: inferred from the end)
	At      time.Time // the target's last reading
	Share   float64   // that reading's share of the limit
	Use     float64
	Limit   float64
	What    string // "RSS" or "the cgroup's usage"
	// Last is the last heap profile before it, read (nil when there is none).
	Last *HeapSnapshot
}

// oomKillOf finds an OOM kill in the evidence, with the last heap profile before it.
func oomKillOf(ev *evidence.Evidence) *OOMKill {
	k := &OOMKill{Counted: ev.OOMKillsInWindow}
	if ev.RSS.Len() > 0 {
		last := ev.RSS.Last()
		k.At, k.Use, k.What = last.T, last.V, "RSS"
		k.Limit = float64(ev.Budget)
	}
	// The cgroup's usage while the target lived: its last reading up to the last RSS
	// reading (one after the target's end is no longer the target's).
	if ev.CgroupLimit > 0 {
		var last evidence.Point
		for _, p := range ev.CgroupUsage.Points {
			if !k.At.IsZero() && p.T.After(k.At) {
				break
			}
			last = p
		}
		limit := float64(ev.CgroupLimit)
		if last.V > 0 && (k.Limit == 0 || last.V/limit > k.Use/k.Limit) {
			k.Use, k.Limit, k.What = last.V, limit, "the cgroup's usage"
		}
	}
	if k.Limit > 0 {
		k.Share = k.Use / k.Limit
	}
	ended := ev.Status == "target-exited"
	switch {
	case k.Counted > 0:
	case ended && ev.Mode == "watch" && k.Share >= OOMNear:
	default:
		return nil
	}
	if n := len(ev.Heaps); n > 0 {
		k.Last = heapSnapshotAt(ev, ev.Heaps[n-1])
	}
	return k
}
