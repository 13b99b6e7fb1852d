// Package proftest builds pprof profiles in memory for tests: rules are judged on evidence
// whose profiles are in hand (evidence.AddProfile), with no file written or read.
package proftest

import (
	"strings"
	"time"

	"github.com/google/pprof/profile"
)

// Heap is a heap profile taken at at with the given alloc_space and inuse_space per stack
// (rows: frames leaf first, separated by ";", to {alloc_space, inuse_space}); the object
// counts are the bytes over 1024.
func Heap(at time.Time, rows map[string][2]int64) *profile.Profile {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"},
			{Type: "inuse_objects", Unit: "count"}, {Type: "inuse_space", Unit: "bytes"}},
		PeriodType: &profile.ValueType{Type: "space", Unit: "bytes"}, Period: 512 << 10,
		TimeNanos: at.UnixNano(),
	}
	fns := map[string]*profile.Function{}
	for stack, v := range rows {
		var locs []*profile.Location
		for _, name := range strings.Split(stack, ";") {
			f, ok := fns[name]
			if !ok {
				f = &profile.Function{ID: uint64(len(fns) + 1), Name: name, SystemName: name, Filename: "/src/svc/" + name + ".go"}
				fns[name] = f
				p.Function = append(p.Function, f)
			}
			l := &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: f, Line: 10}}}
			p.Location = append(p.Location, l)
			locs = append(locs, l)
		}
		p.Sample = append(p.Sample, &profile.Sample{Location: locs, Value: []int64{v[0] / 1024, v[0], v[1] / 1024, v[1]}})
	}
	return p
}

// Held is rows whose alloc_space is their inuse_space: all that was allocated is held.
func Held(inuse map[string]int64) map[string][2]int64 {
	rows := make(map[string][2]int64, len(inuse))
	for fn, v := range inuse {
		rows[fn] = [2]int64{v, v}
	}
	return rows
}
