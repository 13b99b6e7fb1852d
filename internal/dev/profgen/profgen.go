// Package profgen synthesizes series of heap profiles from a real one, for benchmarks: a
// service's heap profile taken every few seconds, in which one site leaks steadily, the
// others' in-use figures wobble and every allocation counter grows.
package profgen

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/google/pprof/profile"
)

// Series describes a series to make.
type Series struct {
	Start time.Time
	Step  time.Duration
	N     int
	// LeakPerStep is what the leaking site adds to the heap at each step, in bytes.
	LeakPerStep int64
}

// Heap writes s.N heap profiles made from template (a heap profile with the four sample
// types), calling write with each in time order. The leak is the template's largest in-use
// sample; the other in-use figures move by up to 5% around the template's, deterministically.
func Heap(template *profile.Profile, s Series, write func(i int, p *profile.Profile) error) error {
	idx := map[string]int{}
	for i, st := range template.SampleType {
		idx[st.Type] = i
	}
	for _, typ := range []string{"alloc_objects", "alloc_space", "inuse_objects", "inuse_space"} {
		if _, ok := idx[typ]; !ok {
			return fmt.Errorf("template: no %s sample type", typ)
		}
	}
	leak := 0
	for i, smp := range template.Sample {
		if smp.Value[idx["inuse_space"]] > template.Sample[leak].Value[idx["inuse_space"]] {
			leak = i
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range s.N {
		p := template.Copy()
		p.TimeNanos = s.Start.Add(time.Duration(i) * s.Step).UnixNano()
		// The allocation counters count since the program started: each step adds a 0.01%
		// of the template's totals (a long-running service's lifetime counts dwarf a step's).
		grow := 1 + float64(i)/1e4
		for k, smp := range p.Sample {
			v := smp.Value
			v[idx["alloc_objects"]] = int64(float64(v[idx["alloc_objects"]]) * grow)
			v[idx["alloc_space"]] = int64(float64(v[idx["alloc_space"]]) * grow)
			if k == leak {
				size := v[idx["inuse_space"]] / max(v[idx["inuse_objects"]], 1)
				v[idx["inuse_space"]] += int64(i) * s.LeakPerStep
				v[idx["inuse_objects"]] = v[idx["inuse_space"]] / max(size, 1)
				continue
			}
			f := 0.95 + 0.1*rng.Float64()
			v[idx["inuse_space"]] = int64(float64(v[idx["inuse_space"]]) * f)
			v[idx["inuse_objects"]] = int64(float64(v[idx["inuse_objects"]]) * f)
		}
		if err := write(i, p); err != nil {
			return err
		}
	}
	return nil
}
