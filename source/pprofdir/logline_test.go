package pprofdir

import (
	"bytes"
	"testing"
	"time"
)

const gcLine = "gc 7 @2.942s 0%: 0.13+1.3+0.005 ms clock, 0.26+0/0.40/0.83+0.010 ms cpu, 127->128->65 MB, 130 MB goal, 0 MB stacks, 0 MB globals, 2 P"

func TestSplitLogLine(t *testing.T) {
	at := time.Date(2026, 11, 22, 10, 15, 0, 123456789, time.UTC)
	for _, c := range []struct {
		name, line string
		t          time.Time
		text       string
	}{
		{"bare", gcLine + "\n", time.Time{}, gcLine},
		{"docker --timestamps", "2026-11-22T10:15:00.123456789Z " + gcLine, at, gcLine},
		{"no fraction", "2026-11-22T10:15:00Z " + gcLine, at.Truncate(time.Second), gcLine},
		{"offset", "2026-11-22T11:15:00.123456789+01:00 " + gcLine + "\r\n", at, gcLine},
		{"CRI", "2026-11-22T10:15:00.123456789Z stderr F " + gcLine, at, "stderr F " + gcLine},
		{"json-file", `{"log":"` + gcLine + `\n","stream":"stderr","time":"2026-11-22T10:15:00.123456789Z"}`, at, gcLine},
		{"json without time", `{"log":"` + gcLine + `\n"}`, time.Time{}, gcLine},
		{"json, not docker's", `{"level":"info","msg":"hi"}`, time.Time{}, `{"level":"info","msg":"hi"}`},
		{"syslog", "Feb 26 12:52:23.767 " + gcLine, time.Time{}, "Feb 26 12:52:23.767 " + gcLine},
		{"date with a space", "2026-11-22 10:15:00 " + gcLine, time.Time{}, "2026-11-22 10:15:00 " + gcLine},
		{"bad date", "2026-13-45T10:15:00Z " + gcLine, time.Time{}, "2026-13-45T10:15:00Z " + gcLine},
		{"short", "2026-11-22T", time.Time{}, "2026-11-22T"},
		{"empty", "", time.Time{}, ""},
	} {
		l := splitLogLine([]byte(c.line))
		if !l.t.Equal(c.t) || string(l.text) != c.text {
			t.Errorf("%s: (%v, %q), want (%v, %q)", c.name, l.t, l.text, c.t, c.text)
		}
	}
}

// FuzzSplitLogLine: no line panics; a line's text is what follows its time (a suffix of the
// line, without its end of line), except for Docker's JSON, and a time found is a real one.
func FuzzSplitLogLine(f *testing.F) {
	for _, s := range []string{gcLine, "2026-11-22T10:15:00.123456789Z " + gcLine, `{"log":"` + gcLine + `\n","time":"2026-11-22T10:15:00Z"}`,
		"2026-11-22T10:15:00.123456789Z stderr F " + gcLine, "2026-11-22T10:15:00+99:99 x", "\xff\xfe{"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		l := splitLogLine(line)
		if !l.t.IsZero() && (l.t.Year() < 0 || l.t.Year() > 9999) {
			t.Errorf("time %v", l.t)
		}
		if len(line) > 0 && line[0] == '{' {
			return
		}
		if !bytes.HasSuffix(bytes.TrimRight(line, "\r\n"), l.text) {
			t.Errorf("text %q is not the end of %q", l.text, line)
		}
	})
}
