package culprit

import "testing"

// TestDiffKeepsTheObserverApart: what profilers reading the process allocated (stacks through
// runtime/pprof, net/http/pprof or memdoctor's agent) is counted at its site as before, and
// apart in Delta.Observer and DiffResult.Observer.
func TestDiffKeepsTheObserverApart(t *testing.T) {
	old := newSynth(0, "alloc_objects/count", "alloc_space/bytes")
	old.sample([]int64{1, 100}, "strings.(*Builder).Write:1", "runtime/pprof.printCountProfile:400", "net/http/pprof.handler.ServeHTTP:250")
	old.sample([]int64{1, 100}, "runtime.mallocgc:1", "main.handle:10")
	new := newSynth(1<<20, "alloc_objects/count", "alloc_space/bytes")
	new.sample([]int64{1, 700}, "strings.(*Builder).Write:1", "runtime/pprof.printCountProfile:400", "net/http/pprof.handler.ServeHTTP:250")
	new.sample([]int64{1, 300}, "runtime.mallocgc:1", "main.handle:10")
	new.sample([]int64{1, 50}, "runtime.mallocgc:1", "github.com/memdoctor/memdoctor/agent.captureProfile:9")
	r, err := Diff(old.p, new.p, "alloc_space", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Observer != 650 || r.Growth != 850 {
		t.Errorf("observer %d of growth %d, want 650 of 850", r.Observer, r.Growth)
	}
	for _, d := range r.ByFunction {
		want := map[string]int64{"strings.(*Builder).Write": 600, "main.handle": 0, "github.com/memdoctor/memdoctor/agent.captureProfile": 50}[d.Site.Function]
		if d.Observer != want {
			t.Errorf("%s: observer %d of its delta %d, want %d", d.Site.Function, d.Observer, d.Delta, want)
		}
	}
	if !Observer([]string{"runtime.saveg"}) || Observer([]string{"github.com/memdoctor/memdoctor/agentx.F", "main.main"}) {
		t.Error("Observer: the runtime's recording of a goroutine profile is the observer's; a package only named like the agent is not")
	}
}
