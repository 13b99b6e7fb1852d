package culprit

import (
	"errors"
	"fmt"
	"io"
)

// ParseGoroutineText groups a text goroutine dump: /debug/pprof/goroutine
// ?debug=1 (goroutines grouped by stack: "N @ 0x..." then
// "#\t0x...\tfunc+0x12\tfile:line" lines) or ?debug=2 (every goroutine:
// "goroutine 19 [chan receive, 3 minutes]:", frames with arguments, "created
// by F in goroutine N"), including the goroutines of a crash's traceback. It
// streams: memory is bounded by the number of distinct groups, not by the
// size of the dump. Wait durations, "locked to thread", labels and other
// annotations are dropped from the state. A debug=1 dump records no creator:
// CreatedBy is the goroutine's start function, as for proto profiles.
//
// When reading fails part way, it returns the groups of the goroutines read
// so far together with the error.
func ParseGoroutineText(r io.Reader, opts Options) ([]GoroutineGroup, error) {
	p := textParser{g: newGrouper(opts)}
	lr := newLineReader(r)
	for {
		line, err := lr.next()
		if err != nil && !errors.Is(err, io.EOF) {
			var partial []GoroutineGroup
			if p.seen {
				partial = p.g.result() // the goroutine being read is incomplete: left out
			}
			return partial, fmt.Errorf("reading goroutine dump: %w", err)
		}
		if len(line) > 0 || err == nil {
			p.line(line)
		}
		if err != nil {
			break
		}
	}
	p.flush()
	if !p.seen {
		return nil, errors.New(`not a goroutine dump: found neither a "goroutine profile: total N" header with "N @ 0x..." records (debug=1) nor "goroutine N [state]:" headers (debug=2)`)
	}
	return p.g.result(), nil
}
