package suite

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The events are read a whole line at a time, as they are appended; a torn line waits for its
// end, a line past the bound is skipped, a line that is not JSON is skipped.
func TestEventReader(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, _ := os.Open(path)
	defer r.Close()
	er := &eventReader{f: r}
	f.WriteString(`{"event":"start","test":"TestA"}` + "\n" + `{"event":"res`)
	if got := er.read(); len(got) != 1 || got[0].Event != "start" || got[0].Test != "TestA" {
		t.Fatalf("first read: %+v", got)
	}
	f.WriteString(`ult","test":"TestA","plain":{"verdict":"pass","elapsed_ns":5},"report":{"verdict":"leak"}}` + "\nnot json\n")
	got := er.read()
	if len(got) != 1 || got[0].Event != "result" || got[0].Plain.Verdict != "pass" || string(got[0].Report) != `{"verdict":"leak"}` {
		t.Fatalf("second read: %+v", got)
	}
	f.WriteString(`{"event":"alive","test":"` + strings.Repeat("x", maxEventLine+10) + "\"}\n" + `{"event":"check","test":"TestB"}` + "\n")
	got = er.read()
	if len(got) != 1 || got[0].Event != "check" || len(er.pending) != 0 {
		t.Fatalf("after a line past the bound: %d events, %d bytes pending", len(got), len(er.pending))
	}
}

// FuzzEventReader: whatever a test process writes into the events file, the reader neither
// panics nor keeps more than a line's bound.
func FuzzEventReader(f *testing.F) {
	f.Add([]byte(`{"event":"start","test":"TestA"}` + "\n"))
	f.Add([]byte(`{"event":"result","plain":{"verdict":"fail","output":"x"},"report":{}}` + "\n{"))
	f.Add([]byte("\n\n\x00\xff{\"event\":1}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "events")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		r, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		er := &eventReader{f: r}
		er.read()
		if len(er.pending) > maxEventLine+len(er.buf) {
			t.Errorf("%d bytes pending", len(er.pending))
		}
	})
}

func TestSkipReason(t *testing.T) {
	out := "=== RUN   TestDB\n    db_test.go:9: needs a database\n--- SKIP: TestDB (0.00s)\n"
	if got := skipReason(out); got != ": db_test.go:9: needs a database" {
		t.Errorf("skipReason = %q", got)
	}
	if got := skipReason("=== RUN   TestX\n--- SKIP: TestX (0.00s)\n"); got != "" {
		t.Errorf("skipReason with nothing said = %q", got)
	}
}
