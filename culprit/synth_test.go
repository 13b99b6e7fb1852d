package culprit

import (
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
)

// synth builds profiles in code. Frames are written "function:line"; a
// location with inlined calls is written innermost first, joined by " < ".
type synth struct {
	p    *profile.Profile
	fns  map[string]*profile.Function
	locs map[string]*profile.Location
	base uint64 // address and ID offset, to imitate another process
}

func newSynth(base uint64, types ...string) *synth {
	p := &profile.Profile{PeriodType: &profile.ValueType{Type: "space", Unit: "bytes"}, Period: 524288}
	for _, t := range types {
		typ, unit, _ := strings.Cut(t, "/")
		p.SampleType = append(p.SampleType, &profile.ValueType{Type: typ, Unit: unit})
	}
	p.Mapping = []*profile.Mapping{{ID: 1, Start: 0x400000 + base, Limit: 0x900000 + base, File: "/bin/svc"}}
	return &synth{p: p, fns: map[string]*profile.Function{}, locs: map[string]*profile.Location{}, base: base}
}

func (s *synth) function(name string) *profile.Function {
	f := s.fns[name]
	if f == nil {
		f = &profile.Function{ID: uint64(len(s.fns)+1) + s.base, Name: name, SystemName: name, Filename: fileFor(name)}
		s.fns[name] = f
		s.p.Function = append(s.p.Function, f)
	}
	return f
}

// fileFor makes up a plausible source file for a function.
func fileFor(name string) string {
	pkg := PackagePath(name)
	if IsStdlib(name) {
		return "/usr/local/go/src/" + pkg + "/x.go"
	}
	return "/src/" + pkg + "/x.go"
}

func (s *synth) location(spec string) *profile.Location {
	if l := s.locs[spec]; l != nil {
		return l
	}
	id := uint64(len(s.locs)+1) + s.base
	l := &profile.Location{ID: id, Mapping: s.p.Mapping[0], Address: 0x400000 + s.base + 16*id}
	if !strings.HasPrefix(spec, "?") { // "?..." is an unsymbolized location
		for _, fr := range strings.Split(spec, " < ") {
			name, line, _ := strings.Cut(fr, ":")
			n, _ := strconv.ParseInt(line, 10, 64)
			l.Line = append(l.Line, profile.Line{Function: s.function(name), Line: n})
		}
	}
	s.locs[spec] = l
	s.p.Location = append(s.p.Location, l)
	return l
}

// sample adds a sample with the given values and stack (leaf first).
func (s *synth) sample(values []int64, stack ...string) *synth {
	smp := &profile.Sample{Value: values}
	for _, spec := range stack {
		smp.Location = append(smp.Location, s.location(spec))
	}
	s.p.Sample = append(s.p.Sample, smp)
	return s
}

func (s *synth) stack(specs ...string) []*profile.Location {
	var out []*profile.Location
	for _, spec := range specs {
		out = append(out, s.location(spec))
	}
	return out
}
