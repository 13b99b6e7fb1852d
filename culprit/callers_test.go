package culprit

import (
	"testing"
)

// TestSharedCaller: a request path that keeps a little at each of several sites keeps it all
// under the middleware they share. The stacks' growth is summed by each function of the
// program's own code they pass through (recursion counted once); the function shared is the
// deepest that holds nearly all the growth, not the root above it nor a handler below it
// that holds part of it; the standard library's frames are never one.
func TestSharedCaller(t *testing.T) {
	root := []string{"net/http.HandlerFunc.ServeHTTP:2220", "main.(*router).route:30", "main.(*router).route:34", "net/http.(*conn).serve:2102"}
	path := func(frames ...string) []string { return append(frames, root...) }
	old := newSynth(0, "inuse_space/bytes")
	old.sample([]int64{100}, path("main.(*store).open:10", "main.(*sessions).ServeHTTP:20")...)
	new := newSynth(1<<20, "inuse_space/bytes")
	new.sample([]int64{400}, path("main.(*store).open:10", "main.(*sessions).ServeHTTP:20")...)
	new.sample([]int64{350}, path("main.handleCart:40", "main.(*sessions).ServeHTTP:22")...)
	new.sample([]int64{250}, path("bytes.growSlice:249", "main.(*registry).index:50", "main.(*sessions).ServeHTTP:21")...)
	new.sample([]int64{60}, path("main.audit:60", "main.handleCart:41", "main.(*sessions).ServeHTTP:22")...)
	new.sample([]int64{100}, "net/textproto.readMIMEHeader:574", "net/http.readRequest:1100", "net/http.(*conn).serve:2080")
	new.sample([]int64{30}, path("main.other:5")...) // under the router, beside the sessions
	r, err := Diff(old.p, new.p, "inuse_space", Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Caller{}
	for _, c := range r.ByCaller {
		got[c.Function] = c
	}
	for fn, want := range map[string]struct {
		value int64
		sites int
	}{
		"main.(*router).route":       {990, 5},
		"main.(*sessions).ServeHTTP": {960, 4},
		"main.handleCart":            {410, 2},
	} {
		if c := got[fn]; c.Value != want.value || c.Sites != want.sites {
			t.Errorf("%s: %+v, want %d over %d sites", fn, c, want.value, want.sites)
		}
	}
	for fn := range got {
		if !classOfStd(fn) && (fn == "main.(*store).open" || fn == "main.audit") {
			t.Errorf("%s holds one site only, yet is a caller: %+v", fn, got[fn])
		}
		if classOfStd(fn) {
			t.Errorf("a standard library function is a caller: %s", fn)
		}
	}
	sh, ok := Shared(r.ByCaller)
	if !ok || sh.Function != "main.(*sessions).ServeHTTP" || len(sh.Stack) == 0 {
		t.Errorf("shared: %+v %v, want main.(*sessions).ServeHTTP", sh, ok)
	}
	// Nothing shared: one site grew.
	one := newSynth(1<<20, "inuse_space/bytes")
	one.sample([]int64{500}, path("main.(*store).open:10", "main.(*sessions).ServeHTTP:20")...)
	r, err = Diff(old.p, one.p, "inuse_space", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sh, ok := Shared(r.ByCaller); ok {
		t.Errorf("one site grew, yet %+v is shared", sh)
	}
}

func classOfStd(fn string) bool {
	c := classOf(fn, Options{})
	return c == classStd || c == classRuntime
}
