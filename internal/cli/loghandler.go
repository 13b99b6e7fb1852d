package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
)

// newLogger returns the command's logger on w: plain sentences for people by default,
// slog's text or JSON lines (with times and levels) when format asks for them
// (MEMDOCTOR_LOG_FORMAT), at the level MEMDOCTOR_LOG names.
func newLogger(w io.Writer, format, level string) *slog.Logger {
	opts := &slog.HandlerOptions{Level: logLevel(level)}
	switch strings.ToLower(format) {
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts))
	case "text":
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(newHumanHandler(w, opts.Level))
}

// humanHandler is a slog.Handler for people: one line per record, "memdoctor: " and the
// message, its error after a colon, its other attributes in parentheses:
//
//	memdoctor: found the service's process (pid 4242, exe /srv/api, go go1.26.8)
//	memdoctor: warning: scrape failed; will retry at the next snapshot: GET ...: 502 (endpoint heap)
//
// No time stamp: the line appears as it happens. Values with control characters are quoted,
// so nothing a target sends can move the cursor.
type humanHandler struct {
	mu     *sync.Mutex
	w      io.Writer
	level  slog.Leveler
	attrs  []string // "key value", from WithAttrs
	errs   []string
	prefix string // the open groups, "a.b."
}

func newHumanHandler(w io.Writer, level slog.Leveler) *humanHandler {
	return &humanHandler{mu: &sync.Mutex{}, w: w, level: level}
}

func (h *humanHandler) Enabled(_ context.Context, l slog.Level) bool {
	return l >= h.level.Level()
}

func (h *humanHandler) Handle(_ context.Context, r slog.Record) error {
	attrs := append([]string(nil), h.attrs...)
	errs := append([]string(nil), h.errs...)
	r.Attrs(func(a slog.Attr) bool {
		attrs, errs = appendAttr(attrs, errs, h.prefix, a)
		return true
	})
	var b strings.Builder
	b.WriteString("memdoctor: ")
	switch {
	case r.Level >= slog.LevelError:
		b.WriteString("error: ")
	case r.Level >= slog.LevelWarn:
		b.WriteString("warning: ")
	case r.Level < slog.LevelInfo:
		b.WriteString("debug: ")
	}
	b.WriteString(clean(r.Message))
	for _, e := range errs {
		b.WriteString(": " + e)
	}
	if len(attrs) > 0 {
		b.WriteString(" (" + strings.Join(attrs, ", ") + ")")
	}
	b.WriteByte('\n')
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, b.String()) // one write: the status line redraws after it
	return err
}

func (h *humanHandler) WithAttrs(as []slog.Attr) slog.Handler {
	h2 := *h
	h2.attrs = append([]string(nil), h.attrs...)
	h2.errs = append([]string(nil), h.errs...)
	for _, a := range as {
		h2.attrs, h2.errs = appendAttr(h2.attrs, h2.errs, h.prefix, a)
	}
	return &h2
}

func (h *humanHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	h2 := *h
	h2.prefix += name + "."
	return &h2
}

// appendAttr renders a into attrs ("key value"), or into errs when it holds an error.
func appendAttr(attrs, errs []string, prefix string, a slog.Attr) ([]string, []string) {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return attrs, errs
	}
	if a.Value.Kind() == slog.KindGroup {
		p := prefix
		if a.Key != "" {
			p += a.Key + "."
		}
		for _, g := range a.Value.Group() {
			attrs, errs = appendAttr(attrs, errs, p, g)
		}
		return attrs, errs
	}
	if err, ok := a.Value.Any().(error); ok && a.Value.Kind() == slog.KindAny {
		return attrs, append(errs, clean(err.Error()))
	}
	return append(attrs, prefix+a.Key+" "+humanValue(a.Value)), errs
}

func humanValue(v slog.Value) string {
	switch v.Kind() {
	case slog.KindDuration:
		return v.Duration().String()
	case slog.KindTime:
		return v.Time().Local().Format(time.TimeOnly)
	case slog.KindString:
		if v.String() == "" {
			return `""`
		}
		return clean(v.String())
	}
	return clean(fmt.Sprint(v.Any()))
}

// clean quotes s when it holds a control character (a newline, an escape sequence).
func clean(s string) string {
	if strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return strconv.Quote(s)
	}
	return s
}
