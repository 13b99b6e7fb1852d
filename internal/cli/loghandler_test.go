package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestHumanLog(t *testing.T) {
	for _, c := range []struct {
		name string
		log  func(*slog.Logger)
		want string
	}{
		{"message only", func(l *slog.Logger) { l.Info("recording a session") }, "memdoctor: recording a session\n"},
		{"attributes", func(l *slog.Logger) {
			l.Info("found the service's process", "pid", 4242, "exe", "/srv/api", "go", "go1.26.8")
		}, "memdoctor: found the service's process (pid 4242, exe /srv/api, go go1.26.8)\n"},
		{"warning with its error", func(l *slog.Logger) {
			l.Warn("scrape failed; will retry", "endpoint", "heap", "err", errors.New("GET /heap: 502 Bad Gateway"))
		}, "memdoctor: warning: scrape failed; will retry: GET /heap: 502 Bad Gateway (endpoint heap)\n"},
		{"error", func(l *slog.Logger) { l.Error("could not save", "err", errors.New("disk full")) }, "memdoctor: error: could not save: disk full\n"},
		{"debug hidden at info", func(l *slog.Logger) { l.Debug("noise") }, ""},
		{"duration", func(l *slog.Logger) { l.Info("stopping", "grace", 10*time.Second) }, "memdoctor: stopping (grace 10s)\n"},
		{"control characters quoted", func(l *slog.Logger) {
			l.Info("found", "exe", "/tmp/\x1b[2Jevil", "name", "")
		}, "memdoctor: found (exe \"/tmp/\\x1b[2Jevil\", name \"\")\n"},
		{"with attrs and groups", func(l *slog.Logger) {
			l.With("session", "s1").WithGroup("target").Info("started", "pid", 7, slog.Group("go", "version", "1.26"))
		}, "memdoctor: started (session s1, target.pid 7, target.go.version 1.26)\n"},
		{"empty attr dropped", func(l *slog.Logger) { l.Info("x", slog.Attr{}) }, "memdoctor: x\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			c.log(newLogger(&b, "", ""))
			if b.String() != c.want {
				t.Errorf("got  %q\nwant %q", b.String(), c.want)
			}
		})
	}
}

// TestLogFormats: MEMDOCTOR_LOG_FORMAT keeps slog's machine formats, MEMDOCTOR_LOG the level.
func TestLogFormats(t *testing.T) {
	var b bytes.Buffer
	newLogger(&b, "json", "debug").Debug("found", "pid", 7)
	var rec map[string]any
	if err := json.Unmarshal(b.Bytes(), &rec); err != nil || rec["msg"] != "found" || rec["pid"] != 7.0 || rec["level"] != "DEBUG" {
		t.Errorf("json: %q (%v)", b.String(), err)
	}
	b.Reset()
	newLogger(&b, "text", "").Info("found", "pid", 7)
	if !strings.HasPrefix(b.String(), "time=") || !strings.Contains(b.String(), `level=INFO msg=found pid=7`) {
		t.Errorf("text: %q", b.String())
	}
	b.Reset()
	newLogger(&b, "", "warn").Info("quiet")
	if b.Len() != 0 {
		t.Errorf("MEMDOCTOR_LOG=warn let an info line through: %q", b.String())
	}
}
