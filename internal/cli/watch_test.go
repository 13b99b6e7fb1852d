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
	done, why := settledCheck("../../diagnose/testdata/sessions/goroutine-leak", 0, &at)()
	if !done || why == "" || at.IsZero() {
		t.Fatalf("goroutine-leak: done %v (%q), settled at %v", done, why, at)
	}
	s, err := session.Open("../../diagnose/testdata/sessions/goroutine-leak")
	if err != nil {
		t.Fatal(err)
	}
	if at.Before(s.Manifest.Start) || at.After(s.Manifest.End.Add(time.Second)) {
		t.Errorf("settled at %v, outside the session %v to %v", at, s.Manifest.Start, s.Manifest.End)
	}
	var healthyAt time.Time
	if done, _ := settledCheck("../../diagnose/testdata/sessions/healthy", 0, &healthyAt)(); !done || healthyAt.IsZero() {
		t.Errorf("healthy session recorded long ago: done %v at %v; want settled (nothing found, the clean window long past)", done, healthyAt)
	}
}
