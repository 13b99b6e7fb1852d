package diagnose

import (
	"sort"
	"time"

	"github.com/memdoctor/memdoctor/breakdown"
)

// maxBreakdownSkew is how far apart a Go reading and a /proc reading may be for their
// breakdown to count: memory moves fast, and a stale pairing invents non-Go memory.
const maxBreakdownSkew = 1500 * time.Millisecond

// Breakdowns returns the breakdown at every Go reading that has a /proc reading close in
// time, in time order (computed once).
func (in *Input) Breakdowns() []*breakdown.At {
	in.breakdownsOnce.Do(func() {
		for _, g := range in.Go {
			i := sort.Search(len(in.Proc), func(i int) bool { return !in.Proc[i].T.Before(g.T) })
			best := -1
			for _, j := range []int{i - 1, i} {
				if j >= 0 && j < len(in.Proc) && (best < 0 || absDur(in.Proc[j].T.Sub(g.T)) < absDur(in.Proc[best].T.Sub(g.T))) {
					best = j
				}
			}
			if best < 0 || absDur(in.Proc[best].T.Sub(g.T)) > maxBreakdownSkew {
				continue
			}
			in.breakdowns = append(in.breakdowns, in.BreakdownAt(in.Proc[best].T, &in.Proc[best].Proc))
		}
	})
	return in.breakdowns
}
