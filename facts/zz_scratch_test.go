package facts

import (
	"os"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/session"
)

func TestScratch(t *testing.T) {
	s, err := session.Open(os.Getenv("SESS"))
	if err != nil {
		t.Fatal(err)
	}
	d, _ := time.ParseDuration(os.Getenv("UNTIL"))
	ev, err := evidence.FromSession(s, evidence.Options{Until: s.Manifest.Start.Add(d)})
	if err != nil {
		t.Fatal(err)
	}
	f := Of(ev)
	t.Logf("live src %v", f.LiveReadings.Series.Src)
	for _, p := range f.LiveReadings.Observed {
		t.Logf("live %s %.1f", p.T.Sub(f.Start), p.V/1048576)
	}
	for _, p := range f.HeapInUse.Points {
		t.Logf("inuse %s %.1f", p.T.Sub(f.Start), p.V/1048576)
	}
	for _, p := range f.HeapGoal.Points[max(0, len(f.HeapGoal.Points)-5):] {
		t.Logf("goal %s %.1f", p.T.Sub(f.Start), p.V/1048576)
	}
	t.Logf("end %s", f.End.Sub(f.Start))
}
