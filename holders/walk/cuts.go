package walk

import (
	"fmt"
	"math/bits"
	"strings"

	"github.com/memdoctor/memdoctor/holders"
)

// minCutShare is the least share of a culprit's reachable sampled bytes a cut holds: a cut
// that frees less is no fix.
const minCutShare = 0.1

// keepShare is how much of the heaviest holder's weight a deeper cut must keep.
const keepShare = 0.9

// cutBytesPerObject is what working out the cuts takes per object that leads to a sampled
// object: the subgraph's vertex, parents' start and fill (12 B, and 4 B a parent), the
// dominators' seven words (28 B), the tree's children (8 B), each vertex's weight and count
// (12 B), the depth-first search's stack and the path compression (up to 32 B).
const cutBytesPerObject = 96

// cutsBudget is the memory the cuts may take when Options.CutsBytes is not set: a fifth of
// the heap read (the walk itself takes about two fifths of a heap of pointers), at least
// minCutsBudget.
func cutsBudget(heapBytes uint64) uint64 { return max(heapBytes/5, minCutsBudget) }

const minCutsBudget = 64 << 20

// cutsFit says whether the cuts of lead objects that lead to a sample fit in budget bytes,
// and what they would take.
func cutsFit(lead int, budget uint64) (need uint64, ok bool) {
	need = uint64(lead) * cutBytesPerObject
	return need, need <= budget
}

// subgraph is the part of the heap that leads to the culprits' sampled objects, as a flow graph
// for dominators: vertex 0 stands for the GC itself and points at each root group (a package
// variable, a frame, a finalized object...: the roots a fix lets go of together), which points
// at the objects its words hold; then the objects that lead to a sampled object, by position.
type subgraph struct {
	g      *graph
	lead   bitset
	rank   []uint32   // per word of lead, the ones before it: an object's vertex in O(1)
	objs   []uint32   // vertex - firstObj -> position
	groups [][]uint32 // per root group, the roots in it (indexes)
	gto    [][]uint32 // per root group, the vertices its roots point at
	pstart []uint32   // the objects' parents: pfrom[pstart[v-firstObj]:pstart[v-firstObj+1]]
	pfrom  []uint32
	frees  []func()
}

func (s *subgraph) firstObj() uint32 { return uint32(len(s.groups)) + 1 }
func (s *subgraph) vertices() int    { return int(s.firstObj()) + len(s.objs) }

// vertexOf is the vertex of the object at position p (which leads to a sample).
func (s *subgraph) vertexOf(p uint32) uint32 {
	w := p / 64
	return s.firstObj() + s.rank[w] + uint32(bits.OnesCount64(s.lead[w]&(1<<(p%64)-1)))
}

func (s *subgraph) succ(v uint32, fn func(uint32)) {
	switch {
	case v == 0:
		for k := range s.groups {
			fn(uint32(k) + 1)
		}
	case v < s.firstObj():
		for _, w := range s.gto[v-1] {
			fn(w)
		}
	default:
		s.g.children(s.objs[v-s.firstObj()], func(c uint32) {
			if s.lead.has(c) {
				fn(s.vertexOf(c))
			}
		})
	}
}

func (s *subgraph) pred(v uint32, fn func(uint32)) {
	switch {
	case v == 0:
	case v < s.firstObj():
		fn(0)
	default:
		i := v - s.firstObj()
		for _, u := range s.pfrom[s.pstart[i]:s.pstart[i+1]] {
			fn(u)
		}
	}
}

func (s *subgraph) free() {
	for _, f := range s.frees {
		f()
	}
	s.frees = nil
}

func (s *subgraph) alloc(n int) ([]uint32, error) {
	w, free, err := words(n)
	if err != nil {
		return nil, err
	}
	s.frees = append(s.frees, free)
	return w, nil
}

