// Package proftest builds pprof profiles in memory for tests: rules are judged on evidence
// whose profiles are in hand (evidence.AddProfile), with no file written or read.
package proftest

import (
	"strconv"
	"strings"
	"time"

	"github.com/google/pprof/profile"

	"github.com/memdoctor/memdoctor/culprit"
)

// Heap is a heap profile taken at at with the given alloc_space and inuse_space per stack
// (rows: frames leaf first, separated by ";", to {alloc_space, inuse_space}); the object
// counts are the bytes over 1024. A frame is at line 10 of its function's file, or at the
// line its name ends with after a colon ("main.lookup:85").
func Heap(at time.Time, rows map[string][2]int64) *profile.Profile {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"},
			{Type: "inuse_objects", Unit: "count"}, {Type: "inuse_space", Unit: "bytes"}},
		PeriodType: &profile.ValueType{Type: "space", Unit: "bytes"}, Period: 512 << 10,
		TimeNanos: at.UnixNano(),
	}
	b := builder{p: p, fns: map[string]*profile.Function{}}
	for stack, v := range rows {
		p.Sample = append(p.Sample, &profile.Sample{Location: b.stack(stack), Value: []int64{v[0] / 1024, v[0], v[1] / 1024, v[1]}})
	}
	return p
}

// Goroutine is a goroutine profile taken at at, with count goroutines per stack (frames leaf
// first, separated by ";", as for Heap). A stack that creators maps to a function carries it
// as the function that started its goroutines, as memdoctor's read of a process's memory
// records it (culprit.CreatedByLabel); the runtime's profiles record none.
func Goroutine(at time.Time, stacks map[string]int64, creators map[string]string) *profile.Profile {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "goroutine", Unit: "count"}},
		PeriodType: &profile.ValueType{Type: "goroutine", Unit: "count"}, Period: 1,
		TimeNanos: at.UnixNano(),
	}
	b := builder{p: p, fns: map[string]*profile.Function{}}
	for stack, n := range stacks {
		s := &profile.Sample{Location: b.stack(stack), Value: []int64{n}}
		if c := creators[stack]; c != "" {
			s.Label = map[string][]string{culprit.CreatedByLabel: {c}}
		}
		p.Sample = append(p.Sample, s)
	}
	return p
}

// builder makes a profile's functions and locations.
type builder struct {
	p   *profile.Profile
	fns map[string]*profile.Function
}

// stack is the locations of frames leaf first, separated by ";", each "function" or
// "function:line".
func (b *builder) stack(frames string) []*profile.Location {
	var locs []*profile.Location
	for _, fr := range strings.Split(frames, ";") {
		name, line := fr, int64(10)
		if i := strings.LastIndexByte(fr, ':'); i > 0 {
			if n, err := strconv.ParseInt(fr[i+1:], 10, 64); err == nil {
				name, line = fr[:i], n
			}
		}
		f, ok := b.fns[name]
		if !ok {
			f = &profile.Function{ID: uint64(len(b.fns) + 1), Name: name, SystemName: name, Filename: "/src/svc/" + name + ".go"}
			b.fns[name] = f
			b.p.Function = append(b.p.Function, f)
		}
		l := &profile.Location{ID: uint64(len(b.p.Location) + 1), Line: []profile.Line{{Function: f, Line: line}}}
		b.p.Location = append(b.p.Location, l)
		locs = append(locs, l)
	}
	return locs
}

// Held is rows whose alloc_space is their inuse_space: all that was allocated is held.
func Held(inuse map[string]int64) map[string][2]int64 {
	rows := make(map[string][2]int64, len(inuse))
	for fn, v := range inuse {
		rows[fn] = [2]int64{v, v}
	}
	return rows
}
