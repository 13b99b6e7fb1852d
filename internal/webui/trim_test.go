package webui

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/memdoctor/memdoctor/collect/pprofio"
)

// manyStacks is a profile of n distinct 10-frame stacks with two sample types; stack i has
// values (i+1, 1000*(n-i)): the largest of one type are the smallest of the other.
func manyStacks(n int) *profile.Profile {
	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "alloc_space", Unit: "bytes"}, {Type: "inuse_space", Unit: "bytes"}}}
	fn := func(name string) *profile.Function {
		f := &profile.Function{ID: uint64(len(p.Function) + 1), Name: name}
		p.Function = append(p.Function, f)
		return f
	}
	loc := func(f *profile.Function) *profile.Location {
		l := &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: f, Line: 1}}}
		p.Location = append(p.Location, l)
		return l
	}
	var common []*profile.Location
	for j := range 9 {
		common = append(common, loc(fn(fmt.Sprintf("main.frame%d", j))))
	}
	for i := range n {
		leaf := loc(fn(fmt.Sprintf("main.leaf%d", i)))
		p.Sample = append(p.Sample, &profile.Sample{Location: append([]*profile.Location{leaf}, common...), Value: []int64{int64(i + 1), int64(1000 * (n - i))}})
	}
	return p
}

func totals(p *profile.Profile) []int64 {
	t := make([]int64, len(p.SampleType))
	for _, s := range p.Sample {
		for i, v := range s.Value {
			t[i] += v
		}
	}
	return t
}

func frames(p *profile.Profile) int {
	n := 0
	for _, s := range p.Sample {
		for _, l := range s.Location {
			n += max(1, len(l.Line))
		}
	}
	return n
}

// valueOf is the value of type i of the sample whose leaf is fn, and whether one is there.
func valueOf(p *profile.Profile, fn string, i int) (int64, bool) {
	for _, s := range p.Sample {
		if s.Location[0].Line[0].Function.Name == fn {
			return s.Value[i], true
		}
	}
	return 0, false
}

// TestTrimFrames: a profile of 1000 ten-frame stacks given 2000 frames keeps the stacks that
// matter most for either sample type with their exact values, folds the rest into one
// sample that says so, and keeps every total.
func TestTrimFrames(t *testing.T) {
	p := manyStacks(1000)
	want := totals(p)
	got, folded, err := trimFrames(p, 2000)
	if err != nil {
		t.Fatal(err)
	}
	if n := frames(got); n > 2000 {
		t.Errorf("%d frames, want at most 2000", n)
	}
	if g := totals(got); fmt.Sprint(g) != fmt.Sprint(want) {
		t.Errorf("totals %v, want %v", g, want)
	}
	if folded != 1000-199 || len(got.Sample) != 200 {
		t.Errorf("%d stacks folded, %d samples; want 801 folded into one, 199 kept", folded, len(got.Sample))
	}
	// The largest of each type: leaf999 for alloc_space (1000), leaf0 for inuse_space.
	for _, c := range []struct {
		fn   string
		i    int
		want int64
	}{{"main.leaf999", 0, 1000}, {"main.leaf0", 1, 1000 * 1000}, {"main.leaf998", 0, 999}, {"main.leaf1", 1, 999 * 1000}} {
		if v, ok := valueOf(got, c.fn, c.i); !ok || v != c.want {
			t.Errorf("%s: %d (kept %v), want %d", c.fn, v, ok, c.want)
		}
	}
	if _, ok := valueOf(got, "main.leaf500", 0); ok {
		t.Error("main.leaf500, among the least of both types, was kept")
	}
	if _, ok := valueOf(got, "memdoctor: 801 smaller stacks folded here (serve shows at most 2000 frames)", 0); !ok {
		t.Error("no sample says what was folded")
	}
	// A profile within the bound is untouched.
	small := manyStacks(10)
	if same, n, _ := trimFrames(small, 2000); same != small || n != 0 {
		t.Errorf("a small profile was changed: %d folded", n)
	}
}

// TestTrimDiff: in a diff, a stack's base and new samples are kept or folded together, so
// every shown difference is exact; the folded base stays labelled as the base.
func TestTrimDiff(t *testing.T) {
	f := &fetcher{maxFrames: 4000, failed: map[string]error{}}
	base, next := manyStacks(1000), manyStacks(1000)
	next.Sample[3].Value = []int64{5000, 7} // leaf3 grew in alloc_space
	f.read = func(name, path string) (*profile.Profile, error) {
		if path == "base" {
			return base.Copy(), nil
		}
		return next.Copy(), nil
	}
	p, err := f.diff("base", "next")
	if err != nil {
		t.Fatal(err)
	}
	if n := frames(p); n > 4000 {
		t.Fatalf("%d frames, want at most 4000", n)
	}
	if len(p.Sample) >= 1000 {
		t.Fatalf("%d samples: nothing was folded", len(p.Sample))
	}
	var baseTotal, nextTotal int64
	net := map[string]int64{}
	sides := map[string]int{}
	for _, s := range p.Sample {
		name := s.Location[0].Line[0].Function.Name
		net[name] += s.Value[0]
		sides[name]++
		if len(s.Label[baseLabel]) > 0 {
			baseTotal += s.Value[0]
		} else {
			nextTotal += s.Value[0]
		}
	}
	if baseTotal != -totals(base)[0] || nextTotal != totals(next)[0] {
		t.Errorf("totals %d and %d, want %d and %d", baseTotal, nextTotal, -totals(base)[0], totals(next)[0])
	}
	if net["main.leaf3"] != 5000-4 {
		t.Errorf("leaf3 grew by %d, want 4996", net["main.leaf3"])
	}
	for name, n := range sides {
		if n != 2 {
			t.Errorf("%s appears on %d side(s), want both", name, n)
		}
	}
}

// TestServeLargestRealProfile serves the flame graph of the largest real profile we have (a
// merged Loki heap profile: 41347 samples, 992028 frames), for a snapshot and a diff: the
// pages are built from at most maxUIFrames frames and say what was folded.
func TestServeLargestRealProfile(t *testing.T) {
	data, err := os.ReadFile("../../testdata/profiles/loki_alloc_objects_merged_big.pb.gz")
	if err != nil {
		t.Fatal(err)
	}
	p, err := pprofio.Default.Parse("loki", data)
	if err != nil {
		t.Fatal(err)
	}
	if n := frames(p); n < 4*maxUIFrames {
		t.Fatalf("the fixture has %d frames: it no longer tests the bound", n)
	}
	h := newTestServer(t, hostileSession(t, data), Options{}).Handler()
	for _, path := range []string{"/pprof/snap/0/flamegraph", "/pprof/diff/0/1/flamegraph"} {
		r := get(h, path, nil)
		b := body(t, r)
		if r.StatusCode != 200 || !strings.Contains(b, "smaller stacks folded here") {
			t.Errorf("%s: %d, %d bytes, folded stacks named: %v", path, r.StatusCode, len(b), strings.Contains(b, "smaller stacks folded here"))
		}
	}
}