// buildSubgraph lays out the flow graph of the objects that lead to a sample (lead).
func (a *aggregator) buildSubgraph() (_ *subgraph, err error) {
	g := a.g
	s := &subgraph{g: g, lead: a.lead, rank: make([]uint32, len(a.lead))}
	defer func() {
		if err != nil {
			s.free()
		}
	}()
	m := uint32(0)
	for w, bitsw := range a.lead {
		s.rank[w] = m
		m += uint32(bits.OnesCount64(bitsw))
	}
	if s.objs, err = s.alloc(int(m)); err != nil {
		return nil, err
	}
	k := 0
	for w, bitsw := range a.lead {
		for bitsw != 0 {
			b := bits.TrailingZeros64(bitsw)
			bitsw &= bitsw - 1
			s.objs[k] = uint32(w*64 + b)
			k++
		}
	}
	// Root groups: the roots that lead to a sample, grouped by what a fix lets go of at once.
	byKey := map[groupKey]int{}
	for ri, r := range g.roots {
		p := g.pos[r.target]
		if p == 0 || !a.lead.has(p-1) {
			continue
		}
		key := a.groupOf(r)
		gi, ok := byKey[key]
		if !ok {
			gi = len(s.groups)
			byKey[key] = gi
			s.groups = append(s.groups, nil)
			s.gto = append(s.gto, nil)
		}
		s.groups[gi] = append(s.groups[gi], uint32(ri))
		s.gto[gi] = append(s.gto[gi], p-1) // positions for now
	}
	for gi := range s.gto {
		for i, p := range s.gto[gi] {
			s.gto[gi][i] = s.vertexOf(p)
		}
	}
	// The objects' parents among them, and the groups that point at them.
	if s.pstart, err = s.alloc(int(m) + 1); err != nil {
		return nil, err
	}
	count := func(v uint32) { s.pstart[v-s.firstObj()+1]++ }
	for _, p := range s.objs {
		g.children(p, func(c uint32) {
			if a.lead.has(c) {
				count(s.vertexOf(c))
			}
		})
	}
	for _, to := range s.gto {
		for _, v := range to {
			count(v)
		}
	}
	for i := 1; i < len(s.pstart); i++ {
		s.pstart[i] += s.pstart[i-1]
	}
	if s.pfrom, err = s.alloc(int(s.pstart[m])); err != nil {
		return nil, err
	}
	fill, err := s.alloc(int(m))
	if err != nil {
		return nil, err
	}
	place := func(v, from uint32) {
		i := v - s.firstObj()
		s.pfrom[s.pstart[i]+fill[i]] = from
		fill[i]++
	}
	for i, p := range s.objs {
		from := s.firstObj() + uint32(i)
		g.children(p, func(c uint32) {
			if a.lead.has(c) {
				place(s.vertexOf(c), from)
			}
		})
	}
	for gi, to := range s.gto {
		for _, v := range to {
			place(v, uint32(gi)+1)
		}
	}
	return s, nil
}

// groupKey is what a root belongs to: the package variable (or static) that holds its word, the
// frame, the finalized object, the thread; other roots stand alone.
type groupKey struct {
	kind rootKind
	at   uint64
}

func (a *aggregator) groupOf(r root) groupKey {
	switch r.kind {
	case rootGlobal:
		if v, ok := a.n.ix.GlobalAt(r.addr); ok {
			return groupKey{rootGlobal, v.Addr}
		}
		ix := a.n.staticsOf()
		if st, ok := ix.staticAt(r.addr); ok {
			return groupKey{rootGlobal, st.addr}
		}
		if sym, ok := ix.symbolAt(r.addr); ok {
			return groupKey{rootGlobal, sym.Addr}
		}
		return groupKey{rootGlobal, r.addr}
	case rootStack, rootFinalizer, rootRegister:
		return groupKey{r.kind, uint64(uint32(r.ref))}
	}
	return groupKey{r.kind, r.addr}
}

