package lab

import (
	"context"
	"net/http"
	"time"
)

func visitorContext() Scenario {
	return Scenario{
		Name: "visitor-context",
		Story: "A query service answers each request by walking a parsed document of about 5,000 " +
			"nodes with a visitor. For every node the visitor allocates a context object (parent, " +
			"node, depth) and a fresh copy of the path from the root, and hands it to the callback " +
			"through an interface, so each one escapes to the heap: hundreds of kilobytes of " +
			"garbage per request, all from one method. The fix is a preallocated stack of " +
			"contexts and one path slice reused across nodes and requests (see visitor-stack).",
		Expect: Expect{
			Kinds: []string{kindAllocationHotspot},
			// The hotspot makes the GC run tens of times a second: GOGC is the other lever.
			Allowed:  []string{kindGCOverhead},
			Culprit:  "github.com/memdoctor/memdoctor/lab.(*ctxVisitor).visit",
			Absent:   []string{kindHeapLeak},
			Watch:    20 * time.Second,
			Interval: 2 * time.Second,
		},
		Run: runVisitorContext,
	}
}

func runVisitorContext(ctx context.Context, env Env) error {
	store := newDocumentStore()
	return serve(ctx, env, service{
		name:   "visitor-context",
		routes: map[string]http.HandlerFunc{"GET /docs/{doc}/sum/{field}": store.handleSumContext},
		loads:  []load{queryLoad(150)},
	})
}

// visitCtx is what the visitor tells its callback about the current node.
type visitCtx struct {
	parent *visitCtx
	node   *docNode
	depth  int
	index  int      // position among the parent's children
	path   []string // member names from the root
}

type nodeCallback interface {
	enter(c *visitCtx)
}

// ctxVisitor walks a document depth first.
type ctxVisitor struct {
	cb nodeCallback
}

// visit allocates a context and a copy of the path for every node.
func (v *ctxVisitor) visit(parent *visitCtx, n *docNode, index int) {
	c := &visitCtx{parent: parent, node: n, index: index}
	if parent != nil {
		c.depth = parent.depth + 1
		c.path = make([]string, len(parent.path), len(parent.path)+1)
		copy(c.path, parent.path)
		c.path = append(c.path, n.key)
	}
	v.cb.enter(c)
	for i, kid := range n.kids {
		v.visit(c, kid, i)
	}
}

// sumCallback adapts a sumQuery to the visitor's callback.
type sumCallback struct{ q *sumQuery }

func (s sumCallback) enter(c *visitCtx) { s.q.match(c.node, c.depth) }

func (s *documentStore) handleSumContext(w http.ResponseWriter, r *http.Request) {
	doc, ok := s.lookup(r)
	if !ok {
		http.NotFound(w, r)
		return
	}
	q := &sumQuery{field: r.PathValue("field")}
	v := &ctxVisitor{cb: sumCallback{q}}
	v.visit(nil, doc, 0)
	writeSum(w, q)
}
