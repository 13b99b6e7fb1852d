package recorder

import (
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/gctrace"
)

// tracked feeds lines (process start, cycle number, @seconds) to a tracker whose target
// started at targetStart, and returns the cycles it attributed to the target.
func tracked(t *testing.T, targetStart time.Time, lines [][3]float64) ([]int, gcStats) {
	t.Helper()
	var got []int
	tr := newGCTracker(func(tl traceLine, _ time.Time) { got = append(got, tl.cycle.N) })
	tr.setTarget(targetStart)
	t0 := targetStart.Add(-time.Minute)
	for _, l := range lines {
		start := t0.Add(time.Duration(l[0] * float64(time.Second)))
		at := time.Duration(l[2] * float64(time.Second))
		tr.add(traceLine{recv: start.Add(at).Add(3 * time.Millisecond), cycle: gctrace.Cycle{N: int(l[1]), At: at}})
	}
	return got, tr.stats(time.Now())
}

func TestGCTrackerStreams(t *testing.T) {
	target := time.Date(2026, 11, 24, 10, 1, 0, 0, time.UTC) // 60 s after t0
	t.Run("a line lost on the way", func(t *testing.T) {
		var lines [][3]float64
		for n := 1; n <= 20; n++ {
			if n == 6 || n == 13 { // garbled or split by a busy pipe: never parsed
				continue
			}
			lines = append(lines, [3]float64{60, float64(n), float64(n) * 0.1})
		}
		got, st := tracked(t, target, lines)
		if len(got) != 18 || got[len(got)-1] != 20 {
			t.Errorf("the target's cycles %v: want all 18 lines that arrived", got)
		}
		if st.Dropped != 0 || st.Lost != 2 {
			t.Errorf("dropped %d, lost %d; want 0 and the 2 missing cycles", st.Dropped, st.Lost)
		}
	})
	t.Run("the go command and the server it built", func(t *testing.T) {
		// The go command started 3 s before the server; the server's third line was lost.
		lines := [][3]float64{{57, 1, 0.01}, {57, 2, 0.02}, {60, 1, 0.01}, {57, 3, 3.3}, {60, 2, 0.02}, {60, 4, 0.5}, {60, 5, 0.6}}
		got, st := tracked(t, target, lines)
		if want := []int{1, 2, 4, 5}; len(got) != len(want) || got[2] != 4 {
			t.Errorf("the target's cycles %v, want %v (cycle 3 is the go command's)", got, want)
		}
		if st.Dropped != 3 {
			t.Errorf("dropped %d, want the go command's 3", st.Dropped)
		}
	})
	t.Run("the linker's lines relayed by the go command", func(t *testing.T) {
		// As recorded on a loaded machine: the go command printed the linker's five lines at
		// once when the link ended, 7 ms before it started the program; their implied starts
		// (received, less "@Ns") ran from 58 ms to 665 ms before the program's.
		var got []int
		tr := newGCTracker(func(tl traceLine, _ time.Time) { got = append(got, tl.cycle.N) })
		relayed := target.Add(-7 * time.Millisecond)
		for i, at := range []int{50, 95, 219, 477, 658} {
			tr.add(traceLine{recv: relayed, cycle: gctrace.Cycle{N: i + 1, At: time.Duration(at) * time.Millisecond}})
		}
		tr.setTarget(target)
		for n := 1; n <= 12; n++ {
			at := time.Duration(n) * 300 * time.Millisecond
			tr.add(traceLine{recv: target.Add(at + 40*time.Millisecond), cycle: gctrace.Cycle{N: n, At: at}})
		}
		if len(got) != 12 || got[0] != 1 || got[11] != 12 {
			t.Errorf("the target's cycles %v, want its own 12", got)
		}
		if st := tr.stats(time.Now()); st.Dropped != 5 {
			t.Errorf("dropped %d, want the linker's 5", st.Dropped)
		}
	})
}
