package report

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/breakdown"
	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/session"
)

// The stacked chart must split memory exactly as the diagnosis does at the same instant.
func TestBreakdownerMatchesDiagnose(t *testing.T) {
	s := openFixture(t)
	in := diagnose.NewInput(s, diagnose.Options{})
	bd := newBreakdowner(in)
	if len(in.Proc) == 0 {
		t.Fatal("fixture has no /proc samples")
	}
	for _, p := range in.Proc {
		got := bd.at(p.T, &p.Proc)
		want := *in.BreakdownAt(p.T, &p.Proc)
		if !slices.Equal(rowBytes(got), rowBytes(want)) || got.RSSBytes != want.RSSBytes {
			t.Fatalf("at %s: %v, diagnose says %v", p.T, rowBytes(got), rowBytes(want))
		}
	}
}

func rowBytes(b breakdown.At) []uint64 {
	var out []uint64
	for _, r := range b.Rows() {
		out = append(out, r.Bytes)
	}
	return out
}

func TestGCChartFromTrace(t *testing.T) {
	tmp := t.TempDir()
	sp := synthSpec{start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), duration: 10 * time.Minute, sample: time.Second, gcEvery: 2 * time.Second}
	synthSession(t, tmp+"/s", sp)
	s, err := session.Open(tmp + "/s")
	if err != nil {
		t.Fatal(err)
	}
	in := diagnose.NewInput(s, diagnose.Options{})
	c := gcChart(in, in.Start, maxRateBins)
	if c.Empty != "" || len(c.Series) != 3 {
		t.Fatalf("gc chart %+v", c)
	}
	rate := c.Series[0].Values.v
	for i, r := range rate[:len(rate)-1] { // the last slice may be cut short
		if math.Abs(r-0.5) > 0.06 {
			t.Errorf("slice %d: %.3f GC/s, want 0.5 (one every 2 s)", i, r)
		}
	}
	// 0.4 ms of assist in a 2.2 ms cycle every 2 s on 4 P.
	if cpu := c.Series[1].Values.v[3]; math.Abs(cpu-0.0022/2/4) > 0.0001 {
		t.Errorf("GC CPU %.6f, want %.6f", cpu, 0.0022/2/4)
	}
}
