package report

import (
	"math"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/agent/breakdown"
	"github.com/memdoctor/memdoctor/session"
)

// The stacked chart draws the very splits the diagnosis saw: at each instant it draws, the
// bands are the evidence's split of memory there, and they add up to its RSS.
func TestMemoryChartDrawsTheEvidence(t *testing.T) {
	s := openFixture(t)
	ev := evidenceOf(t, s)
	if len(ev.Splits) == 0 {
		t.Fatal("fixture has no aligned readings")
	}
	c := memoryChart(ev, fixtureDiagnosis(s), ev.Start, defaultBuckets)
	bySecond := map[float64]breakdown.At{}
	for _, a := range ev.Splits {
		bySecond[roundTo(a.Time.Sub(ev.Start).Seconds(), 3)] = a
	}
	drawn := 0
	for i, x := range c.X.v {
		a, ok := bySecond[roundTo(x, 3)]
		if !ok {
			continue // an RSS reading without a split
		}
		drawn++
		var sum float64
		for _, ser := range c.Series {
			if !ser.Area {
				continue
			}
			v := ser.Values.v[i]
			for _, b := range memoryBands {
				if b.name == ser.Name && uint64(v) != b.get(&a) {
					t.Fatalf("at %.3fs band %s = %v, the evidence says %d", x, b.name, v, b.get(&a))
				}
			}
			sum += v
		}
		if want := float64(a.RSSBytes + a.NotResidentBytes); sum != want {
			t.Errorf("at %.3fs the bands add up to %.0f, want RSS + not resident = %.0f", x, sum, want)
		}
	}
	if drawn != len(ev.Splits) {
		t.Errorf("%d of %d splits drawn", drawn, len(ev.Splits))
	}
}

func TestGCChartFromTrace(t *testing.T) {
	tmp := t.TempDir()
	sp := synthSpec{start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), duration: 10 * time.Minute, sample: time.Second, gcEvery: 2 * time.Second}
	synthSession(t, tmp+"/s", sp)
	s, err := session.Open(tmp + "/s")
	if err != nil {
		t.Fatal(err)
	}
	ev := evidenceOf(t, s)
	c := gcChart(ev, ev.Start, maxRateBins)
	if c.Empty != "" || len(c.Series) != 3 {
		t.Fatalf("gc chart %+v", c)
	}
	rate := c.Series[0].Values.v
	// The first slice starts at the counter's first reading, which already counts the cycle
	// at that instant; the last may be cut short.
	for i, r := range rate[1 : len(rate)-1] {
		if math.Abs(r-0.5) > 0.06 {
			t.Errorf("slice %d: %.3f GC/s, want 0.5 (one every 2 s)", i+1, r)
		}
	}
	// 0.4 ms of assist in a 2.2 ms cycle every 2 s on 4 P.
	if cpu := c.Series[1].Values.v[3]; math.Abs(cpu-0.0022/2/4) > 0.0001 {
		t.Errorf("GC CPU %.6f, want %.6f", cpu, 0.0022/2/4)
	}
}
