package evidence

import (
	"context"

	"github.com/memdoctor/memdoctor/collect/reach"
)

type (
	// ReachQuery asks the program's source which call of a function reaches the go
	// statement that starts some goroutines (collect/reach).
	ReachQuery = reach.Query
	// ReachAnswer is the call found.
	ReachAnswer = reach.Answer
)

// CallReaching answers q from the program's source, where it is at hand (collect/reach.Find):
// ok is false when no call reaches (as far as static calls go), err is set when the source
// is not at hand or the evidence was built without it (Options.Source unset).
func (ev *Evidence) CallReaching(q ReachQuery) (ReachAnswer, bool, error) {
	if !ev.Source {
		return ReachAnswer{}, false, reach.ErrNoSource
	}
	return reach.Find(context.Background(), q)
}
