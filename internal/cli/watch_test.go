package cli

import (
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/session"
)

// The check of watch --until-confirmed settles a recorded goroutine leak and keeps the end of
// the evidence it judged, which the report is then cut at; a healthy session is not settled
// while it could still show a slow problem, and settled past it.
func TestSettledCheck(t *testing.T) {
	var at time.Time
	look := settledCheck("../../diagnose/testdata/sessions/goroutine-leak", 0, &at)()
	if !look.Done || look.Why == "" || at.IsZero() {
		t.Fatalf("goroutine-leak: done %v (%q), settled at %v", look.Done, look.Why, at)
	}
	s, err := session.Open("../../diagnose/testdata/sessions/goroutine-leak")
	if err != nil {
		t.Fatal(err)
	}
	if at.Before(s.Manifest.Start) || at.After(s.Manifest.End.Add(time.Second)) {
		t.Errorf("settled at %v, outside the session %v to %v", at, s.Manifest.Start, s.Manifest.End)
	}
	var healthyAt time.Time
	if look := settledCheck("../../diagnose/testdata/sessions/healthy", 0, &healthyAt)(); !look.Done || healthyAt.IsZero() || look.AwaitsGC != "" {
		t.Errorf("healthy session recorded long ago: %+v at %v; want settled (nothing found, the clean window long past), waiting on no GC", look, healthyAt)
	}
}
