package agent

import (
	"runtime/pprof"
	"time"

	"github.com/memdoctor/memdoctor/agent/leakcheck"
	"github.com/memdoctor/memdoctor/agent/record"
)

// DefaultLeakCheckInterval is how often the agent takes a goroutineleak profile by default;
// see WithLeakCheckInterval.
const DefaultLeakCheckInterval = 10 * time.Minute

// leakMinGap is the least time between two goroutineleak profiles.
const leakMinGap = time.Minute

// leakChecker takes goroutineleak profiles (see WithLeakCheckInterval). The agent's loop
// decides; the capture itself runs on a goroutine of its own, at most one at a time, so
// that the forced GC does not hold up the samples.
type leakChecker struct {
	policy leakcheck.Policy
	state  leakcheck.State // owned by the loop
	busy   bool            // a capture runs; set by the loop, cleared through done
	done   chan struct{}   // receives when a capture ends
	// write writes the profile; tests replace it.
	write func(*bufPool) ([]byte, error)
}

// newLeakChecker returns nil when the runtime has no goroutineleak profile or the option
// turned it off.
func newLeakChecker(cfg config) *leakChecker {
	if cfg.leakCheck <= 0 || pprof.Lookup("goroutineleak") == nil {
		return nil
	}
	return &leakChecker{
		policy: leakcheck.Policy{Every: cfg.leakCheck, MinGap: leakMinGap, ClimbRatio: cfg.goroutineRatio, ClimbMin: cfg.goroutineGrowth},
		state:  leakcheck.State{LastGoroutines: -1},
		done:   make(chan struct{}, 1),
		write:  func(pool *bufPool) ([]byte, error) { return captureProfile(pool, record.KindGoroutineLeak) },
	}
}

// checkLeaks starts a goroutineleak capture when one is due: by the policy, or because the
// goroutine-growth trigger fired (grew) and the last capture is a minute old.
func (a *Agent) checkLeaks(now time.Time, goroutines int, grew bool) {
	lc := a.leaks
	if lc == nil {
		return
	}
	select {
	case <-lc.done:
		lc.busy = false
	default:
	}
	if lc.busy {
		return
	}
	reason := lc.policy.Due(lc.state, now, goroutines)
	if reason == leakcheck.NotDue && grew && now.Sub(lc.state.Last) >= lc.policy.MinGap {
		reason = leakcheck.Climb
	}
	if reason == leakcheck.NotDue {
		return
	}
	lc.state = leakcheck.State{Last: now, LastGoroutines: goroutines}
	lc.busy = true
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		defer func() { lc.done <- struct{}{} }()
		a.safe("goroutineleak", func() { a.captureLeak(lc, reason) })
	}()
}

// captureLeak writes the goroutineleak profile (the runtime runs a GC cycle with leak
// detection first) into the store.
func (a *Agent) captureLeak(lc *leakChecker, reason leakcheck.Reason) {
	b, err := lc.write(&a.store.pool)
	if err != nil {
		a.log.Warn("memdoctor agent: goroutineleak profile failed", "err", err)
		return
	}
	a.store.addLeak(time.Now(), b)
	a.log.Debug("memdoctor agent: goroutineleak profile", "reason", string(reason), "bytes", len(b))
}
