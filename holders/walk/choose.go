package walk

import (
	"cmp"
	pq "container/heap"
	"fmt"
	"slices"
)

// DefaultMaxNamed bounds the objects choosePaths names while it seeks the most readable paths.
const DefaultMaxNamed = 1 << 19

// namedBytes is about what naming an object takes while the most readable paths are sought
// (its step, view and cost, and the memo's entry: measured 0.7-1.1 KiB on a heap of linked
// records, where the search names every link).
const namedBytes = 1 << 10

// maxNamedFor is the default bound on the objects named for a heap of heapBytes: what an
// eighth of the heap read (at least 64 MiB) holds, at most DefaultMaxNamed. A heap whose
// samples lie deep in a linked structure makes the search name every link up to them.
func maxNamedFor(heapBytes uint64) int {
	return int(min(max(heapBytes/8, 64<<20)/namedBytes, DefaultMaxNamed))
}

// choosePaths gives each object that leads to a target (lead) the parent of its most readable
// path from the roots, and names it: a path from a root named and typed before one from a root
// without a name or a type (and before a conservatively scanned word), then a path from a
// package variable before one from a goroutine's frame, however much shorter (see lasting: the
// name must not depend on which call a goroutine was in when the process was read), then the
// path with the fewest steps through objects of unknown type, then the shortest; among equals,
// the roots' order (rootOrder), then the walk's own choice (the first parent it found). The walk's breadth-first parents give shortest paths, which
// may start at an unnamed static or a frame's temporary, or lose the types behind an
// unsafe.Pointer, where a longer path names every step.
//
// It is Dijkstra's search on the objects that lead to a target, the cost of each step known only
// once it is named: a step is first queued at the cost it has if it is typed (a lower bound) and
// named when it comes out; named dearer, it goes back in. It stops when every target is named,
// or when it has named maxNamed objects: the targets not reached by then keep the walk's
// parents, and the note it returns says so.
func (n *namer) choosePaths(lead bitset, targets []uint32, maxNamed int) (note string) {
	g := n.g
	var words []ptrWord
	var lc, sorted []uint32 // the children of the object being expanded that lead to a target
	s := search{
		objects: g.n,
		lead:    lead,
		targets: targets,
		roots: func(fn func(ri, target uint32, conservative bool)) {
			for _, ri := range n.rootOrder() {
				if p := g.pos[g.roots[ri].target]; p != 0 {
					fn(ri, p-1, g.roots[ri].conservative)
				}
			}
		},
		out: func(p uint32, fn func(child, off uint32)) {
			// The children that lead to a target, from the graph's edges (one per pointer
			// word). A child the walk reached first from p, through its only word pointing
			// there, is at the offset the walk kept: p's memory need not be read again (a
			// map's groups hold thousands of words, of which one leads to a sample).
			lc = lc[:0]
			g.children(p, func(c uint32) {
				if lead.has(c) {
					lc = append(lc, c)
				}
			})
			sorted = append(sorted[:0], lc...)
			slices.Sort(sorted)
			once := func(c uint32) bool { // c is reached by one word of p
				i, _ := slices.BinarySearch(sorted, c)
				return i+1 >= len(sorted) || sorted[i+1] != c
			}
			scan := false
			for _, c := range lc {
				if g.parent[c] == p && once(c) {
					fn(c, g.parentOff[c])
				} else {
					scan = true
				}
			}
			if !scan {
				return
			}
			base, sp := g.obj(p)
			id := g.order[p]
			words, _ = n.h.ptrWords(sp, base, words[:0])
			for _, w := range words {
				if _, cid, ok := n.h.find(w.val); ok && cid != id && g.pos[cid] != 0 {
					if c := g.pos[cid] - 1; lead.has(c) && !(g.parent[c] == p && once(c)) {
						fn(c, w.off)
					}
				}
			}
		},
		name: n.step,
		chosen: func(p, par, off uint32, m *named) {
			n.memo[p] = m
			g.parent[p], g.parentOff[p] = par, off
		},
	}
	if left, named := s.run(maxNamed); left > 0 {
		return fmt.Sprintf("the most readable paths were sought among the first %d objects leading to the sampled ones; %d sampled objects are named along the walk's shortest paths", named, left)
	}
	return ""
}

// search is what choosePaths needs of the graph and of naming (tests give it graphs built in
// memory).
type search struct {
	objects uint32
	lead    bitset   // the objects that lead to a target
	targets []uint32 // positions
	// roots calls fn with each root's index and the position it points at, the preferred
	// root first: among ways of equal cost, the root called first wins.
	roots func(fn func(ri, target uint32, conservative bool))
	// out calls fn with each object an object points to, and the offset of the word.
	out func(p uint32, fn func(child, off uint32))
	// name names p reached from par (rootBit|root index, or a position already chosen)
	// through the word at off.
	name func(p, par, off uint32) *named
	// chosen records p's most readable way.
	chosen func(p, par, off uint32, m *named)
}

// queuePerNamed bounds the search's queue: at most this many ways waiting per object it may
// name. Every object named queues a way to each of its children that leads to a target, so a
// heap of records of many pointers each, all leading to the samples, would queue many times
// the objects named (400 MiB for 10M linked records, against 100 MiB for what was named).
const queuePerNamed = 8

