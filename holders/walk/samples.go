package walk

import (
	"fmt"
	"math"

	"github.com/memdoctor/memdoctor/process"
)

// sample is one object the heap profile sampled: the runtime marks it with a profile special
// that points at the bucket of its allocation stack, the same record the heap profile counts.
type sample struct {
	addr   uint64
	id     uint32
	size   uint64 // the object's slot size
	bucket uint64
}

// bucketInfo is a heap-profile bucket: its allocation stack, innermost first.
type bucketInfo struct {
	size  uint64   // the allocation's size as the profile records it
	stack []string // function names, innermost first, inlined calls their own frames
}

// readSamples lists the sampled objects of every span.
func readSamples(h *heap) ([]sample, error) {
	r := h.r
	bField, err := r.specialProfile.Field("b")
	if err != nil {
		return nil, err
	}
	var out []sample
	for i := range h.spans {
		sp := &h.spans[i]
		n := 0
		for s := sp.specials; s != 0; n++ {
			if uint64(n) > maxSpecials(sp) {
				return nil, fmt.Errorf("the span at %#x has more than %d specials: its list is corrupt", sp.base, n)
			}
			// Read as a profile special: its special header comes first, so the kind and the
			// list link read the same whatever the special's kind.
			v, err := r.specialProfile.Read(h.cache, s)
			if err != nil {
				return nil, fmt.Errorf("a special of the span at %#x: %w", sp.base, err)
			}
			if v.U(r.specialKind) == r.kindProfile {
				off := v.U(r.specialOffset)
				b := v.U(bField)
				if off < sp.size {
					addr := sp.base + off/sp.elemSize*sp.elemSize
					if _, id, ok := h.find(addr); ok {
						out = append(out, sample{addr: addr, id: id, size: sp.elemSize, bucket: b})
					}
				}
			}
			s = v.U(r.specialNext)
		}
	}
	return out, nil
}

// readBuckets reads and names the allocation stacks of the samples' buckets.
func readBuckets(r *rt, tab *process.Pclntab, samples []sample) (map[uint64]*bucketInfo, error) {
	out := map[uint64]*bucketInfo{}
	for _, s := range samples {
		if _, ok := out[s.bucket]; ok {
			continue
		}
		b, err := r.buckets.ReadBucket(r.cache, s.bucket)
		if err != nil {
			return nil, fmt.Errorf("a heap-profile bucket: %w", err)
		}
		bi := &bucketInfo{size: b.Size}
		for _, pc := range b.Stack {
			if pc == 0 {
				continue
			}
			if name := tab.FuncName(pc - 1); name != "" {
				bi.stack = append(bi.stack, name)
			}
		}
		out[s.bucket] = bi
	}
	return out, nil
}

// weight is how many bytes one sampled object of this size stands for, as the heap profile
// scales its samples: size / (1 - e^(-size/rate)).
func weight(size, rate uint64) float64 {
	if rate == 0 {
		return float64(size)
	}
	if rate == 1 {
		return float64(size)
	}
	return float64(size) / (1 - math.Exp(-float64(size)/float64(rate)))
}
