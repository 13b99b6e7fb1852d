package recorder

import (
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/session"
)

// TestOOMWatch feeds readings (a share of the limit, one a second unless said) and checks
// which ones call for profiles at once.
func TestOOMWatch(t *testing.T) {
	for _, tc := range []struct {
		name   string
		shares []float64
		gaps   []time.Duration // between readings; default 1s
		want   []int           // the readings that capture
	}{
		{"far from the limit", []float64{0.2, 0.5, 0.8, 0.89}, nil, nil},
		{"a climb into the limit: one per step of 1%", []float64{0.8, 0.88, 0.905, 0.91, 0.925, 0.94, 0.945, 0.99}, nil, []int{2, 4, 5, 7}},
		{"near but falling", []float64{0.99, 0.97, 0.95}, nil, []int{0}},
		{"a plateau near the limit: nothing more after the climb", []float64{0.90, 0.925, 0.921, 0.92, 0.922, 0.93, 0.924}, nil, []int{0, 1}},
		{"readings 100 ms apart: at most one a second", []float64{0.91, 0.93, 0.95, 0.97, 0.99},
			[]time.Duration{100 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond, time.Second}, []int{0, 4}},
		{"away and back: captured afresh", []float64{0.91, 0.95, 0.80, 0.91, 0.925}, nil, []int{0, 1, 3, 4}},
		{"a dip above the rearm line does not rearm", []float64{0.95, 0.87, 0.93, 0.955, 0.965}, nil, []int{0, 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var o oomWatch
			now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
			var got []int
			for i, s := range tc.shares {
				if i > 0 {
					gap := time.Second
					if i-1 < len(tc.gaps) {
						gap = tc.gaps[i-1]
					}
					now = now.Add(gap)
				}
				if o.observe(now, s) {
					got = append(got, i)
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("captures at readings %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("captures at readings %v, want %v", got, tc.want)
				}
			}
		})
	}
}

func TestNearest(t *testing.T) {
	mib := uint64(1 << 20)
	for _, tc := range []struct {
		name   string
		smp    session.Sample
		budget uint64
		what   string
		share  float64
	}{
		{"no limit", session.Sample{Proc: &session.Proc{RSSBytes: 100 * mib}}, 0, "", 0},
		{"the budget", session.Sample{Proc: &session.Proc{RSSBytes: 90 * mib}}, 100 * mib, "RSS", 0.9},
		{"the cgroup's working set", session.Sample{Proc: &session.Proc{RSSBytes: 90 * mib},
			Cgroup: &session.Cgroup{LimitBytes: 100 * mib, UsageBytes: 99 * mib, WorkingSetBytes: 95 * mib}}, 0, "the cgroup's working set", 0.95},
		{"the closer of the two", session.Sample{Proc: &session.Proc{RSSBytes: 90 * mib},
			Cgroup: &session.Cgroup{LimitBytes: 200 * mib, WorkingSetBytes: 95 * mib}}, 100 * mib, "RSS", 0.9},
		{"usage without a working set", session.Sample{Cgroup: &session.Cgroup{LimitBytes: 100 * mib, UsageBytes: 50 * mib}}, 0, "the cgroup's working set", 0.5},
	} {
		lr, ok := nearest(tc.smp, tc.budget)
		if ok != (tc.what != "") || lr.what != tc.what || lr.share != tc.share {
			t.Errorf("%s: nearest = %+v, %v; want %q at %.2f", tc.name, lr, ok, tc.what, tc.share)
		}
	}
}
