package culprit

import (
	"testing"
)

// TestGroupBySiteRecursion: a leak site reached through a recursive walk at three depths is
// one site with the sum of the counts, represented by its largest member; another site stays
// apart.
func TestGroupBySiteRecursion(t *testing.T) {
	opts := Options{MainModule: "example.com/svc"}
	g := newGrouper(opts)
	leaf := frame{fn: "example.com/svc.(*walker).wait", file: "/src/walk.go", line: 42}
	walk := frame{fn: "example.com/svc.(*walker).walk", file: "/src/walk.go", line: 30}
	chanrecv := frame{fn: "runtime.chanrecv1", file: "/go/src/runtime/chan.go", line: 506}
	gopark := frame{fn: "runtime.gopark", file: "/go/src/runtime/proc.go", line: 460}
	start := frame{fn: "example.com/svc.start", file: "/src/main.go", line: 10}
	for depth, n := range []int{30, 50, 20} {
		frames := []frame{gopark, chanrecv, leaf}
		for range depth + 1 {
			frames = append(frames, walk)
		}
		frames = append(frames, start)
		g.add("chan receive", frames, start, false, n, 0, 0)
	}
	other := frame{fn: "example.com/svc.serve", file: "/src/serve.go", line: 7}
	g.add("IO wait", []frame{gopark, other}, start, false, 40, 0, 0)
	groups := g.result()
	if len(groups) != 4 {
		t.Fatalf("stack groups = %d, want 4", len(groups))
	}
	sites := GroupBySite(groups)
	if len(sites) != 2 {
		t.Fatalf("sites = %d, want 2: %+v", len(sites), sites)
	}
	top := sites[0]
	if top.Count != 100 || top.Members != 3 || top.Culprit.Function != leaf.fn || top.Culprit.Line != 42 {
		t.Errorf("top site = count %d, members %d, culprit %+v; want 100, 3, %s:42", top.Count, top.Members, top.Culprit, leaf.fn)
	}
	if len(top.Stack) != 3+2+1 { // the largest member (50) walked two levels deep
		t.Errorf("representative stack %v, want the largest member's (depth 2)", top.Stack)
	}
	if sites[1].Count != 40 || sites[1].Members != 1 {
		t.Errorf("second site = %+v", sites[1])
	}
}
