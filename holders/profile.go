package holders

import (
	"fmt"

	"github.com/google/pprof/profile"
)

// Profile turns the result into a pprof profile whose stacks are the reference paths: the
// root at the bottom, one frame per step, the culprit site on top, so that go tool pprof
// -http (and memdoctor serve) draws a flame graph of who holds what. Values are the sampled
// objects' estimated count and bytes.
func (r *Result) Profile() *profile.Profile {
	p := &profile.Profile{
		SampleType:        []*profile.ValueType{{Type: "objects", Unit: "count"}, {Type: "space", Unit: "bytes"}},
		PeriodType:        &profile.ValueType{Type: "space", Unit: "bytes"},
		Period:            int64(r.Heap.SampleRate),
		Comments:          []string{"memdoctor holders: frames are reference paths from the GC roots, the culprit site on top"},
		DefaultSampleType: "space",
	}
	locs := map[string]*profile.Location{}
	loc := func(name string) *profile.Location {
		if l, ok := locs[name]; ok {
			return l
		}
		f := &profile.Function{ID: uint64(len(p.Function) + 1), Name: name, SystemName: name}
		p.Function = append(p.Function, f)
		l := &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: f}}}
		p.Location = append(p.Location, l)
		locs[name] = l
		return l
	}
	for _, c := range r.Culprits {
		for _, cut := range c.Cuts {
			p.Comments = append(p.Comments, fmt.Sprintf("%s: cut %s: frees %d bytes (%.0f%% of the culprit)", c.Site, cut.what(), cut.Frees, 100*cut.Share))
		}
		for _, path := range c.Paths {
			// pprof lists a stack leaf first.
			stack := []*profile.Location{loc("allocated by " + c.Site)}
			for i := len(path.Hops) - 1; i >= 0; i-- {
				h := path.Hops[i]
				name := h.Expr
				if h.Type != "" {
					name += " (" + h.Type + ")"
				}
				if cut, ok := cutAt(c.Cuts, path, i); ok {
					// The frame where the culprit's paths can be cut says so in the flame graph.
					name += fmt.Sprintf(" [cut here: frees %d bytes]", cut.Frees)
				}
				stack = append(stack, loc(name))
			}
			stack = append(stack, loc(rootFrame(path.Root)))
			p.Sample = append(p.Sample, &profile.Sample{
				Location: stack,
				Value:    []int64{int64(path.Objects + 0.5), int64(path.Bytes + 0.5)},
				Label:    map[string][]string{"site": {c.Site}, "root": {path.Root.Kind}},
			})
		}
		if c.GarbageSamples > 0 {
			p.Sample = append(p.Sample, &profile.Sample{
				Location: []*profile.Location{loc("allocated by " + c.Site), loc("unreachable (freed at the next GC)")},
				Value:    []int64{int64(c.GarbageSamples), int64(c.GarbageBytes + 0.5)},
				Label:    map[string][]string{"site": {c.Site}},
			})
		}
	}
	return p
}

func rootFrame(r Root) string {
	switch r.Kind {
	case "global":
		return r.Name
	case "goroutine":
		s := "goroutine " + r.Name
		if r.Var != "" {
			s += " local " + r.Var
		}
		if r.Wait != "" {
			s += " [" + r.Wait + "]"
		}
		return s
	}
	return r.Name
}

// cutAt finds the cut made at a path's step i: the path reaches the cut's object there.
func cutAt(cuts []Cut, path Path, i int) (Cut, bool) {
	for _, cut := range cuts {
		if len(cut.Hops) != i+1 || cut.Root.Kind != path.Root.Kind || cut.Root.Label() != path.Root.Label() {
			continue
		}
		same := true
		for k, h := range cut.Hops {
			if path.Hops[k] != h {
				same = false
				break
			}
		}
		if same {
			return cut, true
		}
	}
	return Cut{}, false
}
