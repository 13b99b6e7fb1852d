package rule

import (
	"slices"
	"testing"
)

func names(cs []Culprit) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Function)
	}
	return out
}

func TestKeepCulpritsDropsTheRuntime(t *testing.T) {
	cs := []Culprit{
		{Function: "runtime.mallocgc", Share: 0.6},
		{Function: "internal/poll.(*pollDesc).wait", Share: 0.3},
		{Function: "example.com/svc/session.(*Store).add", Share: 0.05, Own: true},
		{Function: "example.com/svc/api.render", Share: 0.001, Own: true},
	}
	got := names(keepCulprits(cs, &Default.Culprits))
	if want := []string{"example.com/svc/session.(*Store).add"}; !slices.Equal(got, want) {
		t.Errorf("culprits %v, want %v", got, want)
	}
}

// TestKeepCulpritsDropsTheObserver: the pprof handlers and memdoctor's agent are what
// watching costs, never the program's culprit.
func TestKeepCulpritsDropsTheObserver(t *testing.T) {
	cs := []Culprit{
		{Function: "github.com/memdoctor/memdoctor/agent.(*bufPool).get", Share: 0.4, Own: true,
			Stack: []string{"github.com/memdoctor/memdoctor/agent.(*bufPool).get", "github.com/memdoctor/memdoctor/agent.(*Agent).serve"}},
		{Function: "compress/flate.NewWriter", Share: 0.3, Own: true,
			Stack: []string{"compress/flate.NewWriter", "runtime/pprof.(*profileBuilder).build"}},
		{Function: "github.com/memdoctor/memdoctor/agentx.grow", Share: 0.2, Own: true,
			Stack: []string{"github.com/memdoctor/memdoctor/agentx.grow"}},
		{Function: "example.com/svc/cache.put", Share: 0.1, Own: true, Stack: []string{"example.com/svc/cache.put"}},
	}
	got := names(keepCulprits(cs, &Default.Culprits))
	if want := []string{"github.com/memdoctor/memdoctor/agentx.grow", "example.com/svc/cache.put"}; !slices.Equal(got, want) {
		t.Errorf("culprits %v, want %v", got, want)
	}
}

// TestKeepCulpritsKeepsTheUnnamed: an unsymbolized address or a C symbol may be the
// program's; a sample with no stack names nothing to change.
func TestKeepCulpritsKeepsTheUnnamed(t *testing.T) {
	cs := []Culprit{
		{Function: "0x420cee", Share: 0.9},
		{Function: "(unknown)", Share: 0.05},
		{Function: "sqlite3_malloc", Share: 0.03},
		{Function: "bytes.growSlice", Share: 0.02},
	}
	got := names(keepCulprits(cs, &Default.Culprits))
	if want := []string{"0x420cee", "sqlite3_malloc"}; !slices.Equal(got, want) {
		t.Errorf("culprits %v, want %v", got, want)
	}
}

// TestOwnSiteFirst: a leak under spikes whose title names the leaking site lists it first,
// and a heap leak lists the sites a spike blames after its own.
func TestOwnSiteFirst(t *testing.T) {
	spike := Culprit{Function: "example.com/svc/imports.inflateWhole", Bytes: 402 << 20, Own: true}
	leak := Culprit{Function: "example.com/svc/devices.rememberSession", Bytes: 12 << 20, Own: true}
	other := Culprit{Function: "example.com/svc/cache.put", Bytes: 1 << 20, Own: true}
	if got := names(ownFirst([]Culprit{spike, leak}, leak)); !slices.Equal(got, names([]Culprit{leak, spike})) {
		t.Errorf("ownFirst: %v", got)
	}
	if got := names(ownFirst([]Culprit{spike}, leak)); !slices.Equal(got, names([]Culprit{leak, spike})) {
		t.Errorf("ownFirst without the site: %v", got)
	}
	vs := []Verdict{
		{Kind: KindHeapLeak, Culprits: []Culprit{spike, other, leak}, Case: &HeapLeakCase{}},
		{Kind: KindTransientSpike, Culprits: []Culprit{spike}},
	}
	spikeSitesLast(vs)
	if got := names(vs[0].Culprits); !slices.Equal(got, names([]Culprit{other, leak, spike})) {
		t.Errorf("heap leak's culprits beside a spike: %v", got)
	}
}
