package evidence

import (
	"slices"
	"sort"

	"github.com/memdoctor/memdoctor/agent/breakdown"
)

// splitKeeper keeps splits of memory over time, bounded like a series: past maxBuckets time
// slices, each slice keeps its splits with the lowest and the highest resident memory.
type splitKeeper struct {
	width  int64 // nanoseconds per slice; 0 = exact
	origin int64
	n      int
	slices []splitSlice
	spare  []splitSlice // coarsen's other buffer
}

type splitSlice struct {
	idx    int64
	lo, hi breakdown.At
	count  int
}

// size is what a split is ranked by: RSS, else (remote) what the runtime holds.
func size(a *breakdown.At) uint64 {
	if a.RSSBytes > 0 {
		return a.RSSBytes
	}
	return a.LiveHeapBytes + a.GarbageBytes + a.FragmentationBytes + a.RetainedFreeBytes + a.StacksBytes + a.RuntimeMetadataBytes
}

func (k *splitKeeper) add(a breakdown.At) {
	ns := a.Time.UnixNano()
	k.n++
	if k.n == 1 {
		k.origin = ns
	}
	idx := ns
	if k.width > 0 {
		idx = floorDiv(ns-k.origin, k.width)
	}
	k.put(splitSlice{idx: idx, lo: a, hi: a, count: 1})
	if len(k.slices) > maxBuckets {
		k.coarsen()
	}
}

func (k *splitKeeper) put(s splitSlice) {
	n := len(k.slices)
	i := n
	if n > 0 && k.slices[n-1].idx >= s.idx {
		i = sort.Search(n, func(i int) bool { return k.slices[i].idx >= s.idx })
	}
	if i < n && k.slices[i].idx == s.idx {
		c := &k.slices[i]
		c.count += s.count
		if size(&s.lo) < size(&c.lo) {
			c.lo = s.lo
		}
		if size(&s.hi) > size(&c.hi) {
			c.hi = s.hi
		}
		return
	}
	k.slices = slices.Insert(k.slices, i, s)
}

func (k *splitKeeper) coarsen() {
	first, last := k.slices[0].lo.Time.UnixNano(), k.slices[0].lo.Time.UnixNano()
	for _, s := range k.slices {
		for _, t := range []int64{s.lo.Time.UnixNano(), s.hi.Time.UnixNano()} {
			first, last = min(first, t), max(last, t)
		}
	}
	w := max(2*k.width, (last-first)/(maxBuckets/2)+1)
	old := k.slices
	if cap(k.spare) < maxBuckets+1 {
		k.spare = make([]splitSlice, 0, maxBuckets+1)
	}
	k.slices, k.spare = k.spare[:0], old
	k.width = w
	for _, s := range old {
		for _, a := range []breakdown.At{s.lo, s.hi} {
			k.put(splitSlice{idx: floorDiv(a.Time.UnixNano()-k.origin, w), lo: a, hi: a, count: 1})
		}
	}
}

// splits returns the kept splits in time order.
func (k *splitKeeper) splits() []breakdown.At {
	out := make([]breakdown.At, 0, 2*len(k.slices))
	for _, s := range k.slices {
		out = append(out, s.lo)
		if s.count > 1 && !s.hi.Time.Equal(s.lo.Time) {
			out = append(out, s.hi)
		}
	}
	slices.SortStableFunc(out, func(a, b breakdown.At) int { return a.Time.Compare(b.Time) })
	return out
}
