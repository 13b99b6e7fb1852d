package walk

import (
	"fmt"
	"math/bits"
	"slices"
	"sort"
)

// graph is the heap as the GC sees it from its roots, kept compactly: each reached object has
// a position (in breadth-first order, by levels, each level in address order), the position
// or root that first reached it (so each object's path back to a root is a shortest one),
// the offset of the word that did, and its out-edges. Its arrays live outside the Go heap
// (words); call free when done.
type graph struct {
	h         *heap
	roots     []root
	n         uint32   // objects reached
	pos       []uint32 // per slot id: position+1, 0 = not reached
	order     []uint32 // position -> slot id
	parent    []uint32 // position -> parent position, or rootBit|root index
	parentOff []uint32 // position -> offset in the parent of the word that points here
	edgeStart []uint32 // position -> its first edge; one more entry ends the last
	edges     [][]uint32
	nedges    int
	bytes     uint64 // all reached objects' bytes
	notes     []string
	frees     []func()
	lastSpan  int // the span of the last obj: positions of a level are in address order
}

const (
	rootBit = 1 << 31
	// maxEdges bounds the edge list: 2^31 pointers is past any heap memdoctor will read.
	maxEdges   = 1<<31 - 1
	edgeChunk  = 1 << 20
	edgeChunkM = edgeChunk - 1
)

// free returns the graph's arrays.
func (g *graph) free() {
	for _, f := range g.frees {
		f()
	}
	g.frees = nil
}

func (g *graph) alloc(n int) ([]uint32, error) {
	w, free, err := words(n)
	if err != nil {
		return nil, err
	}
	g.frees = append(g.frees, free)
	return w, nil
}

// bfs reaches every object from the roots, level by level; each level is scanned in address
// order so that the objects of one span are read together.
func bfs(h *heap, roots []root, cancelled func() bool) (_ *graph, err error) {
	g := &graph{h: h, roots: roots}
	defer func() {
		if err != nil {
			g.free()
		}
	}()
	n := int(h.slots)
	for _, a := range []*[]uint32{&g.pos, &g.order, &g.parent, &g.parentOff} {
		if *a, err = g.alloc(n); err != nil {
			return nil, err
		}
	}
	if g.edgeStart, err = g.alloc(n + 1); err != nil {
		return nil, err
	}
	var lv levelSort
	var words []ptrWord
	seed := func(conservative bool) {
		for i, r := range roots {
			if r.conservative == conservative && g.pos[r.target] == 0 {
				g.add(r.target, rootBit|uint32(i), 0)
			}
		}
	}
	// Precise roots first; then what only conservative ones reach.
	seed(false)
	lo := uint32(0)
	for tier := 0; tier < 2; tier++ {
		if tier == 1 {
			seed(true)
		}
		for lo < g.n {
			if cancelled() {
				return nil, errCancelled
			}
			hi := g.n
			lv.sort(g, lo, hi)
			for p := lo; p < hi; p++ {
				id := g.order[p]
				g.edgeStart[p] = uint32(g.nedges)
				base, sp := g.obj(p)
				g.bytes += sp.elemSize
				words, err = h.ptrWords(sp, base, words[:0])
				if err != nil && len(g.notes) < 5 {
					// An object that cannot be read is reached but not followed: say so.
					g.notes = append(g.notes, fmt.Sprintf("an object at %#x could not be scanned: %v", base, err))
				}
				for _, w := range words {
					_, cid, ok := h.find(w.val)
					if !ok || cid == id {
						continue
					}
					if err := g.addEdge(cid); err != nil {
						return nil, err
					}
					if g.pos[cid] == 0 {
						g.add(cid, p, w.off)
					}
				}
			}
			lo = hi
		}
	}
	g.edgeStart[g.n] = uint32(g.nedges)
	for i := 0; i < g.nedges; i++ {
		c := g.edges[i>>20]
		c[i&edgeChunkM] = g.pos[c[i&edgeChunkM]] - 1
	}
	return g, nil
}

// add gives a newly reached object the next position.
func (g *graph) add(id, parent, off uint32) {
	q := g.n
	g.n++
	g.order[q], g.parent[q], g.parentOff[q] = id, parent, off
	g.pos[id] = q + 1
}

