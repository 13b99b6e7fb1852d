package evidence

import (
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/session"
)

// agentThenMemory writes what a watch of a service that starved its agent records: the
// agent's runtime/metrics readings every second until agentEnd, and from memFrom on, the
// same runtime's figures read from the process's memory every second until end. Both read
// the same heap, GC count and allocations; the agent's goroutine count (Go 1.26's
// /sched/goroutines) holds 7 system goroutines more than memory's (runtime.NumGoroutine).
func agentThenMemory(t *testing.T, t0 time.Time, agentEnd, memFrom, end int) *Evidence {
	t.Helper()
	figures := func(i int, src string) *session.GoMem {
		g := &session.GoMem{Source: src, HeapObjectsBytes: uint64(10+i) * mb, TotalBytes: uint64(40+i) * mb, HeapLiveBytes: uint64(8+i) * mb,
			GCCycles: uint64(2 * i), AllocBytesTotal: uint64(100*i) * mb, Goroutines: 20 + 10*i}
		if src == "runtime/metrics" {
			g.Goroutines += 7
		}
		return g
	}
	return newSession(t, session.Manifest{Mode: "watch", Start: t0}, func(w *session.Writer) {
		for i := 0; i <= agentEnd; i++ {
			w.AppendSample(session.Sample{Time: t0.Add(time.Duration(i) * time.Second), Go: figures(i, "runtime/metrics")})
		}
		for i := memFrom; i <= end; i++ {
			// half a second off the agent's ticks, as two readers' clocks are
			w.AppendSample(session.Sample{Time: t0.Add(time.Duration(i)*time.Second + 500*time.Millisecond), Go: figures(i, "process-memory")})
		}
	})
}

// TestAgentSeriesContinuedFromMemory: a service whose agent's readings end at 44 s of a
// minute, read from its memory from 20 s on. The figures both sources read from the same
// runtime records (the heap, the live heap, the GC count, the allocations) are one series to
// the minute's end: the agent's readings, then memory's after its last; the goroutine count,
// at another level from each source, is memory's alone (no step where they meet).
func TestAgentSeriesContinuedFromMemory(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	ev := agentThenMemory(t, t0, 44, 20, 60)
	end := t0.Add(60*time.Second + 500*time.Millisecond)
	for name, s := range map[string]*Series{"HeapInUse": &ev.HeapInUse, "Live": &ev.Live, "GCCycles": &ev.GCCycles, "AllocBytes": &ev.AllocBytes} {
		if s.Src != SourceRuntimeMetrics || !s.Last().T.Equal(end) || s.Last().Src != SourceProcessMemory {
			t.Errorf("%s: a series of %s to %v (last from %s), want the agent's continued by memory's to %v", name, s.Src, s.Last().T, s.Last().Src, end)
			continue
		}
		for i, p := range s.Points {
			if p.T.Before(t0.Add(44*time.Second)) && p.Src != SourceRuntimeMetrics {
				t.Errorf("%s: point %d at %v from %s inside the agent's readings", name, i, p.T.Sub(t0), p.Src)
			}
			if i > 0 && p.V < s.Points[i-1].V {
				t.Errorf("%s: %v at %v after %v: the join is not one figure", name, p.V, p.T.Sub(t0), s.Points[i-1].V)
			}
		}
	}
	g := &ev.Goroutines
	if g.Src != SourceProcessMemory || !g.Last().T.Equal(end) || g.First().T.Before(t0.Add(20*time.Second)) {
		t.Errorf("goroutines: %s from %v to %v, want memory's alone, 20.5 s to the end", g.Src, g.First().T.Sub(t0), g.Last().T.Sub(t0))
	}
}

// TestAgentSeriesWholeKeptAlone: an agent that answered to the end is its own series, memory's
// readings beside it (read while it lagged) add nothing to it, and the goroutine count is the
// agent's.
func TestAgentSeriesWholeKeptAlone(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	ev := agentThenMemory(t, t0, 60, 20, 60)
	for name, s := range map[string]*Series{"HeapInUse": &ev.HeapInUse, "Goroutines": &ev.Goroutines, "GCCycles": &ev.GCCycles} {
		if s.Src != SourceRuntimeMetrics || s.Len() != 61 {
			t.Errorf("%s: %d points of %s, want the agent's 61", name, s.Len(), s.Src)
		}
		for _, p := range s.Points {
			if p.Src != SourceRuntimeMetrics {
				t.Errorf("%s: a point of %s at %v", name, p.Src, p.T.Sub(t0))
				break
			}
		}
	}
}

// TestCounterNotJoinedDownward: a counter whose memory readings lie below the agent's last
// (not one figure) is left as the agent's.
func TestCounterNotJoinedDownward(t *testing.T) {
	m := newMulti()
	t0 := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	d := &quantities[qGCCycles]
	for i := range 10 {
		m.put(d, SourceRuntimeMetrics, t0.Add(time.Duration(i)*time.Second), float64(100+i))
	}
	for i := 12; i < 20; i++ {
		m.put(d, SourceProcessMemory, t0.Add(time.Duration(i)*time.Second), float64(i))
	}
	if s := m.pick(d); s.Len() != 10 || s.Last().V != 109 {
		t.Errorf("%d points, the last %v: want the agent's 10 alone", s.Len(), s.Last().V)
	}
}

// TestAgentHolesFilledFromMemory: an agent that answers in fits (a loaded machine: its
// readings a second apart, then none for 6 s) has its holes filled by memory's readings of
// the same figure, and only its holes: memory's readings beside its own are left out.
func TestAgentHolesFilledFromMemory(t *testing.T) {
	m := newMulti()
	t0 := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	d := &quantities[qHeapInUse]
	for i := range 30 {
		if i < 10 || i > 15 { // none from 10 s to 15 s
			m.put(d, SourceRuntimeMetrics, t0.Add(time.Duration(i)*time.Second), float64(i))
		}
	}
	for i := range 30 {
		m.put(d, SourceProcessMemory, t0.Add(time.Duration(i)*time.Second+300*time.Millisecond), float64(i)+0.3)
	}
	s := m.pick(d)
	var filled []time.Duration
	for _, p := range s.Points {
		if p.Src == SourceProcessMemory {
			filled = append(filled, p.T.Sub(t0))
		}
	}
	want := []time.Duration{11300 * time.Millisecond, 12300 * time.Millisecond, 13300 * time.Millisecond}
	if s.Src != SourceRuntimeMetrics || len(filled) != len(want) || filled[0] != want[0] || filled[2] != want[2] {
		t.Errorf("series of %s, memory's readings at %v: want the agent's, memory's at %v (more than two seconds from any of the agent's)", s.Src, filled, want)
	}
}
