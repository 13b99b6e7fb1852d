package agent

import (
	"errors"
	"testing"
	"time"
)

// TestFlightSnapshotBounded: a flight-recorder snapshot over what a session stores is
// dropped with an error that says so, not kept (nor grown without bound in memory).
func TestFlightSnapshotBounded(t *testing.T) {
	f, err := startFlight(0, 0, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer f.stop()
	if _, err := f.snapshot(time.Now(), "x", nil); err != nil {
		t.Fatalf("a snapshot within the bound: %v", err)
	}
	f.maxBytes = 64 // far below any trace
	if _, err := f.snapshot(time.Now(), "y", nil); !errors.Is(err, errTraceTooLarge) {
		t.Errorf("a snapshot over the bound: %v, want errTraceTooLarge", err)
	}
	if n := len(f.list()); n != 1 {
		t.Errorf("%d snapshots kept, want the one within the bound", n)
	}
}
