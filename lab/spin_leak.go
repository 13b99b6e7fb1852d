package lab

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

func spinLeak() Scenario {
	return Scenario{
		Name: "spin-leak",
		Story: "A deploy service follows each rollout it starts: follow polls each replica's " +
			"progress every PollEvery until the rollout's done channel is closed. PollEvery comes " +
			"from a configuration whose zero value was meant as \"the default\", but time.Sleep(0) " +
			"returns at once, and a rollout that is cancelled never closes done. So each cancelled " +
			"rollout leaks a goroutine per replica (sixteen) that never blocks: it spins on the CPU, " +
			"running or runnable, never waiting. A few dozen of them starve the service's own " +
			"handlers, its pprof included: each request waits its turn behind every spinner for " +
			"seconds, until scrapes time out. The fix is a real default period (and a ticker), " +
			"and closing done on every path a rollout ends by, cancellation included.",
		Expect: Expect{
			Kinds:   []string{kindGoroutineLeak},
			Culprit: "github.com/memdoctor/memdoctor/lab.(*rollouts).follow",
			Absent:  []string{kindNonGoMemory, kindTransientSpike},
			// One P, as a container of one CPU gives it: the spinners take that CPU, not the
			// machine's (scenarios are recorded side by side).
			Env: []string{"GOMAXPROCS=1"},
			// A watch that attaches to a starved service waits 10 to 40 s for its first
			// readings (the probe and the command line time out): a shorter window may not
			// have a trend yet.
			Visible:  60 * time.Second,
			Watch:    8 * time.Second,
			Interval: time.Second,
		},
		Run: runSpinLeak,
	}
}

const (
	rolloutsPerSecond = 20
	rolloutReplicas   = 16  // a follower per replica
	cancelEvery       = 4   // one rollout in cancelEvery is cancelled: up to 80 spinners a second
	spinLabCap        = 400 // lab safety valve: past it (6,400 spinners) cancelled rollouts close done
)

func runSpinLeak(ctx context.Context, env Env) error {
	ro := &rollouts{}
	defer ro.close()
	// The spinners end as soon as the scenario is told to stop, not once the service has shut
	// down: hundreds of them take the CPU from the shutdown (the test process ran 817 of them
	// on a loaded machine, and its server had not shut down 30 s later).
	defer context.AfterFunc(ctx, ro.close)()
	return serve(ctx, env, service{
		name:   "spin-leak",
		routes: map[string]http.HandlerFunc{"POST /rollouts/{service}": ro.handleStart},
		loads: []load{{workers: 8, every: time.Second / rolloutsPerSecond, send: func(ctx context.Context, c *client, _ int) error {
			svc := strconv.FormatInt(c.requests.Load()%40, 10)
			return c.send(ctx, call{method: http.MethodPost, path: "/rollouts/svc-" + svc})
		}}},
	})
}

// rolloutConfig is the deploy service's configuration. PollEvery's zero value was meant as
// "the default", but nothing applies one.
type rolloutConfig struct {
	PollEvery time.Duration
}

// rollout is one deployment under way.
type rollout struct {
	id    int64
	done  chan struct{}
	polls [rolloutReplicas]atomic.Int64
}

// rollouts starts and follows the service's rollouts.
type rollouts struct {
	cfg  rolloutConfig
	next atomic.Int64

	// Lab bookkeeping, not part of the bug: cancelled records the rollouts whose done channel
	// was never closed, so that close can end their followers when the scenario stops, and caps
	// them (spinLabCap). The production code had no such list.
	mu        sync.Mutex
	cancelled []*rollout
	stopped   bool
}

func (ro *rollouts) handleStart(w http.ResponseWriter, r *http.Request) {
	rl := &rollout{id: ro.next.Add(1), done: make(chan struct{})}
	for replica := range rolloutReplicas {
		go ro.follow(rl, replica)
	}
	w.Header().Set("Content-Type", "text/plain")
	if rl.id%cancelEvery == 0 {
		// The rollout is cancelled (a newer one for the same service superseded it): the bug is
		// that this path forgets to close done.
		ro.cancel(rl)
		w.Write([]byte("cancelled " + r.PathValue("service") + "\n"))
		return
	}
	close(rl.done)
	w.Write([]byte("rolled out " + r.PathValue("service") + "\n"))
}

// follow polls the progress of one of a rollout's replicas every PollEvery until the
// rollout's done channel is closed. With a zero PollEvery it never blocks: time.Sleep(0)
// returns at once.
func (ro *rollouts) follow(rl *rollout, replica int) {
	for {
		select {
		case <-rl.done:
			return
		default:
		}
		rl.polls[replica].Add(1) // a look at the replica's progress
		time.Sleep(ro.cfg.PollEvery)
	}
}

// cancel records a cancelled rollout, whose done the production code never closed; past the
// lab's cap, or once the scenario stops, it closes done (lab bookkeeping).
func (ro *rollouts) cancel(rl *rollout) {
	ro.mu.Lock()
	defer ro.mu.Unlock()
	if ro.stopped || len(ro.cancelled) >= spinLabCap {
		close(rl.done)
		return
	}
	ro.cancelled = append(ro.cancelled, rl)
}

// close ends the followers of the cancelled rollouts (lab bookkeeping).
func (ro *rollouts) close() {
	ro.mu.Lock()
	ro.stopped = true
	cancelled := ro.cancelled
	ro.cancelled = nil
	ro.mu.Unlock()
	for _, rl := range cancelled {
		close(rl.done)
	}
}
