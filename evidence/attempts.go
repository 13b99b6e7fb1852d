package evidence

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/memdoctor/memdoctor/holders"
	"github.com/memdoctor/memdoctor/session"
)

// fromAttempts says which kinds of data the collector tried to read and never obtained
// (the manifest's Attempts): in the notes, and as the reason for each quantity they would
// have measured that is missing, so that a rule that cannot judge says why and nothing is
// concluded from data that was never seen. The recorder notes them when it closes a session;
// one killed before could not.
func (ev *Evidence) fromAttempts(attempts map[string]session.Attempt) {
	for _, kind := range slices.Sorted(maps.Keys(attempts)) {
		a := attempts[kind]
		if !a.Never() || kind == holders.Attempt { // the heap-leak finding says why no holders were read
			continue
		}
		what, reads := session.DescribeAttempt(kind)
		why := fmt.Sprintf("%s: 0 of %d %s succeeded", what, a.Tries, reads)
		if a.LastError != "" {
			why += " (the last error: " + a.LastError + ")"
		}
		if !slices.ContainsFunc(ev.Notes, func(n string) bool { return strings.HasPrefix(n, what+": ") }) {
			ev.Notes = append(ev.Notes, why)
		}
		for _, q := range attemptGaps[kind] {
			if ev.missing(q) {
				ev.Gap(q, why)
			}
		}
	}
}

// attemptGaps are the quantities each kind of data measures (Gap* keys).
var attemptGaps = map[string][]string{
	session.AttemptHeap:          {GapHeapSnaps},
	session.AttemptAgentProfiles: {GapHeapSnaps},
	session.AttemptGoroutine:     {GapGoroutines},
	session.AttemptMemStats:      {GapLive, GapAligned, GapGC, GapGCCPU},
	session.AttemptAgentMetrics:  {GapLive, GapAligned, GapGoroutines, GapGC, GapGCCPU},
	session.AttemptProc:          {GapRSS, GapCPU},
}

// missing reports whether the rules lack quantity q (as explainGaps judges it).
func (ev *Evidence) missing(q string) bool {
	switch q {
	case GapHeapSnaps:
		return len(ev.PeriodicHeaps()) < 2
	case GapGoroutines:
		return ev.Goroutines.Empty()
	case GapLive:
		return ev.Live.Empty() && ev.HeapInUse.Empty()
	case GapAligned:
		return ev.Aligned == 0
	case GapGC:
		return ev.GCCycles.Len() < 2
	case GapGCCPU:
		return ev.GCCPU.Len() < 2
	case GapRSS:
		return ev.RSS.Empty()
	case GapCPU:
		return ev.ProcessCPU.Empty()
	}
	return false
}
