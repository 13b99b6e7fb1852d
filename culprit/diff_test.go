package culprit

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

// diffPair builds an OLD and a NEW profile as two different processes would
// write them: different location IDs, function IDs and addresses.
func diffPair() (old, new *synth) {
	old = newSynth(0, "alloc_objects/count", "alloc_space/bytes")
	old.sample([]int64{1, 100}, withRoot("io.ReadAll:712", "main.handleUpload:41")...)
	old.sample([]int64{1, 80}, "encoding/json.(*decodeState).literalStore:1012", "encoding/json.Unmarshal:106")
	old.sample([]int64{1, 40}, "main.gone:3")
	new = newSynth(1<<20, "alloc_objects/count", "alloc_space/bytes")
	new.sample([]int64{1, 50}, "main.newSite:8")
	new.sample([]int64{3, 400}, withRoot("io.ReadAll:712", "main.handleUpload:41")...)
	new.sample([]int64{1, 90}, "encoding/json.(*decodeState).literalStore:1012", "encoding/json.Unmarshal:106")
	return old, new
}

func TestDiffSynthetic(t *testing.T) {
	old, new := diffPair()
	r, err := Diff(old.p, new.p, "alloc_space", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.OldTotal != 220 || r.NewTotal != 540 || r.Growth != 360 || r.LineGrowth != 360 {
		t.Errorf("totals old %d new %d growth %d/%d", r.OldTotal, r.NewTotal, r.Growth, r.LineGrowth)
	}
	want := []struct {
		fn              string
		old, new, delta int64
		share           float64
	}{
		{"main.handleUpload", 100, 400, 300, 300.0 / 360},
		{"main.newSite", 0, 50, 50, 50.0 / 360},
		{"encoding/json.(*decodeState).literalStore", 80, 90, 10, 10.0 / 360},
		{"main.gone", 40, 0, -40, 0},
	}
	if len(r.ByFunction) != len(want) {
		t.Fatalf("ByFunction: %+v", r.ByFunction)
	}
	for i, w := range want {
		d := r.ByFunction[i]
		if d.Site.Function != w.fn || d.Old != w.old || d.New != w.new || d.Delta != w.delta || math.Abs(d.Share-w.share) > 1e-12 {
			t.Errorf("ByFunction[%d] = %+v, want %+v", i, d, w)
		}
	}
	if got := r.ByFunction[0].Stack; len(got) != 5 || got[0] != "io.ReadAll" || got[1] != "main.handleUpload" {
		t.Errorf("stack %q", got)
	}
	// The only warning: a site shrank although alloc_space is cumulative.
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "1 functions have a smaller alloc_space") || !strings.Contains(r.Warnings[0], "main.gone") {
		t.Errorf("warnings %q", r.Warnings)
	}

	inuse := newSynth(0, "inuse_space/bytes")
	if _, err := Diff(old.p, inuse.p, "alloc_space", Options{}); !errors.Is(err, ErrNoSampleType) ||
		!strings.HasPrefix(err.Error(), "NEW profile") || !strings.Contains(err.Error(), "inuse_space/bytes") {
		t.Errorf("missing sample type: %v", err)
	}
	if _, err := Diff(old.p, inuse.p, "inuse_space", Options{}); err == nil || !strings.HasPrefix(err.Error(), "OLD profile") {
		t.Errorf("missing sample type in OLD: %v", err)
	}
	odd := newSynth(0, "alloc_space/count")
	if _, err := Diff(odd.p, old.p, "alloc_space", Options{}); err == nil || !strings.Contains(err.Error(), "differ") {
		t.Errorf("unit mismatch: %v", err)
	}
	if _, err := Diff(nil, old.p, "alloc_space", Options{}); err == nil {
		t.Errorf("nil profile: no error")
	}
}

func TestDiffWarnings(t *testing.T) {
	tests := []struct {
		name   string
		typ    string
		modify func(old, new *synth)
		swap   bool
		want   string
	}{
		{name: "restart", typ: "alloc_space", swap: true, want: "NEW's total alloc_space is smaller than OLD's: are these from different processes (restart in between)?"},
		{name: "restart (objects)", typ: "alloc_objects", swap: true, want: "NEW's total alloc_objects is smaller"},
		{name: "delta profile", typ: "alloc_space", modify: func(o, n *synth) { n.p.DurationNanos = int64(30 * time.Second) }, want: "NEW is a delta profile (it covers 30s"},
		{name: "swapped", typ: "alloc_space", modify: func(o, n *synth) { o.p.TimeNanos, n.p.TimeNanos = 2e18, 1e18 }, want: "NEW was taken"},
		{name: "other binary", typ: "alloc_space", modify: func(o, n *synth) { n.p.Mapping[0].File = "/usr/bin/other" }, want: "different binaries (svc, other)"},
		{name: "same build ID", typ: "alloc_space", modify: func(o, n *synth) {
			o.p.Mapping[0].BuildID, n.p.Mapping[0].BuildID = "abc", "abc"
			n.p.Mapping[0].File = "/elsewhere/svc2"
		}, want: ""},
		{name: "period", typ: "alloc_space", modify: func(o, n *synth) { n.p.Period = 1 }, want: "sampling periods differ"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old, new := diffPair()
			if tt.modify != nil {
				tt.modify(old, new)
			}
			if tt.swap {
				old, new = new, old
			}
			r, err := Diff(old.p, new.p, tt.typ, Options{})
			if err != nil {
				t.Fatal(err)
			}
			found := tt.want == ""
			for _, w := range r.Warnings {
				if tt.want != "" && strings.Contains(w, tt.want) {
					found = true
				}
				if strings.Contains(w, "different binaries") && tt.want == "" {
					t.Errorf("unexpected warning %q", w)
				}
			}
			if !found {
				t.Errorf("warnings %q lack %q", r.Warnings, tt.want)
			}
		})
	}

	t.Run("identical", func(t *testing.T) {
		old, _ := diffPair()
		r, err := Diff(old.p, old.p, "alloc_space", Options{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Growth != 0 || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "no GC ran between the snapshots") {
			t.Errorf("growth %d warnings %q", r.Growth, r.Warnings)
		}
		for _, d := range r.ByFunction {
			if d.Delta != 0 || d.Share != 0 {
				t.Errorf("%+v", d)
			}
		}
	})
}