// run is Dijkstra's search (see choosePaths); it returns how many targets were left unnamed
// when it stopped at maxNamed objects named, or at queuePerNamed times that many ways queued,
// and how many it named.
func (s *search) run(maxNamed int) (left, named int) {
	fin := newBitset(int(s.objects))
	isTarget := newBitset(int(s.objects))
	remaining := 0
	for _, t := range s.targets {
		if !isTarget.has(t) {
			isTarget.set(t)
			remaining++
		}
	}
	var q candQueue
	s.roots(func(ri, target uint32, conservative bool) {
		if !s.lead.has(target) {
			return
		}
		c := cost{steps: 1}
		if conservative {
			c.tier = 2
		}
		q = append(q, cand{c: c, tie: uint32(len(q)), child: target, par: rootBit | ri})
	})
	pq.Init(&q)
	maxQueue := max(queuePerNamed*maxNamed, len(q))
	for q.Len() > 0 && remaining > 0 {
		if q.Len() > maxQueue {
			return remaining, named
		}
		it := pq.Pop(&q).(cand)
		if fin.has(it.child) {
			continue
		}
		if it.m == nil {
			if named >= maxNamed {
				return remaining, named
			}
			named++
			it.m = s.name(it.child, it.par, it.off)
			if it.c.less(it.m.cost) {
				it.c = it.m.cost
				pq.Push(&q, it)
				continue
			}
		}
		p := it.child
		fin.set(p)
		s.chosen(p, it.par, it.off, it.m)
		if isTarget.has(p) {
			remaining--
		}
		next := it.m.cost
		next.steps++
		s.out(p, func(c, off uint32) {
			if s.lead.has(c) && !fin.has(c) {
				pq.Push(&q, cand{c: next, tie: p, off: off, child: c, par: p})
			}
		})
	}
	return 0, named
}

// cand is a way to reach an object: from a root's word or an object's, at a cost (exact once
// named, else a lower bound).
type cand struct {
	c     cost
	tie   uint32 // the root's rank (the order roots calls it), or the parent's position
	off   uint32 // the word's offset in the parent
	child uint32
	par   uint32 // rootBit|root index, or the parent's position
	m     *named // the name through this way, once known
}

type candQueue []cand

func (q candQueue) Len() int { return len(q) }
func (q candQueue) Less(i, j int) bool {
	a, b := &q[i], &q[j]
	if a.c != b.c {
		return a.c.less(b.c)
	}
	if a.tie != b.tie {
		return a.tie < b.tie
	}
	if a.off != b.off {
		return a.off < b.off
	}
	return a.child < b.child
}
func (q candQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *candQueue) Push(x any)   { *q = append(*q, x.(cand)) }
func (q *candQueue) Pop() any {
	old := *q
	it := old[len(old)-1]
	*q = old[:len(old)-1]
	return it
}

// rootOrder lists the roots' indices in the order the search prefers them among ways of equal
// cost: the walk's order, but the goroutines' frames oldest goroutine first (the lowest id),
// each goroutine's outermost first. One object handed down a goroutine's calls (a server's
// receiver, a request) is held by a variable in each frame that has it live; the outermost
// frame holds it before, during and after each call, the inner ones only while the goroutine
// is inside them. One object shared by goroutines (a cache a long-lived loop owns, which each
// request's handler also holds while it runs) is held for longest by the oldest. The lowest id
// is usually the oldest (the runtime hands ids out in batches per P, so two goroutines started
// from different Ps may be numbered out of order), and always the same goroutine: named so, the
// path is the same whichever call each goroutine was in when the process was read, and
// whichever transient goroutines were running then.
func (n *namer) rootOrder() []uint32 {
	g := n.g
	type key struct {
		block int   // the walk's index of the root, or of the first goroutine frame's root
		gid   int64 // the goroutine's id (0 but for goroutine frames)
		depth int   // minus the frame's depth: the outermost first
		ri    int
	}
	keys := make([]key, len(g.roots))
	stacks := -1 // the index of the first goroutine frame's root
	for ri, r := range g.roots {
		keys[ri] = key{block: ri, ri: ri}
		if r.kind != rootStack || r.ref < 0 || n.st == nil || int(r.ref) >= len(n.st.frames) {
			continue
		}
		fr := n.st.frames[r.ref]
		if stacks < 0 {
			stacks = ri
		}
		var id int64
		if fr.g >= 0 && fr.g < len(n.st.gs) {
			id = n.st.gs[fr.g].id
		}
		keys[ri] = key{block: stacks, gid: id, depth: -fr.depth, ri: ri}
	}
	order := make([]uint32, len(g.roots))
	for i := range order {
		order[i] = uint32(i)
	}
	slices.SortFunc(order, func(a, b uint32) int {
		ka, kb := keys[a], keys[b]
		return cmp.Or(cmp.Compare(ka.block, kb.block), cmp.Compare(ka.gid, kb.gid), cmp.Compare(ka.depth, kb.depth), cmp.Compare(ka.ri, kb.ri))
	})
	return order
}
