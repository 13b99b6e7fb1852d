package cli

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"
)

// TestStopState: the first stop signal stops gracefully; the same signal delivered again at
// once (to memdoctor and to its process group, as timeout and a terminal's hangup do) is the
// same request; a second request, or another signal, stops at once.
func TestStopState(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	type step struct {
		sig   os.Signal
		after time.Duration // since the first signal
		want  int
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"one Ctrl-C", []step{{os.Interrupt, 0, stopGracefully}}},
		{"SIGTERM to memdoctor and its group", []step{{syscall.SIGTERM, 0, stopGracefully}, {syscall.SIGTERM, time.Millisecond, stopNothing}}},
		{"SIGHUP to memdoctor and its group", []step{{syscall.SIGHUP, 0, stopGracefully}, {syscall.SIGHUP, 0, stopNothing}}},
		{"two Ctrl-C", []step{{os.Interrupt, 0, stopGracefully}, {os.Interrupt, 400 * time.Millisecond, stopAtOnce}}},
		{"group SIGTERM, then Ctrl-C", []step{{syscall.SIGTERM, 0, stopGracefully}, {syscall.SIGTERM, 0, stopNothing}, {os.Interrupt, time.Millisecond, stopAtOnce}}},
		{"Ctrl-C, then kill", []step{{os.Interrupt, 0, stopGracefully}, {syscall.SIGTERM, 5 * time.Second, stopAtOnce}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var st stopState
			for i, s := range tc.steps {
				if got := st.next(s.sig, t0.Add(s.after)); got != s.want {
					t.Errorf("signal %d (%v at +%s): %d, want %d", i, s.sig, s.after, got, s.want)
				}
			}
		})
	}
}

// TestStopper relays real signal values: the first cancels the context, a second request
// closes the abort channel.
func TestStopper(t *testing.T) {
	sigs := make(chan os.Signal)
	s := newStopper(context.Background(), testEnv(nil, nil, nil), sigs)
	defer close(s.done)
	if s.ctx.Err() != nil {
		t.Fatal("stopped before any signal")
	}
	sigs <- syscall.SIGTERM
	<-s.ctx.Done()
	select {
	case <-s.abort:
		t.Fatal("one signal aborted")
	default:
	}
	sigs <- os.Interrupt
	<-s.abort
}