// cuts works out, for each culprit, what to cut (see holders.Cut), on the dominator tree of the
// objects that lead to its sampled objects; then what each cut frees, on the whole graph.
func (a *aggregator) cuts(culprits []holders.Culprit) error {
	if a.lead == nil {
		return nil
	}
	budget := uint64(a.opts.CutsBytes)
	if budget == 0 {
		budget = cutsBudget(a.g.bytes)
	}
	lead := a.lead.count()
	if need, ok := cutsFit(lead, budget); !ok {
		// A heap whose every object leads to the samples (a long linked structure of
		// pointers) would make the dominator tree as large as the heap's graph.
		a.notes = append(a.notes, fmt.Sprintf("what to cut was not worked out: %d objects lead to the sampled objects, and their dominator tree would take about %d MiB, more than the %d MiB allowed (a fifth of the heap read): the paths still say who holds them",
			lead, need>>20, budget>>20))
		return nil
	}
	s, err := a.buildSubgraph()
	if err != nil {
		return err
	}
	defer s.free()
	d, err := dominators(s)
	if err != nil {
		return err
	}
	defer d.free()
	start, kids, err := d.children()
	if err != nil {
		return err
	}
	nv := s.vertices()
	w := make([]float64, nv)
	count := make([]int32, nv)
	frees := map[uint32][2]uint64{}
	isSample := newBitset(len(s.objs))
	for ci, cs := range a.groups {
		clear(w)
		clear(count)
		clear(isSample)
		for i, smp := range cs.samples {
			if p := a.g.pos[smp.id]; p != 0 {
				v := s.vertexOf(p - 1)
				w[v] += cs.weights[i]
				count[v]++
				isSample.set(v - s.firstObj())
			}
		}
		// Each vertex's share: its own and its dominator-tree children's (preorder puts a
		// vertex after its dominator).
		for i := len(d.order) - 1; i > 0; i-- {
			v := d.order[i]
			w[d.idom[v]] += w[v]
			count[d.idom[v]] += count[v]
		}
		internal := func(v uint32) bool { return a.internal(s, v) }
		sampled := func(v uint32) bool { return v >= s.firstObj() && isSample.has(v-s.firstObj()) }
		for _, v := range pickCuts(d, start, kids, w, count, a.opts.MaxCuts, sampled, internal) {
			cut, ok := a.nameCut(s, v.v)
			if !ok {
				break
			}
			cut.Samples, cut.Bytes, cut.Share = v.samples, v.bytes, v.share
			f, ok := frees[v.v]
			if !ok {
				b, o := a.freedByCut(s, v.v)
				f = [2]uint64{b, uint64(o)}
				frees[v.v] = f
			}
			cut.Frees, cut.FreesObjects = f[0], int(f[1])
			culprits[ci].Cuts = append(culprits[ci].Cuts, cut)
		}
	}
	return nil
}

// picked is a vertex chosen to cut, and what of the culprit it holds.
type picked struct {
	v       uint32
	samples int
	bytes   float64
	share   float64
}

// pickCuts chooses what to cut on the dominator tree, given each vertex's weight (the
// culprit's sampled bytes it holds alone, its own and its children's) and count. The first cut
// is the deepest vertex that holds nearly all (keepShare) of what the heaviest holder holds:
// from the entry into its heaviest child, then down while the heaviest child keeps that much
// (a service object holds its account, which holds the map the leak grows in: the map); out of
// a map's or a channel's internals up to the map or channel. A cut holds another sampled
// object than itself (a sampled record that holds only itself is no cut; a map the culprit
// grew is). Then the same among what is left, while a cut holds at least a tenth of the whole.
// w and count are changed.
func pickCuts(d *domTree, start, kids []uint32, w []float64, count []int32, maxCuts int, sampled, internal func(uint32) bool) []picked {
	total := w[0]
	left := total
	taken := map[uint32]bool{}
	var out []picked
	for len(out) < maxCuts && total > 0 && left >= minCutShare*total {
		v, top := uint32(0), 0.0
		for {
			best, bw := none, 0.0
			for _, k := range kids[start[v]:start[v+1]] {
				if !taken[k] && count[k] > btoi(sampled(k)) && w[k] > bw {
					best, bw = k, w[k]
				}
			}
			if best == none || (v != 0 && bw < keepShare*top) {
				break
			}
			if v == 0 {
				top = bw
			}
			v = best
		}
		for v != 0 && internal(v) {
			v = d.idom[v]
		}
		if v == 0 || taken[v] || w[v] < minCutShare*total {
			break
		}
		taken[v] = true
		out = append(out, picked{v: v, samples: int(count[v]), bytes: w[v], share: w[v] / total})
		wv, cv := w[v], count[v]
		for u := d.idom[v]; u != none; u = d.idom[u] {
			w[u] -= wv
			count[u] -= cv
		}
		left -= wv
	}
	return out
}

