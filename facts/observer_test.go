package facts

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/internal/dev/proftest"
)

// TestObserverSitesAreNotFollowed: on a service of 200,000 goroutines watched over pprof
// (the lab's subscriber-flood, 90 s), the records of memdoctor's own goroutine profiles were
// in use at the GCs that ran while one was served, and grew with the goroutines from one heap
// profile to the next (runtime/pprof.writeRuntimeProfile, and the strings printCountProfile
// builds, under net/http/pprof's handler): the sites that grew most. The growing sites a heap
// leak is judged by, and named after, are the program's; the goroutines' own structures
// (their g, the runtime's list of them) are the goroutine count's, not a heap site.
func TestObserverSitesAreNotFollowed(t *testing.T) {
	const handler = ";runtime/pprof.writeGoroutine;runtime/pprof.(*Profile).WriteTo;net/http/pprof.handler.ServeHTTP;net/http.HandlerFunc.ServeHTTP;net/http.(*conn).serve"
	records := "runtime/pprof.writeRuntimeProfile" + handler
	keys := "strings.(*Builder).Write;runtime/pprof.printCountProfile.func1;runtime/pprof.printCountProfile;runtime/pprof.writeRuntimeProfile" + handler
	subscribe := "github.com/memdoctor/memdoctor/lab.(*pushGateway).subscribe;github.com/memdoctor/memdoctor/lab.(*pushGateway).handleChurn;net/http.HandlerFunc.ServeHTTP;net/http.(*conn).serve"
	// Stacks of the runtime alone, as the heap profiles of the lab's subscriber-flood hold
	// them: the goroutines' g structs and the list of all goroutines (their growth is the
	// goroutine count's), and the records of each goroutine the runtime saves for a goroutine
	// profile (the observer's), on the system stack.
	gs := "runtime.mallocgc;runtime.newobject;runtime.malg;runtime.newproc1;runtime.newproc.func1;runtime.systemstack"
	allgs := "runtime.mallocgc;runtime.growslice;runtime.allgadd;runtime.newproc1;runtime.newproc.func1;runtime.systemstack"
	saved := "runtime.mallocgc;runtime.makeslice;runtime.makeProfStack;runtime.saveg;runtime.doRecordGoroutineProfile.func1;runtime.systemstack"
	ev := evidence.New("watch", evidence.Target{MainModule: "github.com/memdoctor/memdoctor"}, evidence.Options{})
	t0 := time.Date(2026, 12, 2, 2, 33, 0, 0, time.UTC)
	for i := range 6 {
		at := t0.Add(time.Duration(i) * 15 * time.Second)
		k := int64(i)
		rows := map[string][2]int64{
			subscribe: {(13 + 2*k) << 20, (13 + 2*k) << 20},
			records:   {(4 + 8*k) << 20, (4 + 8*k) << 20},
			keys:      {(3 + 3*k) << 20, (3 + 3*k) << 20},
			gs:        {(40 + 9*k) << 20, (40 + 9*k) << 20},
			allgs:     {(1 + k) << 20, (1 + k) << 20},
			saved:     {(2 + 2*k) << 20, (2 + 2*k) << 20},
		}
		ev.AddProfile(evidence.Snapshot{Kind: "heap", T: at, Path: fmt.Sprintf("heap-%d", i)}, proftest.Heap(at, rows))
	}
	ev.Finish(evidence.Options{})
	fs := Of(ev)
	if fs.Growth == nil || len(fs.Growth.Sites) == 0 {
		t.Fatal("no growing site followed")
	}
	for _, s := range fs.Growth.Sites {
		if Observer(s.Delta.Stack) || Observer([]string{s.Delta.Site.Function}) {
			t.Errorf("the observer's site %s is followed as a growing site", s.Delta.Site.Function)
		}
		if GoroutineOwn(s.Delta.Stack) || strings.HasPrefix(s.Delta.Site.Function, "runtime.") {
			t.Errorf("the runtime's site %s is followed as a growing site", s.Delta.Site.Function)
		}
	}
	if got := fs.Growth.Sites[0].Delta.Site.Function; got != "github.com/memdoctor/memdoctor/lab.(*pushGateway).subscribe" {
		t.Errorf("the first growing site is %s, want the program's subscribe", got)
	}
	for _, s := range fs.LeakSites.Sites {
		if Observer(s.Delta.Stack) || GoroutineOwn(s.Delta.Stack) {
			t.Errorf("the observer's or the goroutines' own site %s is a leak site", s.Delta.Site.Function)
		}
	}
}
