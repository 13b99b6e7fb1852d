package walk

// flow is a flow graph whose dominators are wanted: vertex 0 is the entry, every vertex is
// numbered below vertices().
type flow interface {
	vertices() int
	succ(v uint32, fn func(w uint32))
	pred(v uint32, fn func(u uint32))
}

const none = ^uint32(0)

// domTree is the dominator tree of a flow graph: a vertex d dominates w when every path from
// the entry to w runs through d; the immediate dominator of w is its nearest dominator but
// itself. Its arrays live outside the Go heap; call free when done.
type domTree struct {
	idom  []uint32 // vertex -> its immediate dominator; none for the entry and the unreached
	order []uint32 // the reached vertices in depth-first preorder from the entry: each after its dominators
	n     int      // how many were reached
	frees []func()
}

func (d *domTree) free() {
	for _, f := range d.frees {
		f()
	}
	d.frees = nil
}

func (d *domTree) alloc(n int) ([]uint32, error) {
	w, free, err := words(n)
	if err != nil {
		return nil, err
	}
	d.frees = append(d.frees, free)
	return w, nil
}

// dominators computes the dominator tree with Lengauer and Tarjan's algorithm ("A fast
// algorithm for finding dominators in a flowgraph", 1979), with path compression, and single
// buckets as Georgiadis, Tarjan and Werneck do ("Finding dominators in practice", 2006): a
// vertex waits in the bucket of its semidominator, kept as a circular list through one array.
// As golang.org/x/debug's viewcore does for a whole heap; here the graph is only the part of
// the heap that leads to the sampled objects. Memory: seven words per vertex, and the
// depth-first search's stack.
func dominators(fg flow) (_ *domTree, err error) {
	nv := fg.vertices()
	d := &domTree{}
	defer func() {
		if err != nil {
			d.free()
		}
	}()
	var parent, semi, vertex, ancestor, label, bucket []uint32
	for _, a := range []*[]uint32{&d.idom, &parent, &semi, &vertex, &ancestor, &label, &bucket} {
		if *a, err = d.alloc(nv); err != nil {
			return nil, err
		}
	}
	for v := range nv {
		semi[v], ancestor[v], d.idom[v] = none, none, none
		label[v], bucket[v] = uint32(v), uint32(v)
	}
	// 1. Number the vertices in depth-first preorder; semi holds the number until step 2.
	type item struct{ v, parent uint32 }
	stack := []item{{0, none}}
	n := uint32(0)
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if semi[it.v] != none {
			continue
		}
		semi[it.v], parent[it.v], vertex[n] = n, it.parent, it.v
		n++
		fg.succ(it.v, func(w uint32) {
			if semi[w] == none {
				stack = append(stack, item{w, it.v})
			}
		})
	}
	d.n = int(n)
	var path []uint32
	eval := func(v uint32) uint32 {
		if ancestor[v] == none {
			return v
		}
		// Compress the path from v to its forest tree's root, keeping in label the vertex of
		// least semidominator above each.
		path = path[:0]
		for u := v; ancestor[ancestor[u]] != none; u = ancestor[u] {
			path = append(path, u)
		}
		for i := len(path) - 1; i >= 0; i-- {
			u := path[i]
			a := ancestor[u]
			if semi[label[a]] < semi[label[u]] {
				label[u] = label[a]
			}
			ancestor[u] = ancestor[a]
		}
		return label[v]
	}
	for i := n - 1; i > 0; i-- {
		w := vertex[i]
		// 3. (for the vertices whose semidominator is w) their immediate dominator, implicitly.
		for v := bucket[w]; v != w; {
			next := bucket[v]
			if u := eval(v); semi[u] < semi[v] {
				d.idom[v] = u
			} else {
				d.idom[v] = w
			}
			v = next
		}
		// 2. w's semidominator.
		fg.pred(w, func(u uint32) {
			if semi[u] == none {
				return // unreached
			}
			if x := eval(u); semi[x] < semi[w] {
				semi[w] = semi[x]
			}
		})
		ancestor[w] = parent[w]
		if s := vertex[semi[w]]; parent[w] == s {
			d.idom[w] = s
		} else {
			bucket[w] = bucket[s]
			bucket[s] = w
		}
	}
	for v := bucket[0]; v != 0; v = bucket[v] {
		d.idom[v] = 0
	}
	// 4. The immediate dominators, explicitly, in preorder.
	for i := uint32(1); i < n; i++ {
		w := vertex[i]
		if d.idom[w] != vertex[semi[w]] {
			d.idom[w] = d.idom[d.idom[w]]
		}
	}
	d.order = vertex[:n]
	return d, nil
}

// children lists each vertex's children in the dominator tree: kids[start[v]:start[v+1]].
func (d *domTree) children() (start, kids []uint32, err error) {
	nv := len(d.idom)
	if start, err = d.alloc(nv + 1); err != nil {
		return nil, nil, err
	}
	if kids, err = d.alloc(max(d.n-1, 0)); err != nil {
		return nil, nil, err
	}
	for _, v := range d.order[1:] {
		start[d.idom[v]+1]++
	}
	for v := 1; v <= nv; v++ {
		start[v] += start[v-1]
	}
	fill, err := d.alloc(nv)
	if err != nil {
		return nil, nil, err
	}
	for _, v := range d.order[1:] {
		p := d.idom[v]
		kids[start[p]+fill[p]] = v
		fill[p]++
	}
	return start, kids, nil
}