// internal says whether a vertex is one of a map's internals (its directory, tables, groups; a
// sync.Map's nodes) or a channel's buffer: a cut there is made on the map or the channel, the
// object a program can let go of.
func (a *aggregator) internal(s *subgraph, v uint32) bool {
	if v < s.firstObj() {
		return false
	}
	m := a.n.memo[s.objs[v-s.firstObj()]]
	if m == nil {
		return false
	}
	switch m.v.inMap {
	case mapDir, mapTable, mapGroups, trieIndirect, trieEntry:
		return true
	}
	return m.v.chanBuf
}

// nameCut names a cut vertex by the path to it (an object) or its root (a root group).
func (a *aggregator) nameCut(s *subgraph, v uint32) (holders.Cut, bool) {
	if v < s.firstObj() {
		for _, ri := range s.groups[v-1] {
			if c, ok := a.n.roots[int(ri)]; ok {
				r := c.rn.root
				r.Goroutine = 0
				cut := holders.Cut{Expr: r.Label(), Root: r, Type: r.Type}
				if r.Kind == "global" && !r.Static && namedRoot(r) {
					cut.Field = r.Name
				}
				return cut, true
			}
		}
		return holders.Cut{}, false
	}
	m := a.n.memo[s.objs[v-s.firstObj()]]
	if m == nil {
		return holders.Cut{}, false
	}
	r := m.r.root
	r.Goroutine = 0
	cut := holders.Cut{Expr: m.expr(), Root: r, Hops: m.hops(), Type: r.Type}
	if q := m.lastStep(); q != nil {
		cut.Type = q.hop.Type
		switch {
		case q.prev != nil:
			if isFieldChain(q.hop.Expr) && q.prev.v.typ != nil && !q.prev.v.array {
				cut.Field = shortTypeName(typeName(q.prev.v.typ)) + q.hop.Expr
			}
		case r.Kind == "global" && namedRoot(r) && (q.hop.Expr == "" || isFieldChain(q.hop.Expr)):
			// Held by a package variable (or a field of one, or of the static it points at).
			cut.Field = r.Name + q.hop.Expr
			if r.Static {
				cut.Field = shortTypeName(strings.TrimPrefix(r.Type, "*")) + q.hop.Expr
			}
		}
	}
	return cut, true
}

// isFieldChain says whether an expression is only field selections (".a.b").
func isFieldChain(expr string) bool {
	if !strings.HasPrefix(expr, ".") || len(expr) < 2 {
		return false
	}
	for _, r := range expr {
		if !(r == '.' || r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// shortTypeName drops a type name's import path but its last element
// (github.com/nats-io/nats-server/v2/server.Account -> server.Account).
func shortTypeName(t string) string {
	end := len(t)
	if i := strings.IndexAny(t, "[("); i >= 0 {
		end = i
	}
	if i := strings.LastIndex(t[:end], "/"); i >= 0 {
		return t[i+1:]
	}
	return t
}

// freedByCut is what cutting a vertex frees: the bytes and objects that no root reaches once
// the object (or the root group's roots) is gone.
func (a *aggregator) freedByCut(s *subgraph, v uint32) (uint64, int) {
	if v < s.firstObj() {
		drop := map[int]bool{}
		for _, ri := range s.groups[v-1] {
			drop[int(ri)] = true
		}
		return a.g.freedWithout(drop, none)
	}
	return a.g.freedWithout(nil, s.objs[v-s.firstObj()])
}

func btoi(b bool) int32 {
	if b {
		return 1
	}
	return 0
}
