package recorder

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/memdoctor/memdoctor/collect/memread"
	"github.com/memdoctor/memdoctor/session"
)

// costTally adds up what the reads of each kind of data from each source cost the target, for
// the manifest's Costs: the target's CPU while a request to its pprof was served (its threads'
// run time before and after, from /proc), its runtime's stop-the-world pauses meanwhile (its
// pause histograms, when its memory is read), and the stops memdoctor itself made (ptrace,
// for goroutine stacks read from memory). Reads from memory cost the target no CPU: the
// kernel copies its memory on memdoctor's behalf.
type costTally struct {
	mu    sync.Mutex
	order []costKey
	m     map[costKey]*session.Cost
	gen   uint64 // bumped by every add
	sent  uint64 // the gen last written to the manifest
}

type costKey struct{ data, source string }

// entry returns the tally of data read from source, made on first use. t.mu is held.
func (t *costTally) entry(data, source string) *session.Cost {
	k := costKey{data, source}
	c := t.m[k]
	if c == nil {
		if t.m == nil {
			t.m = map[costKey]*session.Cost{}
		}
		c = &session.Cost{Data: data, Source: source}
		t.m[k] = c
		t.order = append(t.order, k)
	}
	t.gen++
	return c
}

// snapshot returns the costs for the manifest (nil when nothing was read) and their
// generation.
func (t *costTally) snapshot() ([]session.Cost, uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.order) == 0 {
		return nil, t.gen
	}
	out := make([]session.Cost, len(t.order))
	for i, k := range t.order {
		out[i] = *t.m[k]
	}
	return out, t.gen
}

func (t *costTally) written(gen uint64) {
	t.mu.Lock()
	t.sent = max(t.sent, gen)
	t.mu.Unlock()
}

func (t *costTally) changed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.gen != t.sent
}

// asked makes one request to the target's pprof (fn), never while another of memdoctor's is
// in flight (a request served on one P stretches the stop-the-world of another: the world
// stops only once that P's thread runs again, tens of milliseconds on a loaded machine), and
// adds what it cost the target to the tally under data. It gives up when ctx ends while it
// waits its turn, with an error that wraps errNotAsked and ctx's.
func (r *recorder) asked(ctx context.Context, data string, fn func() error) error {
	select {
	case r.asking <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("%w: %w", errNotAsked, ctx.Err())
	}
	defer func() { <-r.asking }()
	m := r.markCost()
	err := fn()
	r.servedCost(data, m)
	return err
}

// errNotAsked: a request was not made, its context having ended while another was in flight.
var errNotAsked = errors.New("not asked: another request to the service was in flight")

// costMark is the target's state before a request to its pprof: how long its threads had run
// (-1: unknown) and, when its memory is read, its runtime's pause histograms.
type costMark struct {
	ran    time.Duration
	pauses *memread.Pauses
}

// markCost reads the target's state before a request (costMark).
func (r *recorder) markCost() costMark {
	pid, _ := r.target()
	return costMark{ran: r.ranNow(pid), pauses: r.readPauses()}
}

// readPauses reads the target's pause histograms from its memory; nil when its memory is not
// read or they cannot be.
func (r *recorder) readPauses() *memread.Pauses {
	ms := r.memory()
	if ms == nil || ms.noPauses {
		return nil
	}
	ms.mu.Lock()
	defer ms.mu.Unlock()
	p, err := ms.rd.Pauses()
	if err != nil {
		ms.noPauses = true // a runtime without them, or a layout not understood: not again
		r.log.Debug("the runtime's pause histograms cannot be read", "err", err)
		return nil
	}
	return &p
}

// servedCost adds one request to the target's pprof for data, begun at m, to the tally.
func (r *recorder) servedCost(data string, m costMark) {
	pid, _ := r.target()
	ran := time.Duration(-1)
	if m.ran >= 0 {
		ran = r.ranNow(pid)
	}
	var after *memread.Pauses
	if m.pauses != nil {
		after = r.readPauses()
	}
	t := &r.costs
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.entry(data, session.SourcePprof)
	c.Reads++
	if m.ran >= 0 && ran >= m.ran {
		c.TargetCPUSeconds += (ran - m.ran).Seconds()
		c.CPUMeasured = true
	}
	if m.pauses != nil && after != nil {
		n, longest := after.TotalOther.Since(m.pauses.TotalOther)
		ngc, longestGC := after.TotalGC.Since(m.pauses.TotalGC)
		c.Pauses += int(n + ngc)
		c.LongestPauseSeconds = max(c.LongestPauseSeconds, longest.Seconds(), longestGC.Seconds())
		c.PausesMeasured = true
	}
}

// memoryCost adds one read of data from the target's memory to the tally, with the stop it
// took (0: none).
func (r *recorder) memoryCost(data string, stopped time.Duration) {
	t := &r.costs
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.entry(data, session.SourceMemory)
	c.Reads++
	c.CPUMeasured = true // none: the target runs nothing for a read of its memory
	if stopped > 0 {
		c.Stops++
		c.StoppedSeconds += stopped.Seconds()
		c.LongestStopSeconds = max(c.LongestStopSeconds, stopped.Seconds())
	}
}
