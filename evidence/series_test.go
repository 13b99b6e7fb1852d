package evidence

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)

func TestBuilderExactWhenShort(t *testing.T) {
	b := newBuilder(SourceProc, 0)
	for i := range 100 {
		b.add(t0.Add(time.Duration(i)*time.Second), float64(i))
	}
	s := b.series()
	if s.Len() != 100 || s.Src != SourceProc || s.Res.Step != time.Second {
		t.Fatalf("len %d src %v step %v", s.Len(), s.Src, s.Res.Step)
	}
	for i, p := range s.Points {
		if p.V != float64(i) || !p.T.Equal(t0.Add(time.Duration(i)*time.Second)) || p.Src != SourceProc {
			t.Fatalf("point %d = %+v", i, p)
		}
	}
}

// TestBuilderBounded: a day of readings every 100 ms keeps at most 2 x maxBuckets points, in
// time order, with the true minimum, maximum, first and last readings.
func TestBuilderBounded(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	b := newBuilder(SourceRuntimeMetrics, 0)
	n := 24 * 3600 * 10
	lo, hi := math.Inf(1), math.Inf(-1)
	var loT, hiT time.Time
	for i := range n {
		tt := t0.Add(time.Duration(i) * 100 * time.Millisecond)
		v := 100 + 50*math.Sin(float64(i)/5000) + r.NormFloat64()
		if i == n/3 {
			v = 1e6 // one spike
		}
		if v < lo {
			lo, loT = v, tt
		}
		if v > hi {
			hi, hiT = v, tt
		}
		b.add(tt, v)
	}
	s := b.series()
	if s.Len() > 2*maxBuckets || s.Len() < maxBuckets/4 {
		t.Fatalf("%d points, want between %d and %d", s.Len(), maxBuckets/4, 2*maxBuckets)
	}
	for i := 1; i < s.Len(); i++ {
		if s.Points[i].T.Before(s.Points[i-1].T) {
			t.Fatalf("points out of order at %d", i)
		}
	}
	mx, _ := s.Max()
	mn, _ := s.Min()
	if mx.V != hi || !mx.T.Equal(hiT) || mn.V != lo || !mn.T.Equal(loT) {
		t.Errorf("max %+v min %+v, want %v@%v and %v@%v", mx, mn, hi, hiT, lo, loT)
	}
	if !s.First().T.Equal(t0) || !s.Last().T.Equal(t0.Add(time.Duration(n-1)*100*time.Millisecond)) {
		t.Errorf("first %v last %v", s.First().T, s.Last().T)
	}
	if s.Res.Step < 10*time.Second {
		t.Errorf("step %v: a reduced series says its slices' width", s.Res.Step)
	}
}

// TestCounterReset: a counter that starts again from zero (a restarted process) stays
// monotonic, so the increase over the window counts both lives.
func TestCounterReset(t *testing.T) {
	b := newCounter(SourceMemStats)
	for i, v := range []float64{10, 20, 30, 2, 12} {
		b.add(t0.Add(time.Duration(i)*time.Second), v)
	}
	s := b.series()
	if got := s.Increase(); got != 20+12 {
		t.Errorf("increase = %v, want 32 (20 before the restart, 12 after)", got)
	}
	if got := s.Rate(); got != 8 {
		t.Errorf("rate = %v, want 8/s", got)
	}
}

// TestBuilderOutOfOrder: an agent's history arrives after readings taken meanwhile; each
// reading still lands in time order.
func TestBuilderOutOfOrder(t *testing.T) {
	b := newBuilder(SourceProc, 0)
	for i := 50; i < 60; i++ {
		b.add(t0.Add(time.Duration(i)*time.Second), float64(i))
	}
	for i := range 50 {
		b.add(t0.Add(time.Duration(i)*time.Second), float64(i))
	}
	s := b.series()
	if s.Len() != 60 {
		t.Fatalf("len %d", s.Len())
	}
	for i, p := range s.Points {
		if p.V != float64(i) {
			t.Fatalf("point %d = %v", i, p.V)
		}
	}
}

func TestSeriesLookups(t *testing.T) {
	s := Series{Points: []Point{{T: t0, V: 1}, {T: t0.Add(10 * time.Second), V: 2}, {T: t0.Add(20 * time.Second), V: 3}}}
	if p, _ := s.At(t0.Add(15 * time.Second)); p.V != 2 {
		t.Errorf("At = %v", p.V)
	}
	if p, _ := s.Nearest(t0.Add(16 * time.Second)); p.V != 3 {
		t.Errorf("Nearest = %v", p.V)
	}
	if got := s.Between(t0.Add(5*time.Second), t0.Add(20*time.Second)); len(got) != 2 || got[0].V != 2 {
		t.Errorf("Between = %+v", got)
	}
	if got := s.Between(t0.Add(21*time.Second), t0.Add(30*time.Second)); got != nil {
		t.Errorf("Between after the end = %+v", got)
	}
}

func BenchmarkBuilderDay(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		bl := newBuilder(SourceProc, 0)
		for i := range 86400 {
			bl.add(t0.Add(time.Duration(i)*time.Second), float64(i%977))
		}
		_ = bl.series()
	}
}

// TestGoroutinesLedByTheIndex: a program whose memory memdoctor began to read when its pprof
// stopped answering has its goroutine count from the index page before, and from its memory
// after: one series of the one figure, the index's readings leading the memory's.
func TestGoroutinesLedByTheIndex(t *testing.T) {
	m := newMulti()
	t0 := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	d := &quantities[qGoroutines]
	for i := range 10 {
		m.put(d, SourcePprofIndex, t0.Add(time.Duration(i)*time.Second), float64(100+i))
	}
	for i := 8; i < 20; i++ { // the memory's readings from the 8th second on
		m.put(d, SourceProcessMemory, t0.Add(time.Duration(i)*time.Second), float64(100+i))
	}
	s := m.bestLed(d.sources, d.lead)
	if s.Src != SourceProcessMemory || len(s.Points) != 20 || s.Points[0].V != 100 || s.Points[0].Src != SourcePprofIndex || s.Points[19].V != 119 {
		t.Errorf("series of %s, %d points (%v ... %v): want the memory's, led by the index's 8 earlier readings", s.Src, len(s.Points), s.First(), s.Last())
	}
	for i := 1; i < len(s.Points); i++ {
		if !s.Points[i].T.After(s.Points[i-1].T) {
			t.Fatalf("points out of order at %d: %v then %v", i, s.Points[i-1].T, s.Points[i].T)
		}
	}
}
