package pprofdir

import (
	"bytes"
	"encoding/json"
	"time"
)

// logLine is one line of a container log as the runtime wrote it, and when the log says it
// was written (zero: the log does not say).
type logLine struct {
	t    time.Time
	text []byte
}

// splitLogLine takes a container log's line apart. It accepts the ways a gctrace line reaches
// a log file:
//
//   - bare, as the program wrote it to stderr (no time);
//   - after an RFC 3339 time and a space, as `docker logs --timestamps` and
//     `kubectl logs --timestamps` print it ("2026-11-22T10:15:00.123456789Z gc 1 @...");
//   - in the CRI log format the kubelet writes on the node ("<RFC 3339 time> stderr F gc 1 @...");
//   - as a line of Docker's json-file driver ({"log":"gc 1 @...\n","stream":"stderr","time":"..."}).
//
// The text after the time is returned as it is (gctrace's parser skips other prefixes).
func splitLogLine(line []byte) logLine {
	line = bytes.TrimRight(line, "\r\n")
	if len(line) > 0 && line[0] == '{' {
		if l, ok := jsonLogLine(line); ok {
			return l
		}
	}
	if t, rest, ok := cutTime(line); ok {
		return logLine{t: t, text: rest}
	}
	return logLine{text: line}
}

// cutTime cuts an RFC 3339 time (with or without fractional seconds, Z or an offset) and the
// space after it from the start of line.
func cutTime(line []byte) (time.Time, []byte, bool) {
	// 2006-01-02T15:04:05Z is the shortest form; the date's shape is checked before parsing.
	if len(line) < 20 || line[4] != '-' || line[7] != '-' || line[10] != 'T' || !isDigits(line[:4]) {
		return time.Time{}, nil, false
	}
	sp := bytes.IndexByte(line[11:], ' ')
	if sp < 0 || sp > 40 {
		return time.Time{}, nil, false
	}
	stamp := line[:11+sp]
	t, err := time.Parse(time.RFC3339Nano, string(stamp))
	if err != nil {
		return time.Time{}, nil, false
	}
	return t, line[11+sp+1:], true
}

func isDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}

// jsonLogLine reads a line of Docker's json-file log driver.
func jsonLogLine(line []byte) (logLine, bool) {
	var rec struct {
		Log  *string `json:"log"`
		Time string  `json:"time"`
	}
	if json.Unmarshal(line, &rec) != nil || rec.Log == nil {
		return logLine{}, false
	}
	l := logLine{text: bytes.TrimRight([]byte(*rec.Log), "\r\n")}
	if t, err := time.Parse(time.RFC3339Nano, rec.Time); err == nil {
		l.t = t
	}
	return l, true
}
