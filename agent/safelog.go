package agent

import (
	"context"
	"log/slog"
)

// safeHandler wraps the slog.Handler of the logger the agent was given: a handler that
// panics must not take the host down (the agent logs inside its own recover), so a panic in
// it is recovered and the record dropped.
type safeHandler struct{ h slog.Handler }

// safeLogger returns l with its handler wrapped in a safeHandler.
func safeLogger(l *slog.Logger) *slog.Logger {
	if _, ok := l.Handler().(safeHandler); ok {
		return l
	}
	return slog.New(safeHandler{l.Handler()})
}

func (s safeHandler) Enabled(ctx context.Context, level slog.Level) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return s.h.Enabled(ctx, level)
}

func (s safeHandler) Handle(ctx context.Context, r slog.Record) (err error) {
	defer func() {
		if recover() != nil {
			err = errHandlerPanicked
		}
	}()
	return s.h.Handle(ctx, r)
}

func (s safeHandler) WithAttrs(attrs []slog.Attr) (h slog.Handler) {
	defer func() {
		if recover() != nil {
			h = s
		}
	}()
	return safeHandler{s.h.WithAttrs(attrs)}
}

func (s safeHandler) WithGroup(name string) (h slog.Handler) {
	defer func() {
		if recover() != nil {
			h = s
		}
	}()
	return safeHandler{s.h.WithGroup(name)}
}

type handlerPanicked struct{}

func (handlerPanicked) Error() string { return "memdoctor agent: the log handler panicked" }

var errHandlerPanicked error = handlerPanicked{}
