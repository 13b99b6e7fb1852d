package recorder

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/memdoctor/memdoctor/session"
)

// restartPoll is how often a service that went away is asked whether it is back.
const restartPoll = 250 * time.Millisecond

// followRestart waits up to cfg.RestartGrace for a service that went away (why says how) to
// answer at its URL again, as a service restarted by its supervisor on the same port does.
// When it answers, it finds the service's process again, notes the restart in the manifest
// (Restarts and a note: the cumulative counters start again) and returns true: the watch goes
// on. Otherwise it returns false and the result that ends the watch.
func (r *recorder) followRestart(ctx context.Context, tg *watchTarget, deadline time.Time, why string) (bool, Result) {
	wentAt := time.Now()
	end := Result{Dir: r.cfg.Out, TargetExit: -1, Status: session.StatusTargetExited,
		Detail: fmt.Sprintf("%s, and did not come back within %s", why, r.cfg.RestartGrace)}
	r.log.Info("the service went away; waiting for it to come back", "why", why, "for", r.cfg.RestartGrace)
	giveUp := time.NewTimer(r.cfg.RestartGrace)
	defer giveUp.Stop()
	var timeout <-chan time.Time
	if !deadline.IsZero() {
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		timeout = t.C
	}
	poll := time.NewTicker(restartPoll)
	defer poll.Stop()
	for !r.answers(ctx, tg) {
		select {
		case <-ctx.Done():
			end.Status, end.Detail = session.StatusInterrupted, "stopped by the user while the service was away"
			return false, end
		case <-r.cfg.Abort:
			end.Status, end.Detail = session.StatusInterrupted, "stopped at once by the user"
			return false, end
		case <-timeout:
			end.Status, end.Detail = session.StatusComplete, fmt.Sprintf("watched for %s; the service was away at the end", r.cfg.Duration)
			return false, end
		case <-giveUp.C:
			return false, end
		case <-poll.C:
		}
	}
	r.rejoin(ctx, tg, wentAt, time.Now())
	return true, Result{}
}

// answers reports whether the service answers at its URL: its pprof index, else its agent.
func (r *recorder) answers(ctx context.Context, tg *watchTarget) bool {
	pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if tg.pprof != nil {
		return tg.pprof.Probe(pctx) == nil
	}
	_, err := tg.agent.c.Info(pctx)
	return err == nil
}

// rejoin takes up a service that answers again after it went away at wentAt: it finds its
// process (a new PID is a restart), reads its agent afresh (a new start time is a restart) or
// compares its GC count (a lower one is a restart), and notes what it found.
func (r *recorder) rejoin(ctx context.Context, tg *watchTarget, wentAt, backAt time.Time) {
	r.mu.Lock()
	oldPID, lastGC := r.pid, r.lastGCCycles
	r.mu.Unlock()
	restarted, startedAt := false, time.Time{}
	newPID := 0
	if oldPID != 0 {
		if pid, _, err := localPID(r.cfg.FS, tg.baseURL()); err != nil {
			r.addNote("no /proc figures after the service came back: %v", err)
		} else if p, err := inspect(r.cfg.FS, pid, 0, 0); err == nil {
			newPID = pid
			if pid != oldPID {
				restarted, startedAt = true, p.Start
			}
		}
	}
	if tg.agent != nil {
		ictx, cancel := context.WithTimeout(ctx, 5*time.Second)
		info, err := tg.agent.c.Info(ictx)
		cancel()
		if err == nil {
			if !info.Start.Equal(tg.agent.info.Start) {
				restarted, startedAt = true, info.Start
			}
			// A fresh copy state: the new agent's history, events and profiles are its own.
			fresh := newAgentSource(tg.agent.c, info)
			fresh.samples, fresh.before, fresh.notes = tg.agent.samples, tg.agent.before, tg.agent.notes
			tg.agent = fresh
		}
	} else if oldPID == 0 && tg.pprof != nil {
		mctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		ms, err := tg.pprof.MemStats(mctx)
		cancel()
		if err == nil && uint64(ms.NumGC) < lastGC {
			restarted = true
		}
	}
	if startedAt.IsZero() || startedAt.Before(wentAt.Add(-time.Minute)) {
		startedAt = backAt // the best bound known: it answered again then
	}

	r.mu.Lock()
	r.pid = newPID
	r.agent = tg.agent
	r.gone, r.goneOnce = make(chan struct{}), sync.Once{}
	r.unreachable, r.unreachableOnce, r.failedRounds = make(chan struct{}), sync.Once{}, 0
	r.lastGCCycles, r.gcCountSeen = 0, false
	r.mu.Unlock()
	r.readMemoryAgain(ctx, tg, newPID)

	at := startedAt.UTC().Format(time.RFC3339)
	switch {
	case restarted && newPID != 0:
		r.note(func(m *session.Manifest) { m.Restarts = append(m.Restarts, startedAt.UTC()) })
		r.addNote("the service restarted at %s: new PID %d (was %d); its cumulative counters (GC cycles, allocated bytes, CPU) start again from zero", at, newPID, oldPID)
	case restarted:
		r.note(func(m *session.Manifest) { m.Restarts = append(m.Restarts, startedAt.UTC()) })
		r.addNote("the service restarted at %s; its cumulative counters (GC cycles, allocated bytes, CPU) start again from zero", at)
	default:
		r.addNote("the service did not answer from %s to %s, then answered again (no sign of a restart)",
			wentAt.UTC().Format(time.RFC3339), backAt.UTC().Format(time.RFC3339))
	}
}
