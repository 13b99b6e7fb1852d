package agentclient

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/session"
)

func TestReadSamples(t *testing.T) {
	long := `{"t":"2026-11-22T10:00:00Z","proc":{"pid":1,"rss_bytes":1,"rss_anon_bytes":0,"rss_file_bytes":0,"lazyfree_bytes":0,"x":"` + strings.Repeat("a", MaxLine) + `"}}`
	for _, tc := range []struct {
		name   string
		in     string
		n, bad int
	}{
		{"empty", "", 0, 0},
		{"two", `{"t":"2026-11-22T10:00:00Z"}` + "\n" + `{"t":"2026-11-22T10:00:01Z","go":{"source":"runtime/metrics"}}` + "\n", 2, 0},
		{"no final newline", `{"t":"2026-11-22T10:00:00Z"}`, 1, 0},
		{"crlf and blanks", "\r\n" + `{"t":"2026-11-22T10:00:00Z"}` + "\r\n\n", 1, 0},
		{"torn last line", `{"t":"2026-11-22T10:00:00Z"}` + "\n" + `{"t":"2026-11-22T10:0`, 1, 1},
		{"no time", `{"proc":{"pid":1}}` + "\n", 0, 1},
		{"not JSON", "hello\n" + `{"t":"2026-11-22T10:00:00Z"}` + "\n", 1, 1},
		{"over-long line skipped", long + "\n" + `{"t":"2026-11-22T10:00:01Z"}` + "\n", 1, 1},
		{"long line kept", `{"t":"2026-11-22T10:00:00Z","x":"` + strings.Repeat("b", 100<<10) + `"}` + "\n", 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []session.Sample
			n, bad, err := ReadSamples(strings.NewReader(tc.in), func(s session.Sample) error { got = append(got, s); return nil })
			if err != nil || n != tc.n || bad != tc.bad || len(got) != n {
				t.Errorf("n %d bad %d err %v; want %d, %d", n, bad, err, tc.n, tc.bad)
			}
		})
	}
}

func TestReadSamplesStopsOnFnError(t *testing.T) {
	in := strings.Repeat(`{"t":"2026-11-22T10:00:00Z"}`+"\n", 5)
	stop := errors.New("stop")
	calls := 0
	n, _, err := ReadSamples(strings.NewReader(in), func(session.Sample) error {
		calls++
		if calls == 3 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 2 || calls != 3 {
		t.Errorf("n %d calls %d err %v", n, calls, err)
	}
}

func FuzzReadSamples(f *testing.F) {
	f.Add([]byte(`{"t":"2026-11-22T10:00:00Z","go":{"source":"runtime/metrics","total_bytes":5}}` + "\n"))
	f.Add([]byte("\n\n{}\n{\"t\":1}\n"))
	f.Add([]byte(`{"t":"2026-11-22T10:00:00Z","proc":{"pid":1},"cgroup":{"version":2}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := 0
		for _, l := range bytes.Split(data, []byte("\n")) {
			if len(bytes.TrimSpace(l)) > 0 {
				lines++
			}
		}
		n, bad, err := ReadSamples(bytes.NewReader(data), func(s session.Sample) error {
			if s.Time.IsZero() || s.Time.Equal(time.Time{}) {
				t.Fatalf("delivered a sample without a time")
			}
			return nil
		})
		if err != nil {
			t.Fatalf("reading from memory failed: %v", err)
		}
		if n+bad > lines || n < 0 || bad < 0 {
			t.Fatalf("%d samples + %d bad from %d non-blank lines", n, bad, lines)
		}
	})
}
