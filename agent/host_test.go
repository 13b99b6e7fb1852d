package agent

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"
)

// panicHandler is a slog.Handler that panics on every record: a broken logger the host
// gives the agent.
type panicHandler struct{ handled *atomic.Int32 }

func (h panicHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h panicHandler) Handle(context.Context, slog.Record) error {
	h.handled.Add(1)
	panic("the host's log handler panics")
}
func (h panicHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h panicHandler) WithGroup(string) slog.Handler      { return h }

// TestPanickingLogger gives the agent a logger that panics, and a pressure callback that
// panics: the agent recovers the callback's panic and logs it, the log panics too, and the
// host must not crash (before, the second panic escaped the agent's recover and killed the
// process). The agent goes on sampling and stops cleanly.
func TestPanickingLogger(t *testing.T) {
	var handled atomic.Int32
	called := make(chan struct{}, 1)
	a, err := Start(context.Background(),
		WithLogger(slog.New(panicHandler{&handled})),
		WithBudget(1<<20),
		WithSampleInterval(100*time.Millisecond),
		WithPressureFunc(func(Pressure) {
			called <- struct{}{}
			panic("the application's callback panics")
		}))
	if err != nil {
		t.Fatal(err)
	}
	<-called
	waitFor(t, "the panic logged through the panicking handler", func() bool { return handled.Load() > 0 })
	n := a.ring.len()
	waitFor(t, "samples after both panics", func() bool { return a.ring.len() > n+2 })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := a.Stop(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestStopWithStuckCallback: a pressure callback that never returns must not hold Stop
// forever. Without a deadline Stop returns after a bounded wait; with one, it returns the
// deadline's error.
func TestStopWithStuckCallback(t *testing.T) {
	for _, withDeadline := range []bool{false, true} {
		entered := make(chan struct{})
		release := make(chan struct{})
		var calls atomic.Int32
		a, err := Start(context.Background(),
			WithBudget(1<<20),
			WithSampleInterval(100*time.Millisecond),
			WithPressureFunc(func(Pressure) {
				if calls.Add(1) == 1 {
					close(entered)
				}
				<-release
			}))
		if err != nil {
			t.Fatal(err)
		}
		<-entered
		ctx, cancel := context.Background(), context.CancelFunc(func() {})
		if withDeadline {
			ctx, cancel = context.WithTimeout(ctx, 100*time.Millisecond)
		}
		stopped := make(chan error, 1)
		go func() { stopped <- a.Stop(ctx) }()
		select {
		case err := <-stopped:
			if withDeadline && !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Stop with a deadline and a stuck callback: %v, want the deadline's error", err)
			}
			if !withDeadline && err != nil {
				t.Errorf("Stop(context.Background()): %v", err)
			}
		case <-time.After(time.Minute):
			t.Fatalf("Stop (deadline %v) waits for a callback that never returns", withDeadline)
		}
		cancel()
		close(release)
		if n := calls.Load(); n != 1 {
			t.Errorf("%d callback calls; no callback may start once Stop is called", n)
		}
		select {
		case <-a.notifyDone: // the callback's goroutine ends once the callback returns
		case <-time.After(time.Minute):
			t.Error("the callback goroutine did not end after the callback returned")
		}
	}
}
