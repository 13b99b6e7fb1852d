package webui

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/google/pprof/profile"
)

// maxUIFrames bounds the frames (a stack's lines, summed over the samples) of a profile
// handed to pprof's web UI. Its views cost memory in proportion to them: the flame graph
// sends every stack to the browser, and the largest real profile we have (a merged Loki
// heap profile, 41347 samples, 992028 frames) took serve to 740 MiB (bench/hostile). Past the
// bound, the stacks that matter least are folded into one (see trimFrames).
const maxUIFrames = 200_000

// baseLabel marks the samples of a diff's base, as pprof's -diff_base does.
const baseLabel = "pprof::base"

// trimFrames keeps p within maxFrames: it ranks stacks by their largest share of any sample
// type's total (a stack of the base and of the new profile of a diff counts as one) and
// keeps the most significant ones, in order, while they fit; the samples of the others are
// summed into one sample per side of the diff, on one frame that says how many stacks it
// stands for. Totals are unchanged; so is every kept stack's value. It returns the profile
// (p itself when it fits) and how many stacks were folded.
func trimFrames(p *profile.Profile, maxFrames int) (*profile.Profile, int, error) {
	order, all := rankStacks(p)
	if all <= maxFrames {
		return p, 0, nil
	}
	kept, frames := 0, 1 // the folded stacks' frame
	for kept < len(order) && frames+order[kept].frames <= maxFrames {
		frames += order[kept].frames
		kept++
	}
	folded := len(order) - kept
	loc := addFrame(p, fmt.Sprintf("memdoctor: %d smaller stacks folded here (serve shows at most %d frames)", folded, maxFrames))
	var out []*profile.Sample
	var rest, restBase *profile.Sample
	for _, st := range order[:kept] {
		out = append(out, st.samples...)
	}
	for _, st := range order[kept:] {
		for _, s := range st.samples {
			into := &rest
			if len(s.Label[baseLabel]) > 0 {
				into = &restBase
			}
			if *into == nil {
				*into = &profile.Sample{Location: []*profile.Location{loc}, Value: make([]int64, len(s.Value))}
				if into == &restBase {
					(*into).Label = map[string][]string{baseLabel: {"true"}}
				}
			}
			for j, v := range s.Value {
				(*into).Value[j] += v
			}
		}
	}
	for _, s := range []*profile.Sample{rest, restBase} {
		if s != nil {
			out = append(out, s)
		}
	}
	p.Sample = out
	p = p.Compact() // drops the locations and functions only folded stacks used
	return p, folded, p.CheckValid()
}

// stack is the samples of p with one call stack, their frames (each sample is drawn), and
// their largest share of any sample type's total.
type stack struct {
	samples []*profile.Sample
	frames  int
	score   float64
}

// rankStacks groups p's samples by stack, most significant first, and counts all frames.
func rankStacks(p *profile.Profile) ([]*stack, int) {
	byKey := map[string]*stack{}
	var order []*stack
	totals := make([]float64, len(p.SampleType))
	all := 0
	var key []byte
	for _, s := range p.Sample {
		key = key[:0]
		frames := 0
		for _, l := range s.Location {
			key = binary.AppendUvarint(key, l.ID)
			frames += max(1, len(l.Line))
		}
		st := byKey[string(key)]
		if st == nil {
			st = &stack{}
			byKey[string(key)] = st
			order = append(order, st)
		}
		st.samples = append(st.samples, s)
		st.frames += frames
		all += frames
		for i, v := range s.Value {
			totals[i] += abs(v)
		}
	}
	for _, st := range order {
		for i, t := range totals {
			if t == 0 {
				continue
			}
			var sum float64
			for _, s := range st.samples {
				sum += abs(s.Value[i])
			}
			st.score = max(st.score, sum/t)
		}
	}
	slices.SortStableFunc(order, func(a, b *stack) int { return cmp.Compare(b.score, a.score) })
	return order, all
}

// addFrame adds to p a location of one function named name, and returns it.
func addFrame(p *profile.Profile, name string) *profile.Location {
	var fnID, locID uint64
	for _, f := range p.Function {
		fnID = max(fnID, f.ID)
	}
	for _, l := range p.Location {
		locID = max(locID, l.ID)
	}
	fn := &profile.Function{ID: fnID + 1, Name: name}
	loc := &profile.Location{ID: locID + 1, Line: []profile.Line{{Function: fn}}}
	p.Function = append(p.Function, fn)
	p.Location = append(p.Location, loc)
	return loc
}

func abs(v int64) float64 {
	if v < 0 {
		return -float64(v)
	}
	return float64(v)
}
