package walk

import (
	"fmt"
	"slices"
	"sort"
)

// graph is the heap as the GC sees it from its roots, kept compactly: each reached object has
// a position (in breadth-first order, by levels), the position or root that first reached it
// (so each object's path back to a root is a shortest one), and its out-edges.
type graph struct {
	h         *heap
	roots     []root
	pos       []uint32 // per slot id: position+1, 0 = not reached
	order     []uint32 // position -> slot id
	parent    []uint32 // position -> parent position, or rootBit|root index
	parentOff []uint32 // position -> offset in the parent of the word that points here
	span      []int32  // position -> its span's index
	edgeStart []uint32 // position -> its first edge; one more entry ends the last
	edges     []uint32 // child positions (slot ids while the walk runs)
	bytes     uint64   // all reached objects' bytes
	notes     []string
}

const rootBit = 1 << 31

// maxEdges bounds the edge list: 2^31 pointers is past any heap memdoctor will read.
const maxEdges = 1<<31 - 1

// bfs reaches every object from the roots, level by level; each level is scanned in address
// order so that the objects of one span are read together.
func bfs(h *heap, roots []root, cancelled func() bool) (*graph, error) {
	g := &graph{h: h, roots: roots, pos: make([]uint32, h.slots)}
	type found struct {
		id, parent, off uint32
		span            int32
	}
	var next []found
	seed := func(conservative bool) {
		for i, r := range roots {
			if r.conservative == conservative && g.pos[r.target] == 0 {
				g.pos[r.target] = ^uint32(0) // found, position not yet given
				si, _, _ := h.find(r.val)
				next = append(next, found{r.target, rootBit | uint32(i), 0, si})
			}
		}
	}
	// Precise roots first; then what only conservative ones reach.
	seed(false)
	var cur []uint32
	for tier := 0; tier < 2; tier++ {
		if tier == 1 {
			seed(true)
		}
		for len(next) > 0 {
			if cancelled() {
				return nil, errCancelled
			}
			slices.SortFunc(next, func(a, b found) int { return int(a.id) - int(b.id) })
			cur = cur[:0]
			for _, f := range next {
				g.pos[f.id] = uint32(len(g.order)) + 1
				g.order = append(g.order, f.id)
				g.parent = append(g.parent, f.parent)
				g.parentOff = append(g.parentOff, f.off)
				g.span = append(g.span, f.span)
				cur = append(cur, f.id)
			}
			next = next[:0]
			for _, id := range cur {
				p := g.pos[id] - 1
				g.edgeStart = append(g.edgeStart, uint32(len(g.edges)))
				base, sp := g.obj(p)
				g.bytes += sp.elemSize
				var rerr error
				err := h.pointers(sp, base, func(slot uint64) bool {
					val, err := h.cache.word(slot)
					if err != nil {
						rerr = err
						return false
					}
					si, cid, ok := h.find(val)
					if !ok || cid == id {
						return true
					}
					if len(g.edges) >= maxEdges {
						rerr = fmt.Errorf("more than %d pointers in the heap", maxEdges)
						return false
					}
					g.edges = append(g.edges, cid)
					if g.pos[cid] == 0 {
						g.pos[cid] = ^uint32(0)
						next = append(next, found{cid, p, uint32(slot - base), si})
					}
					return true
				})
				if err == nil {
					err = rerr
				}
				if err != nil {
					// An object that cannot be read is reached but not followed: say so once.
					if len(g.notes) < 5 {
						g.notes = append(g.notes, fmt.Sprintf("an object at %#x could not be scanned: %v", base, err))
					}
				}
			}
		}
	}
	g.edgeStart = append(g.edgeStart, uint32(len(g.edges)))
	for i, id := range g.edges {
		g.edges[i] = g.pos[id] - 1
	}
	return g, nil
}

// reached says how many objects the walk reached.
func (g *graph) reached() int { return len(g.order) }

// obj returns the address and span of the object at a position.
func (g *graph) obj(p uint32) (uint64, *span) {
	sp := &g.h.spans[g.span[p]]
	return sp.base + uint64(g.order[p]-sp.firstID)*sp.elemSize, sp
}

// children returns the positions an object points to.
func (g *graph) children(p uint32) []uint32 { return g.edges[g.edgeStart[p]:g.edgeStart[p+1]] }

// size is the bytes of the object at a position.
func (g *graph) size(p uint32) uint64 {
	return g.h.spans[g.span[p]].elemSize
}

// freedWithout returns the bytes and objects that would become unreachable if the given roots
// let go: everything reached minus what the other roots still reach.
func (g *graph) freedWithout(drop map[int]bool) (bytes uint64, objects int) {
	seen := make([]uint64, (len(g.order)+63)/64)
	var stack []uint32
	mark := func(p uint32) {
		if seen[p/64]&(1<<(p%64)) == 0 {
			seen[p/64] |= 1 << (p % 64)
			stack = append(stack, p)
		}
	}
	for i, r := range g.roots {
		if !drop[i] {
			mark(g.pos[r.target] - 1)
		}
	}
	var keptBytes uint64
	kept := 0
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		kept++
		keptBytes += g.size(p)
		for _, c := range g.children(p) {
			mark(c)
		}
	}
	return g.bytes - keptBytes, len(g.order) - kept
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
