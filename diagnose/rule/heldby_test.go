package rule

import (
	"testing"

	"github.com/memdoctor/memdoctor/facts"
	"github.com/memdoctor/memdoctor/holders"
)

// TestHeapLeakCulpritsHeldBy: when memdoctor read the process's heap, each culprit of a heap
// leak carries who holds its objects; a culprit the reading did not cover carries nothing,
// and without a reading none does.
func TestHeapLeakCulpritsHeldBy(t *testing.T) {
	leak := func(read *holders.Result) []Culprit {
		var mibs []float64
		for i := range 31 {
			mibs = append(mibs, 20+float64(i))
		}
		fs := liveFacts(mibs...)
		site := func(fn string, grew int64) facts.SiteSeries {
			return facts.SiteSeries{Delta: facts.SiteDelta{Site: facts.Site{Function: fn, Own: true}, Delta: grew}}
		}
		fs.LeakSites = facts.LeakSites{Pair: true, Old: facts.Snapshot{Path: "profiles/heap-1.pb.gz"}, New: facts.Snapshot{Path: "profiles/heap-9.pb.gz"},
			Diff:  &facts.SiteDiff{Unit: "bytes", Growth: 30 << 20},
			Sites: []facts.SiteSeries{site("main.(*registry).remember", 27<<20), site("main.load", 3<<20)}}
		fs.Holders = facts.Holders{Result: read}
		out := heapLeak(fs, &Default)
		if len(out.verdicts) != 1 || out.verdicts[0].Confidence != Confirmed {
			t.Fatalf("want a confirmed heap leak: %+v", out.verdicts)
		}
		return out.verdicts[0].Culprits
	}
	read := &holders.Result{Culprits: []holders.Culprit{{Site: "main.(*registry).remember", Samples: 9,
		Paths: []holders.Path{{Expr: "main.registry[value].history[i]", Share: 1, Bytes: 48 << 20}}, Covered: 1}}}
	cs := leak(read)
	if len(cs) != 2 {
		t.Fatalf("culprits %+v", cs)
	}
	if h := cs[0].HeldBy; h == nil || h.Paths[0].Expr != "main.registry[value].history[i]" {
		t.Errorf("the first culprit is not held by the registry: %+v", h)
	}
	if cs[1].HeldBy != nil {
		t.Errorf("a culprit the reading did not cover: %+v", cs[1].HeldBy)
	}
	for _, c := range leak(nil) {
		if c.HeldBy != nil {
			t.Errorf("no reading, yet %s is held: %+v", c.Function, c.HeldBy)
		}
	}
}
