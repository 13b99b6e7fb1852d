package cli

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// stopSignals are the signals that stop a recording: Ctrl-C, kill and timeout's SIGTERM, and
// the terminal's hangup. memdoctor handles them all the whole time it records, so it always
// closes the session and never leaves its target behind.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// sameSignalWindow is how close together two deliveries of the same signal count as one:
// timeout(1), and a terminal's hangup, signal memdoctor and then its whole process group, so
// the one stop request arrives twice within microseconds.
const sameSignalWindow = 100 * time.Millisecond

// stopper turns stop signals into a recording's two stops. The first cancels the context it
// returns: the recording stops gracefully (a last snapshot; SIGINT to the program, SIGKILL
// after --grace) and is diagnosed. The second closes the abort channel: the program's process
// group is killed at once and the session closed without waiting.
type stopper struct {
	ctx   context.Context
	abort chan struct{}
	done  chan struct{}
}

// handleStops starts relaying the stop signals, until release is called.
func handleStops(ctx context.Context, e *env) (s *stopper, release func()) {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, stopSignals...)
	s = newStopper(ctx, e, sigs)
	return s, func() {
		signal.Stop(sigs)
		close(s.done)
	}
}

func newStopper(ctx context.Context, e *env, sigs <-chan os.Signal) *stopper {
	ctx, cancel := context.WithCancel(ctx)
	s := &stopper{ctx: ctx, abort: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer cancel()
		var st stopState
		for {
			select {
			case sig := <-sigs:
				switch st.next(sig, time.Now()) {
				case stopGracefully:
					if e.term != nil {
						e.term.setStatus("")
					}
					e.log.Info("stopping: " + sig.String() + " received; send it again to kill the program at once")
					cancel()
				case stopAtOnce:
					e.log.Warn("stopping at once: killing the program and closing the session")
					close(s.abort)
					return
				}
			case <-s.done:
				return
			}
		}
	}()
	return s
}

// A stop signal asks for nothing new, a graceful stop, or a stop at once.
const (
	stopNothing = iota
	stopGracefully
	stopAtOnce
)

// stopState decides what each stop signal asks for.
type stopState struct {
	first   os.Signal
	firstAt time.Time
}

func (st *stopState) next(sig os.Signal, now time.Time) int {
	switch {
	case st.first == nil:
		st.first, st.firstAt = sig, now
		return stopGracefully
	case sig == st.first && now.Sub(st.firstAt) < sameSignalWindow:
		return stopNothing // the same request delivered to memdoctor and to its process group
	}
	return stopAtOnce
}