func (g *graph) addEdge(id uint32) error {
	if g.nedges >= maxEdges {
		return fmt.Errorf("more than %d pointers in the heap", maxEdges)
	}
	if g.nedges>>20 == len(g.edges) {
		c, err := g.alloc(edgeChunk)
		if err != nil {
			return err
		}
		g.edges = append(g.edges, c)
	}
	g.edges[g.nedges>>20][g.nedges&edgeChunkM] = id
	g.nedges++
	return nil
}

// levelSort puts a level's objects in address order (slot id order), with a two-pass radix
// sort of their positions: a level of millions of objects sorts in linear time. Its buffers
// are reused from level to level.
type levelSort struct {
	perm, tmp []uint32
}

func (l *levelSort) sort(g *graph, lo, hi uint32) {
	n := int(hi - lo)
	if n < 2 {
		return
	}
	l.perm = slices.Grow(l.perm[:0], n)[:n]
	l.tmp = slices.Grow(l.tmp[:0], n)[:n]
	for i := range l.perm {
		l.perm[i] = lo + uint32(i)
	}
	a, t := l.perm, l.tmp
	for shift := 0; shift < 32; shift += 16 {
		var count [1 << 16]int
		for _, p := range a {
			count[(g.order[p]>>shift)&0xffff]++
		}
		sum := 0
		for i, c := range count {
			count[i] = sum
			sum += c
		}
		for _, p := range a {
			k := (g.order[p] >> shift) & 0xffff
			t[count[k]] = p
			count[k]++
		}
		a, t = t, a
	}
	// Apply the permutation to each array of the level, through the radix sort's other buffer.
	buf := t
	for _, arr := range [][]uint32{g.order, g.parent, g.parentOff} {
		for i, p := range a {
			buf[i] = arr[p]
		}
		copy(arr[lo:hi], buf)
	}
	for q := lo; q < hi; q++ {
		g.pos[g.order[q]] = q + 1
	}
}

// reached says how many objects the walk reached.
func (g *graph) reached() int { return int(g.n) }

// obj returns the address and span of the object at a position.
func (g *graph) obj(p uint32) (uint64, *span) {
	id := g.order[p]
	h := g.h
	if i := g.lastSpan; i < len(h.spans) && id >= h.spans[i].firstID && id < h.spans[i].firstID+uint32(h.spans[i].nelems) {
		sp := &h.spans[i]
		return sp.base + uint64(id-sp.firstID)*sp.elemSize, sp
	}
	i := sort.Search(len(h.spans), func(i int) bool { return h.spans[i].firstID+uint32(h.spans[i].nelems) > id })
	g.lastSpan = i
	sp := &h.spans[i]
	return sp.base + uint64(id-sp.firstID)*sp.elemSize, sp
}

// children calls fn with the positions an object points to.
func (g *graph) children(p uint32, fn func(uint32)) {
	for e := g.edgeStart[p]; e < g.edgeStart[p+1]; e++ {
		fn(g.edges[e>>20][e&edgeChunkM])
	}
}

// size is the bytes of the object at a position.
func (g *graph) size(p uint32) uint64 {
	_, sp := g.obj(p)
	return sp.elemSize
}

// freedWithout returns the bytes and objects that would become unreachable if the given roots
// let go and the object at position block (none: no object) were cut out: everything reached
// minus what the rest still reaches.
func (g *graph) freedWithout(drop map[int]bool, block uint32) (bytes uint64, objects int) {
	seen := newBitset(int(g.n))
	var stack []uint32
	mark := func(p uint32) {
		if p != block && !seen.has(p) {
			seen.set(p)
			stack = append(stack, p)
		}
	}
	for i, r := range g.roots {
		if !drop[i] {
			mark(g.pos[r.target] - 1)
		}
	}
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		g.children(p, mark)
	}
	// What is freed is usually a small part of the heap: sum its sizes, in position order
	// (each level of the walk is in address order, so objects of a span come together).
	for w, kept := range seen {
		for free := ^kept; free != 0; free &= free - 1 {
			p := uint32(w*64 + bits.TrailingZeros64(free))
			if p >= g.n {
				break
			}
			bytes += g.size(p)
			objects++
		}
	}
	return bytes, objects
}

// sortedRootIndexes groups root indexes by a key, largest group first.
func sortedKeys[K comparable](m map[K]uint64) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.SliceStable(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] })
	return keys
}
