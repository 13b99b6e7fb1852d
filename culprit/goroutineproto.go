package culprit

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/pprof/profile"
)

// CreatedByLabel is the sample label that carries the function whose go statement
// started a sample's goroutines, in the goroutine profiles memdoctor reads from a
// process's memory (the runtime's g.gopc); the runtime's own profiles have no such
// label.
const CreatedByLabel = "memdoctor.created_by"

// GroupGoroutineProfile groups a goroutine proto profile (debug=0; sample
// type goroutine/count, or goroutineleak/count, whose goroutines all count as
// leaked). Samples that differ only in their labels are merged. A proto
// profile records neither wait states nor creators: State is "" and CreatedBy
// is the root-most frame, the goroutine's start function, unless the sample
// carries CreatedByLabel.
func GroupGoroutineProfile(p *profile.Profile, opts Options) ([]GoroutineGroup, error) {
	if p == nil {
		return nil, errors.New("nil profile")
	}
	idx, leaked, err := goroutineSampleIndex(p)
	if err != nil {
		return nil, err
	}
	g := newGrouper(opts)
	var frames []frame
	for _, s := range p.Sample {
		if s == nil || idx >= len(s.Value) || s.Value[idx] <= 0 {
			continue
		}
		frames = appendFrames(frames[:0], s.Location)
		if len(frames) > maxFrames {
			frames = frames[:maxFrames]
		}
		n := int(s.Value[idx])
		var creator frame
		recorded := false
		if c := s.Label[CreatedByLabel]; len(c) == 1 && c[0] != "" {
			creator, recorded = frame{fn: normalizeFunc(c[0])}, true
		}
		// A go statement's wrapper (memdoctor's reads of a process's memory kept them until
		// they were left out as the runtime leaves them out) is named after the function
		// whose go statement it wraps: the creator, recorded.
		frames = slices.DeleteFunc(frames, func(f frame) bool {
			fn, ok := goWrapped(f.fn)
			if ok && !recorded {
				creator, recorded = frame{fn: fn}, true
			}
			return ok
		})
		for i := len(frames) - 1; i >= 0 && !recorded; i-- {
			if frames[i].fn != goexitFunc {
				creator = frames[i]
				break
			}
		}
		l := 0
		if leaked {
			l = n
		}
		g.add("", frames, creator, recorded, n, l, 0)
	}
	return g.result(), nil
}

// goWrapped is the function whose go statement a compiler-generated wrapper wraps
// ("net/http.(*Transport).dialConn" of "net/http.(*Transport).dialConn.gowrap2").
func goWrapped(fn string) (string, bool) {
	i := strings.LastIndex(fn, ".gowrap")
	if i <= 0 || i+len(".gowrap") == len(fn) || strings.Trim(fn[i+len(".gowrap"):], "0123456789") != "" {
		return "", false
	}
	return fn[:i], true
}

// goroutineSampleIndex finds the goroutine count: "goroutine" or
// "goroutineleak", or the only sample type when it is unnamed (profiles
// re-encoded by some collectors lose the name).
func goroutineSampleIndex(p *profile.Profile) (idx int, leaked bool, err error) {
	for i, st := range p.SampleType {
		if st == nil {
			continue
		}
		switch st.Type {
		case "goroutine":
			return i, false, nil
		case "goroutineleak":
			return i, true, nil
		}
	}
	if len(p.SampleType) == 1 && (p.SampleType[0] == nil || p.SampleType[0].Type == "") {
		return 0, false, nil
	}
	return -1, false, fmt.Errorf("not a goroutine profile: %w: %q (available: %s)", ErrNoSampleType, "goroutine", SampleTypes(p))
}

// GroupsProfile turns goroutine groups (from a text dump) into a goroutine count profile,
// one sample per group with its stack (function names, leaf first), its wait state as
// the label "state" and its recorded creator as CreatedByLabel: what go tool pprof and flame
// graphs read. typ is "goroutine" or
// "goroutineleak". Line numbers are not kept by groups: the profile has none.
func GroupsProfile(groups []GoroutineGroup, typ string) *profile.Profile {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: typ, Unit: "count"}},
		PeriodType: &profile.ValueType{Type: typ, Unit: "count"},
		Period:     1,
	}
	fns := map[string]*profile.Location{}
	loc := func(name string) *profile.Location {
		if l, ok := fns[name]; ok {
			return l
		}
		f := &profile.Function{ID: uint64(len(p.Function) + 1), Name: name, SystemName: name}
		l := &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: f}}}
		p.Function = append(p.Function, f)
		p.Location = append(p.Location, l)
		fns[name] = l
		return l
	}
	for _, g := range groups {
		s := &profile.Sample{Value: []int64{int64(g.Count)}}
		for _, fr := range g.Stack {
			s.Location = append(s.Location, loc(fr))
		}
		if g.State != "" {
			s.Label = map[string][]string{"state": {g.State}}
		}
		if g.Created {
			if s.Label == nil {
				s.Label = map[string][]string{}
			}
			s.Label[CreatedByLabel] = []string{g.CreatedBy}
		}
		p.Sample = append(p.Sample, s)
	}
	return p
}
