package report

import (
	"testing"

	"github.com/memdoctor/memdoctor/culprit"
	"github.com/memdoctor/memdoctor/diagnose"
)

func TestFlameDiff(t *testing.T) {
	types := []string{"alloc_space/bytes", "inuse_space/bytes"}
	old := synthProfile(types, [][]any{
		{[]int64{100, 50}, "runtime.mallocgc:1", "main.handle:10", "main.main:1"},
		{[]int64{500, 400}, "example.com/lib.Decode:5", "main.load:20", "main.main:1"},
	})
	new := synthProfile(types, [][]any{
		{[]int64{1100, 40}, "runtime.mallocgc:1", "main.handle:10", "main.main:1"},
		{[]int64{800, 100}, "example.com/lib.Decode:5", "main.load:20", "main.main:1"},
		{[]int64{50, 50}, "io.ReadAll:3", "main.read:30", "main.main:1"},
	})
	f, err := flameDiff(old, new, "alloc_space", culprit.Options{MainModule: "example.com/app"})
	if err != nil {
		t.Fatal(err)
	}
	if f.Total != 1000+300+50 || f.Unit != "bytes" || f.Shrank != 0 {
		t.Fatalf("total %d unit %s shrank %d, want 1350 bytes, 0", f.Total, f.Unit, f.Shrank)
	}
	checkFlameShape(t, f)
	// main.handle is the culprit of the first stack (the program's own code, not the runtime).
	found := false
	for _, n := range f.Nodes {
		if f.Names[n[0]] == "main.handle" {
			found = n[3]&1 != 0 && n[3]&2 != 0 && n[1] == 1000
		}
		if f.Names[n[0]] == "runtime.mallocgc" && n[3]&1 != 0 {
			t.Errorf("runtime.mallocgc marked as the culprit")
		}
	}
	if !found {
		t.Errorf("main.handle is not marked as the culprit with 1000 bytes: %v %v", f.Names, f.Nodes)
	}
	in, err := flameDiff(old, new, "inuse_space", culprit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if in.Total != 50 || in.Shrank != 10+300 {
		t.Errorf("inuse: total %d shrank %d, want 50 grown, 310 shrunk", in.Total, in.Shrank)
	}
	if _, err := flameDiff(old, new, "goroutine", culprit.Options{}); err == nil {
		t.Errorf("a sample type the profiles lack must be an error")
	}
}

// checkFlameShape checks a flame's pre-order encoding: every index in range, children never
// wider than their parent, the whole list consumed by the root.
func checkFlameShape(t *testing.T, f *Flame) {
	t.Helper()
	i := 0
	var walk func() int64
	walk = func() int64 {
		if i >= len(f.Nodes) {
			t.Fatalf("node list ends early")
		}
		n := f.Nodes[i]
		i++
		if n[0] < 0 || int(n[0]) >= len(f.Names) {
			t.Fatalf("name index %d out of range", n[0])
		}
		var sum int64
		for range n[2] {
			sum += walk()
		}
		if sum > n[1] {
			t.Errorf("%s: children weigh %d, more than the node's %d", f.Names[n[0]], sum, n[1])
		}
		return n[1]
	}
	if root := walk(); root != f.Total {
		t.Errorf("root %d, total %d", root, f.Total)
	}
	if i != len(f.Nodes) {
		t.Errorf("%d nodes after the root's tree", len(f.Nodes)-i)
	}
}

func TestFlameBounded(t *testing.T) {
	var samples [][]any
	for i := range 20000 {
		samples = append(samples, []any{[]int64{int64(1 + i%97)}, "main.leaf" + itoa(i) + ":1", "main.mid" + itoa(i%300) + ":2", "main.main:1"})
	}
	old := synthProfile([]string{"alloc_space/bytes"}, nil)
	new := synthProfile([]string{"alloc_space/bytes"}, samples)
	f, err := flameDiff(old, new, "alloc_space", culprit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Nodes) > maxFlameNodes || f.Dropped == 0 {
		t.Errorf("%d nodes (%d dropped), want at most %d", len(f.Nodes), f.Dropped, maxFlameNodes)
	}
	checkFlameShape(t, f)
}

func TestFlameCulprits(t *testing.T) {
	f := flameCulprits([]diagnose.Culprit{
		{Function: "main.a", Bytes: 300, Own: true, Stack: []string{"io.ReadAll", "main.a", "main.main"}},
		{Function: "main.b", Bytes: -100, Own: true, Stack: []string{"main.b", "main.main"}},
		{Function: "main.c", Bytes: 50},
	})
	if f == nil || f.Total != 400 || f.Unit != "bytes" {
		t.Fatalf("flame %+v, want 400 bytes from two stacks", f)
	}
	checkFlameShape(t, f)
	if flameCulprits([]diagnose.Culprit{{Function: "main.c", Bytes: 5}}) != nil {
		t.Errorf("culprits without stacks make no flame graph")
	}
}
