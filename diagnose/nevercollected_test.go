package diagnose

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/session"
)

// End to end: a session on disk that a collector killed early left, read and diagnosed.

// TestNeverCollectedNotJudged: a watch whose heap and goroutine profiles all failed (the
// server answered a login page), written by a collector killed before it could note it. The
// diagnosis is not "no memory problem found": the rules that need those profiles are listed
// as not judged, each with the reason the collector recorded, and the notes say what could
// not be collected.
func TestNeverCollectedNotJudged(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	dir := filepath.Join(t.TempDir(), "s")
	w, err := session.Create(dir, session.Manifest{Mode: "watch", Start: t0, Target: session.Target{PprofURL: "http://127.0.0.1:6060"},
		Attempts: map[string]session.Attempt{
			session.AttemptHeap:      {Tries: 31, LastError: "not a pprof profile: the body is an HTML page"},
			session.AttemptGoroutine: {Tries: 31},
			session.AttemptMemStats:  {Tries: 31, OK: 31},
		}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 31 {
		w.AppendSample(session.Sample{Time: t0.Add(time.Duration(i) * 10 * time.Second),
			Go: &session.GoMem{Source: "memstats", HeapObjectsBytes: 10 << 20, TotalBytes: 20 << 20, GCCycles: uint64(i + 1)}})
	}
	if err := w.Close(session.StatusComplete, ""); err != nil {
		t.Fatal(err)
	}
	s, err := session.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	d, _, err := DiagnoseSession(s, evidence.Options{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Healthy() {
		t.Fatalf("a session whose profiles never came is called healthy: %+v", d)
	}
	reasons := map[Kind]string{}
	for _, n := range d.NotJudged {
		reasons[n.Kind] = n.Reason
	}
	for kind, want := range map[Kind]string{
		KindAllocationHotspot: "heap profiles: 0 of 31 fetches succeeded (the last error: not a pprof profile: the body is an HTML page)",
		KindGoroutineLeak:     "goroutine profiles: 0 of 31 fetches succeeded",
	} {
		if !strings.Contains(reasons[kind], want) {
			t.Errorf("not judged %s: %q, want it to say %q (all: %+v)", kind, reasons[kind], want, d.NotJudged)
		}
	}
	for _, f := range d.Findings {
		if f.Kind == KindAllocationHotspot || f.Kind == KindGoroutineLeak {
			t.Errorf("a finding drawn from data never seen: %+v", f)
		}
	}
	notes := strings.Join(d.Notes, "\n")
	for _, want := range []string{"heap profiles: 0 of 31", "goroutine profiles: 0 of 31"} {
		if !strings.Contains(notes, want) {
			t.Errorf("the notes do not say %q:\n%s", want, notes)
		}
	}
}
