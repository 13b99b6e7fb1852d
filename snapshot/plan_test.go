package snapshot

import (
	"reflect"
	"testing"

	"github.com/memdoctor/memdoctor/process"
)

func TestMergeRegions(t *testing.T) {
	got := mergeRegions([]process.Region{{Lo: 30, Hi: 40}, {Lo: 0, Hi: 10}, {Lo: 10, Hi: 20}, {Lo: 35, Hi: 50}, {Lo: 60, Hi: 60}, {Lo: 70, Hi: 80}})
	want := []process.Region{{Lo: 0, Hi: 20}, {Lo: 30, Hi: 50}, {Lo: 70, Hi: 80}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("merged %v, want %v", got, want)
	}
}

// TestSplitRegions: the probe's pieces cover its regions once, in order, in about equal parts.
func TestSplitRegions(t *testing.T) {
	rs := []process.Region{{Lo: 0, Hi: 100}, {Lo: 200, Hi: 210}, {Lo: 300, Hi: 390}}
	pieces := splitRegions(rs, 4)
	if len(pieces) != 4 {
		t.Fatalf("%d pieces: %v", len(pieces), pieces)
	}
	var all []process.Region
	for _, p := range pieces {
		if n := bytesOf(p); n != 50 {
			t.Errorf("a piece of %d bytes: %v", n, p)
		}
		all = append(all, p...)
	}
	if got := mergeRegions(all); !reflect.DeepEqual(got, rs) {
		t.Errorf("the pieces cover %v, want %v", got, rs)
	}
	if got := splitRegions(nil, 4); len(got) != 0 {
		t.Errorf("nothing split: %v", got)
	}
}

// TestMissing: what a snapshot skipped of a range, clipped to it, in address order.
func TestMissing(t *testing.T) {
	s := &Snapshot{Skipped: []process.Region{{Lo: 10, Hi: 20}, {Lo: 30, Hi: 40}, {Lo: 50, Hi: 60}}}
	for _, c := range []struct {
		lo, hi uint64
		want   []process.Region
	}{
		{0, 10, nil},
		{15, 35, []process.Region{{Lo: 15, Hi: 20}, {Lo: 30, Hi: 35}}},
		{20, 30, nil},
		{0, 100, s.Skipped},
		{55, 56, []process.Region{{Lo: 55, Hi: 56}}},
	} {
		if got := s.Missing(c.lo, c.hi); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Missing(%d, %d) = %v, want %v", c.lo, c.hi, got, c.want)
		}
	}
	if got := (&Snapshot{}).Missing(0, 100); got != nil {
		t.Errorf("a snapshot that skipped nothing: %v", got)
	}
}
