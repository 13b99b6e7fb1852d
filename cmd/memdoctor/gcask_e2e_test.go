package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/session"
)

// TestWatchAsksForAGC: watch --until-confirmed attached to a service whose heap has been
// climbing for a minute (the lab's span-queue-leak: 0.7 MB/s, its GCs 10 s apart and more;
// past diagnose.WarmUp, so the leak settles the watch at once) asks its pprof for GCs while
// the heap leak waits on a reading (heap?gc=1, each in the session's costs) and stops on the
// leak confirmed with its culprit. The time it takes is bench/attach's to measure, not a
// test's (18.3-18.8 s after attaching with --interval 5s, 33-34 s before the first GC was
// asked at attach and each read at once).
func TestWatchAsksForAGC(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a leaking lab scenario for a minute or more")
	}
	defer parallel(t)()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	_, url := startService(t, ctx, memdoctorBin, "lab", "run", "span-queue-leak")
	url = strings.Fields(url)[0]
	select {
	case <-time.After(diagnose.WarmUp): // its heap climbing, its GCs seconds apart
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
	dir := filepath.Join(t.TempDir(), "s")
	r := memdoctor(t, ctx, "watch", "--until-confirmed", "--interval", "5s", "--duration", "3m", "--out", dir, url)
	if r.code != 0 {
		t.Fatalf("watch: exit %d\n%s", r.code, r.stderr)
	}
	d := loadDiagnosis(t, filepath.Join(dir, "diagnosis.json"))
	f := findingOf(d, diagnose.KindHeapLeak)
	if f == nil || f.Confidence != diagnose.Confirmed || len(f.Culprits) == 0 || f.Culprits[0].Function != "github.com/memdoctor/memdoctor/lab.(*spanExporter).record" {
		t.Fatalf("want the heap leak confirmed at (*spanExporter).record: %s\n%s", kindsOf(d), r.stdout)
	}
	s, err := session.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	asked := 0
	for _, c := range s.Manifest.Costs {
		if c.Data == session.DataHeapAfterGC {
			asked = c.Reads
		}
	}
	if asked == 0 {
		t.Errorf("no GC asked of the service (costs %+v)", s.Manifest.Costs)
	}
	if !strings.Contains(strings.Join(strings.Fields(r.stdout), " "), "GCs asked for a reading of the live heap") {
		t.Errorf("the report does not say what the GCs asked cost:\n%s", r.stdout)
	}
	t.Logf("stopped after %s with %d GC(s) asked", s.Manifest.End.Sub(s.Manifest.Start).Round(time.Second), asked)
}
