package agent

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/agent/record"
)

// TestGoroutineRoundDue: up to cheapGoroutines goroutines every round takes a goroutine
// profile; past it one round in ceil(n/cheapGoroutines), so that a round costs the program
// no more than one of cheapGoroutines.
func TestGoroutineRoundDue(t *testing.T) {
	for _, tc := range []struct {
		n, skipped int
		want       bool
	}{
		{10, 0, true}, {cheapGoroutines, 0, true},
		{cheapGoroutines + 1, 0, false}, {cheapGoroutines + 1, 1, true},
		{300000, 4, false}, {300000, 5, true}, {300000, 9, true},
	} {
		if got := goroutineRoundDue(tc.n, tc.skipped, cheapGoroutines); got != tc.want {
			t.Errorf("%d goroutines, %d round(s) skipped: due %v, want %v", tc.n, tc.skipped, got, tc.want)
		}
	}
}

// TestPeriodicGoroutineProfilesSpaced: an agent whose bound is 10 goroutines, in a test
// process of more than 20, takes a heap profile every round and a goroutine profile in one
// round of every ceil(n/10); with the default bound, in every round.
func TestPeriodicGoroutineProfilesSpaced(t *testing.T) {
	park := make(chan struct{})
	defer close(park)
	for range 20 {
		go func() { <-park }()
	}
	for _, tc := range []struct {
		name  string
		cheap int
	}{{"past the bound", 10}, {"the default", cheapGoroutines}} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := Start(context.Background(), WithProfileInterval(time.Hour), WithProfileRounds(20),
				func(c *config) { c.cheapGoroutines = tc.cheap })
			if err != nil {
				t.Fatal(err)
			}
			defer a.Stop(context.Background())
			for a.ring.len() == 0 { // the first round is done: the loop takes no other within the test
				time.Sleep(time.Millisecond)
			}
			const rounds = 6
			every := (runtime.NumGoroutine() + tc.cheap - 1) / tc.cheap // rounds per goroutine profile
			for range rounds {
				a.periodicProfiles()
			}
			kinds := map[string]int{}
			for _, p := range a.store.list() {
				kinds[p.Kind]++
			}
			heaps, stacks := kinds[record.KindHeap]-1, kinds[record.KindGoroutine]-1 // less the first round's
			if heaps != rounds {
				t.Errorf("%d heap profiles in %d rounds, want one a round", heaps, rounds)
			}
			if want := rounds / every; stacks != want || tc.cheap < cheapGoroutines && every < 3 {
				t.Errorf("%d goroutine profiles in %d rounds, want one in every %d rounds: %d", stacks, rounds, every, want)
			}
		})
	}
}
