package webui

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/memdoctor/memdoctor/holders"
)

// TestServeHolders: holders saved in the session show in the page, and their paths open in
// pprof's UI, whose flame graph draws them; without them the route says what to run.
func TestServeHolders(t *testing.T) {
	s := testSession(t, 2)
	srv := newTestServer(t, s, Options{})
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	if code, body := fetchURL(t, ts.URL+"/pprof/holders/"); code != http.StatusNotFound || !strings.Contains(body, "memdoctor holders --from") {
		t.Errorf("no holders: %d %q", code, body)
	}

	r := &holders.Result{Schema: holders.Schema, Target: holders.Target{Kind: "process", PID: 7, GoVersion: "go1.26.8"},
		Heap: holders.HeapSummary{Objects: 10, Bytes: 1 << 20, Roots: 3, SampleRate: 512 << 10},
		Culprits: []holders.Culprit{{Site: "example.com/svc.(*Cache).Put", Samples: 3, Bytes: 3 << 20,
			Paths: []holders.Path{{Root: holders.Root{Kind: "global", Name: "example.com/svc.cache"},
				Hops: []holders.Hop{{Expr: "[value]", Type: "example.com/svc.entry"}}, Expr: "example.com/svc.cache[value]", Samples: 3, Bytes: 3 << 20, Objects: 30, Share: 1}},
			Covered: 1}}}
	if err := holders.Save(s.Dir, r); err != nil {
		t.Fatal(err)
	}
	srv = newTestServer(t, s, Options{})
	ts2 := httptest.NewServer(srv.Handler())
	defer ts2.Close()
	_, page := fetchURL(t, ts2.URL+"/")
	for _, want := range []string{"Who holds it", "example.com/svc.cache[value]", `href="pprof/holders/"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	code, flame := fetchURL(t, ts2.URL+"/pprof/holders/flamegraph")
	if code != http.StatusOK || !strings.Contains(flame, "example.com/svc.cache") {
		t.Errorf("pprof's flame graph of the holders: %d, has the root: %v", code, strings.Contains(flame, "example.com/svc.cache"))
	}
}

func fetchURL(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
