package report

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/memdoctor/memdoctor/collect/pprofio"
	"github.com/memdoctor/memdoctor/culprit"
)

// flameDiffWhole is flameDiff as it was before it built only the drawn frames: the whole
// tree of every stack that grew, then encodeFlame. The test holds flameDiff to it.
func flameDiffWhole(old, new *profile.Profile, typ string, opts culprit.Options) (*Flame, error) {
	oi, err := culprit.SampleIndex(old, typ)
	if err != nil {
		return nil, err
	}
	ni, err := culprit.SampleIndex(new, typ)
	if err != nil {
		return nil, err
	}
	type sv struct {
		stack     []string
		culpritAt int
		own       bool
		delta     int64
	}
	stacks := map[string]*sv{}
	add := func(p *profile.Profile, idx int, sign int64) {
		for _, s := range p.Sample {
			if s == nil || idx >= len(s.Value) || s.Value[idx] == 0 {
				continue
			}
			site, names := culprit.Attribute(s.Location, opts)
			key := strings.Join(names, "\x00")
			v := stacks[key]
			if v == nil {
				v = &sv{stack: names, culpritAt: slices.Index(names, site.Function), own: site.Own}
				stacks[key] = v
			}
			v.delta += sign * s.Value[idx]
		}
	}
	add(old, oi, -1)
	add(new, ni, +1)
	root := &flameNode{name: "all"}
	var shrank int64
	for _, v := range stacks {
		switch {
		case v.delta > 0:
			root.add(v.stack, v.delta, v.culpritAt, v.own)
		case v.delta < 0:
			shrank -= v.delta
		}
	}
	f := encodeFlame(root)
	f.Unit = new.SampleType[ni].Unit
	f.Shrank = shrank
	return f, nil
}

// lokiPair is the largest real profile we have (41,347 samples, 992,028 frames) and a copy
// in which a third of the samples grew, a third shrank and a third are gone.
func lokiPair(t testing.TB) (old, new *profile.Profile) {
	t.Helper()
	old, err := pprofio.Default.ReadFileAs("loki", "../testdata/profiles/loki_alloc_objects_merged_big.pb.gz")
	if err != nil {
		t.Fatal(err)
	}
	new = old.Copy()
	kept := new.Sample[:0]
	for i, s := range new.Sample {
		switch i % 3 {
		case 0:
			for j := range s.Value {
				s.Value[j] = s.Value[j]*3 + int64(i)
			}
		case 1:
			for j := range s.Value {
				s.Value[j] /= 2
			}
		case 2:
			continue
		}
		kept = append(kept, s)
	}
	new.Sample = kept
	return old, new
}

// TestFlameDiffWhole checks that building only the frames wide enough to draw gives the very
// flame the whole tree gave, dropped-frame count included, on every sample type of a real
// profile in both directions, and on stacks deeper than the depth drawn.
func TestFlameDiffWhole(t *testing.T) {
	old, new := lokiPair(t)
	for _, st := range new.SampleType {
		for _, dir := range []string{"grew", "shrank"} {
			a, b := old, new
			if dir == "shrank" {
				a, b = new, old
			}
			want, err := flameDiffWhole(a, b, st.Type, culprit.Options{MainModule: "github.com/grafana/loki"})
			if err != nil {
				t.Fatal(err)
			}
			got, err := flameDiff(a, b, st.Type, culprit.Options{MainModule: "github.com/grafana/loki"})
			if err != nil {
				t.Fatal(err)
			}
			if want.Total == 0 || len(want.Nodes) < 100 || want.Dropped == 0 {
				t.Fatalf("%s %s: a flame of %d nodes (%d dropped, total %d): the case tests nothing", st.Type, dir, len(want.Nodes), want.Dropped, want.Total)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s %s: flameDiff gives %d nodes (%d dropped, total %d, shrank %d), the whole tree %d (%d dropped, total %d, shrank %d)",
					st.Type, dir, len(got.Nodes), got.Dropped, got.Total, got.Shrank, len(want.Nodes), want.Dropped, want.Total, want.Shrank)
			}
		}
	}
	// Stacks deeper than maxFlameDepth, and names that hold the separator a joined key used.
	var deep []any
	deep = append(deep, []int64{10})
	for i := range maxFlameDepth + 20 {
		deep = append(deep, "main.f"+strings.Repeat("x", i%7)+":1")
	}
	o := synthProfile([]string{"alloc_space/bytes"}, [][]any{{[]int64{1}, "main.a:1"}})
	n := synthProfile([]string{"alloc_space/bytes"}, [][]any{
		deep,
		{[]int64{7}, "main.a\x00b:1", "main.main:1"},
		{[]int64{5}, "b:1", "main.a:1", "main.main:1"},
	})
	want, _ := flameDiffWhole(o, n, "alloc_space", culprit.Options{})
	got, err := flameDiff(o, n, "alloc_space", culprit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("deep stacks: flameDiff gives %d nodes (%d dropped), the whole tree %d (%d dropped)", len(got.Nodes), got.Dropped, len(want.Nodes), want.Dropped)
	}
	// Many stacks under one deep shared prefix, each too narrow to draw on its own.
	o, n = deepShared(2000)
	want, _ = flameDiffWhole(o, n, "alloc_space", culprit.Options{})
	if got, err = flameDiff(o, n, "alloc_space", culprit.Options{}); err != nil {
		t.Fatal(err)
	}
	if want.Dropped != 2000 || !reflect.DeepEqual(got, want) {
		t.Errorf("deep shared prefix: flameDiff gives %d nodes (%d dropped), the whole tree %d (%d dropped, want 2000)", len(got.Nodes), got.Dropped, len(want.Nodes), want.Dropped)
	}
}

// BenchmarkFlameDiff measures one flame diff of the Loki profile (run with -benchmem).
func BenchmarkFlameDiff(b *testing.B) {
	old, new := lokiPair(b)
	for _, c := range []struct {
		name string
		diff func(old, new *profile.Profile, typ string, opts culprit.Options) (*Flame, error)
	}{{"top-down", flameDiff}, {"whole-tree", flameDiffWhole}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.diff(old, new, new.SampleType[0].Type, culprit.Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// deepShared is n stacks that share their first maxFlameDepth-1 frames from the root and end
// in a leaf of their own (the last frame the tree holds): the shape in which a tree built level by level would hold every
// stack once per level.
func deepShared(n int) (old, new *profile.Profile) {
	shared := make([]any, 0, maxFlameDepth)
	for i := range maxFlameDepth - 1 {
		shared = append(shared, fmt.Sprintf("main.f%d:1", maxFlameDepth-1-i))
	}
	samples := make([][]any, n)
	for i := range samples {
		samples[i] = append([]any{[]int64{int64(1 + i%5)}, fmt.Sprintf("main.leaf%d:1", i)}, shared...)
	}
	old = synthProfile([]string{"alloc_space/bytes"}, [][]any{{[]int64{1}, "main.f1:1"}})
	return old, synthProfile([]string{"alloc_space/bytes"}, samples)
}

// BenchmarkFlameDiffDeep measures a flame diff of 20,000 stacks sharing 127 frames.
func BenchmarkFlameDiffDeep(b *testing.B) {
	old, new := deepShared(20000)
	for _, c := range []struct {
		name string
		diff func(old, new *profile.Profile, typ string, opts culprit.Options) (*Flame, error)
	}{{"top-down", flameDiff}, {"whole-tree", flameDiffWhole}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.diff(old, new, "alloc_space", culprit.Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
