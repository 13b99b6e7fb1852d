package lab

import (
	"context"
	"net/http"
	"sync"
	"time"
)

func visitorStack() Scenario {
	return Scenario{
		Name: "visitor-stack",
		Story: "The fix for visitor-context: the same query service walks the same documents with " +
			"an explicit, preallocated stack of frames and a single path slice, both reused across " +
			"nodes and, through a sync.Pool, across requests. The walk allocates nothing per node; " +
			"what is left is the few kilobytes net/http needs per request.",
		Expect: Expect{
			Absent:   []string{kindAllocationHotspot, kindHeapLeak},
			Watch:    20 * time.Second,
			Interval: 2 * time.Second,
		},
		Run: runVisitorStack,
	}
}

func runVisitorStack(ctx context.Context, env Env) error {
	store := newDocumentStore()
	return serve(ctx, env, service{
		name:   "visitor-stack",
		routes: map[string]http.HandlerFunc{"GET /docs/{doc}/sum/{field}": store.handleSumStack},
		loads:  []load{queryLoad(150)},
	})
}

type stackFrame struct {
	node  *docNode
	depth int
}

// stackVisitor walks a document depth first without allocating: its stack
// and path keep their capacity from one walk to the next.
type stackVisitor struct {
	stack []stackFrame
	path  []string
}

var stackVisitors = sync.Pool{New: func() any {
	return &stackVisitor{stack: make([]stackFrame, 0, 256), path: make([]string, 0, 32)}
}}

func (v *stackVisitor) visit(root *docNode, q *sumQuery) {
	v.stack = append(v.stack[:0], stackFrame{node: root})
	for len(v.stack) > 0 {
		f := v.stack[len(v.stack)-1]
		v.stack = v.stack[:len(v.stack)-1]
		v.path = append(v.path[:f.depth], f.node.key)
		q.match(f.node, f.depth)
		for i := len(f.node.kids) - 1; i >= 0; i-- {
			v.stack = append(v.stack, stackFrame{node: f.node.kids[i], depth: f.depth + 1})
		}
	}
	clear(v.path[:cap(v.path)]) // let the pool hold no strings
	v.path = v.path[:0]
}

func (s *documentStore) handleSumStack(w http.ResponseWriter, r *http.Request) {
	doc, ok := s.lookup(r)
	if !ok {
		http.NotFound(w, r)
		return
	}
	q := sumQuery{field: r.PathValue("field")}
	v := stackVisitors.Get().(*stackVisitor)
	v.visit(doc, &q)
	stackVisitors.Put(v)
	writeSum(w, &q)
}
