package compare

import (
	"encoding/binary"
	"math"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/evidence"
)

// floats decodes b into at most max values (two bytes each, with a few repeated on purpose:
// ties are the hard case).
func floats(b []byte, max int) []float64 {
	var out []float64
	for len(b) >= 2 && len(out) < max {
		out = append(out, float64(binary.LittleEndian.Uint16(b)%97))
		b = b[2:]
	}
	return out
}

// FuzzMannWhitney: for any samples, p is in (0, 1], U in [0, n1 n2], the two orders agree,
// and no p-value is below the smallest the sizes allow.
func FuzzMannWhitney(f *testing.F) {
	f.Add([]byte{1, 0, 2, 0, 3, 0}, []byte{4, 0, 5, 0, 6, 0})
	f.Add([]byte{1, 0, 1, 0, 1, 0, 2, 0}, []byte{1, 0, 2, 0, 2, 0})
	f.Fuzz(func(t *testing.T, a, b []byte) {
		x, y := floats(a, 40), floats(b, 40)
		r, s := MannWhitney(x, y), MannWhitney(y, x)
		n := float64(len(x) * len(y))
		if math.IsNaN(r.P) || r.P <= 0 || r.P > 1 || r.U < 0 || r.U > n {
			t.Fatalf("x=%v y=%v: %+v", x, y, r)
		}
		if math.Abs(r.P-s.P) > 1e-9 || math.Abs(r.U+s.U-n) > 1e-9 {
			t.Fatalf("x=%v y=%v: %+v one way, %+v the other", x, y, r, s)
		}
		if r.P < MinP(len(x), len(y))*(1-1e-9) {
			t.Fatalf("x=%v y=%v: p %v below the smallest possible %v", x, y, r.P, MinP(len(x), len(y)))
		}
	})
}

// FuzzCompareSeries builds sessions from arbitrary readings (out of order, counters that fall,
// huge and tiny values, a restart) and compares them: nothing panics, every p-value is a
// probability and every figure finite and not negative.
func FuzzCompareSeries(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, []byte{9, 8, 7, 6, 5, 4, 3, 2, 1}, uint8(3))
	f.Add([]byte{255, 0, 255, 0, 1, 1, 1, 1}, []byte{}, uint8(0))
	f.Fuzz(func(t *testing.T, a, b []byte, restart uint8) {
		sides := [2]Side{}
		for i, raw := range [][]byte{a, b} {
			ev := fuzzEvidence(raw, int(restart))
			sides[i] = Side{Name: "s", Ev: ev, D: diagnose.Diagnose(ev, diagnose.Options{Now: func() time.Time { return t0 }})}
		}
		r := Compare(sides[0], sides[1], Options{Interval: time.Second})
		for _, m := range r.Metrics {
			for _, v := range []*float64{m.Old, m.New, m.MedianOld, m.MedianNew} {
				if v != nil && (math.IsNaN(*v) || math.IsInf(*v, 0) || *v < 0) {
					t.Fatalf("%s: a figure %v", m.Name, *v)
				}
			}
			if m.PValue != nil && !(*m.PValue > 0 && *m.PValue <= 1) {
				t.Fatalf("%s: p %v", m.Name, *m.PValue)
			}
			if m.Unit == "fraction" && m.MedianOld != nil && *m.MedianOld > 1 {
				t.Fatalf("%s: a share of %v", m.Name, *m.MedianOld)
			}
		}
	})
}

// fuzzEvidence reads triples (time step, series, value) from raw into a session's series.
func fuzzEvidence(raw []byte, restart int) *evidence.Evidence {
	ev := evidence.New("run", evidence.Target{}, evidence.Options{})
	counters := []*evidence.Builder{evidence.NewCounter(evidence.SourceGCTrace), evidence.NewCounter(evidence.SourceGCTrace),
		evidence.NewCounter(evidence.SourceRuntimeMetrics), evidence.NewCounter(evidence.SourceProc), evidence.NewCounter(evidence.SourceMemStats)}
	gauges := []*evidence.Builder{evidence.NewGauge(evidence.SourceGCTrace, 1<<20), evidence.NewGauge(evidence.SourceProc, 0), evidence.NewGauge(evidence.SourcePprofIndex, 1)}
	t := t0
	for i := 0; i+2 < len(raw) && i < 3000; i += 3 {
		t = t.Add(time.Duration(int8(raw[i])) * 100 * time.Millisecond) // may go back
		v := math.Ldexp(float64(raw[i+2]), int(raw[i+1]%64)-8)
		k := int(raw[i+1]) % (len(counters) + len(gauges))
		if k < len(counters) {
			counters[k].Add(t, v)
		} else {
			gauges[k-len(counters)].Add(t, v)
		}
	}
	ev.GCCycles, ev.GCCPU, ev.GCAssist, ev.ProcessCPU, ev.AllocBytes = counters[0].Series(), counters[1].Series(), counters[2].Series(), counters[3].Series(), counters[4].Series()
	ev.Live, ev.RSS, ev.Goroutines = gauges[0].Series(), gauges[1].Series(), gauges[2].Series()
	if restart > 0 {
		ev.Restarts = []time.Time{t0.Add(time.Duration(restart) * time.Second)}
	}
	ev.Finish(evidence.Options{})
	return ev
}
