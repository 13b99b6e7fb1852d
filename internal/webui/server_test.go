package webui

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/session"
)

// testSession writes a small session: samples, and n heap snapshots whose one stack grows,
// followed by one goroutine snapshot. Snapshot IDs: heaps 0..n-1, goroutine n.
func testSession(t *testing.T, n int) *session.Session {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "s")
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	w, err := session.Create(dir, session.Manifest{Mode: "run", Start: t0, Target: session.Target{Name: "svc", MainModule: "example.com/svc"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if err := w.AppendSample(session.Sample{Time: t0.Add(time.Duration(i) * time.Second),
			Proc: &session.Proc{RSSBytes: uint64(100+i) << 20, RSSAnonBytes: uint64(90+i) << 20}}); err != nil {
			t.Fatal(err)
		}
	}
	fn := &profile.Function{ID: 1, Name: "example.com/svc.(*Cache).Put", Filename: "/src/svc/cache.go"}
	loc := &profile.Location{ID: 1, Line: []profile.Line{{Function: fn, Line: 42}}}
	write := func(kind string, at time.Time, types []string, v int64) {
		p := &profile.Profile{Function: []*profile.Function{fn}, Location: []*profile.Location{loc}}
		var vals []int64
		for _, ty := range types {
			typ, unit, _ := strings.Cut(ty, "/")
			p.SampleType = append(p.SampleType, &profile.ValueType{Type: typ, Unit: unit})
			vals = append(vals, v)
		}
		p.Sample = []*profile.Sample{{Location: []*profile.Location{loc}, Value: vals}}
		var buf bytes.Buffer
		if err := p.Write(&buf); err != nil {
			t.Fatal(err)
		}
		if _, err := w.WriteProfile(kind, at, "", buf.Bytes()); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		write(session.KindHeap, t0.Add(time.Duration(i)*time.Second), []string{"alloc_space/bytes", "inuse_space/bytes"}, int64(i+1)<<20)
	}
	write(session.KindGoroutine, t0.Add(time.Duration(n)*time.Second), []string{"goroutine/count"}, 12)
	if err := w.Close(session.StatusComplete, "test"); err != nil {
		t.Fatal(err)
	}
	s, err := session.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func newTestServer(t *testing.T, s *session.Session, opts Options) *Server {
	t.Helper()
	d, ev, err := diagnose.DiagnoseSession(s, evidence.Options{}, diagnose.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d.Findings = []diagnose.Finding{{Kind: diagnose.KindHeapLeak, Severity: diagnose.Warning, Title: "grows",
		Profiles: []string{s.ProfilesOf(session.KindHeap, true)[0].Path, s.ProfilesOf(session.KindHeap, true)[1].Path}}}
	opts.HTML.Location = time.UTC
	srv, err := New(s, ev, d, opts)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// get requests path from h (through an httptest recorder) and returns the response.
func get(h http.Handler, path string, header http.Header) *http.Response {
	req := httptest.NewRequest("GET", "http://127.0.0.1:8089"+path, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func body(t *testing.T, r *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestServePageAndPprof(t *testing.T) {
	s := testSession(t, 3)
	h := newTestServer(t, s, Options{}).Handler()

	r := get(h, "/", nil)
	page := body(t, r)
	if r.StatusCode != 200 || !strings.Contains(page, `id="picker"`) || !strings.Contains(page, `href="pprof/diff/0/1/?si=inuse_space"`) {
		t.Fatalf("page: %d, picker or finding link missing", r.StatusCode)
	}
	if csp := r.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("page CSP %q", csp)
	}

	// pprof's UI for one snapshot: / redirects (relatively) to its flame graph.
	r = get(h, "/pprof/snap/2/", nil)
	if r.StatusCode != http.StatusMovedPermanently || r.Header.Get("Location") != "flamegraph" {
		t.Fatalf("snapshot UI root: %d Location %q, want 301 to flamegraph", r.StatusCode, r.Header.Get("Location"))
	}
	for _, view := range []string{"flamegraph", "top", "peek?f=Put"} {
		r = get(h, "/pprof/snap/2/"+view, nil)
		b := body(t, r)
		if r.StatusCode != 200 || !strings.Contains(b, "example.com/svc.(*Cache).Put") {
			t.Errorf("snapshot %s: %d, function missing:\n%.300s", view, r.StatusCode, b)
		}
	}
	// The difference of two: 3 MiB - 1 MiB in the top view.
	r = get(h, "/pprof/diff/0/2/top?si=alloc_space", nil)
	b := body(t, r)
	if r.StatusCode != 200 || !strings.Contains(b, "2MB") {
		t.Errorf("diff top: %d, want the 2MB difference:\n%.2000s", r.StatusCode, b)
	}
	if r := get(h, "/pprof/diff/0/2", nil); r.StatusCode != http.StatusMovedPermanently {
		t.Errorf("diff without slash: %d, want a redirect", r.StatusCode)
	}
	// Bad requests answer clearly.
	for path, code := range map[string]int{
		"/pprof/snap/99/":     404,
		"/pprof/snap/x/":      404,
		"/pprof/diff/0/3/":    400, // a heap and a goroutine profile
		"/pprof/snap/0/nope":  404,
		"/elsewhere":          404,
		"/pprof/diff/-1/0/":   404,
		"/pprof/snap/3/top":   200, // the goroutine snapshot opens too
		"/pprof/diff/0/1/top": 200,
	} {
		if r := get(h, path, nil); r.StatusCode != code {
			t.Errorf("%s: %d, want %d", path, r.StatusCode, code)
		}
	}
}

func TestServeToken(t *testing.T) {
	s := testSession(t, 2)
	h := newTestServer(t, s, Options{Token: "s3cret-0123456789"}).Handler()
	for name, c := range map[string]struct {
		path   string
		header http.Header
		code   int
	}{
		"no token":      {"/", nil, 401},
		"wrong bearer":  {"/", http.Header{"Authorization": {"Bearer nope"}}, 401},
		"wrong query":   {"/?token=s3cret-012345678", nil, 401},
		"bearer":        {"/", http.Header{"Authorization": {"Bearer s3cret-0123456789"}}, 200},
		"query":         {"/?token=s3cret-0123456789", nil, 200},
		"cookie":        {"/pprof/snap/0/top", http.Header{"Cookie": {tokenCookie + "=s3cret-0123456789"}}, 200},
		"bad cookie":    {"/pprof/snap/0/top", http.Header{"Cookie": {tokenCookie + "=x"}}, 401},
		"pprof no auth": {"/pprof/snap/0/top", nil, 401},
		"other host":    {"/", http.Header{"Authorization": {"Bearer s3cret-0123456789"}, "Host": {"example.com"}}, 200},
	} {
		r := get(h, c.path, c.header)
		if r.StatusCode != c.code {
			t.Errorf("%s: %d, want %d", name, r.StatusCode, c.code)
		}
		if c.path == "/?token=s3cret-0123456789" {
			var set bool
			for _, ck := range r.Cookies() {
				set = set || ck.Name == tokenCookie && ck.HttpOnly && ck.SameSite == http.SameSiteStrictMode
			}
			if !set {
				t.Errorf("a visit with ?token= sets no HttpOnly, SameSite=Strict cookie")
			}
		}
	}
}

// TestNewRefusesWeakToken: the server applies the agent's token rule whoever calls it.
func TestNewRefusesWeakToken(t *testing.T) {
	s := testSession(t, 2)
	d, ev, err := diagnose.DiagnoseSession(s, evidence.Options{}, diagnose.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{"x", "0123456789abcde", "space in 0123456789abc"} {
		if _, err := New(s, ev, d, Options{Token: tok}); err == nil || !strings.Contains(err.Error(), "token") {
			t.Errorf("token %q: %v, want an error about the token", tok, err)
		}
	}
}

func TestServeLoopbackHostCheck(t *testing.T) {
	s := testSession(t, 2)
	h := newTestServer(t, s, Options{}).Handler()
	for host, code := range map[string]int{
		"127.0.0.1:8089": 200, "localhost:8089": 200, "[::1]:8089": 200, "127.0.0.2": 200,
		"evil.example:8089": 403, "10.0.0.1:8089": 403,
	} {
		req := httptest.NewRequest("GET", "/", nil)
		req.Host = host
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != code {
			t.Errorf("Host %s: %d, want %d", host, rec.Code, code)
		}
	}
}

func TestUICacheBounded(t *testing.T) {
	s := testSession(t, 6)
	srv := newTestServer(t, s, Options{MaxUIs: 3})
	h := srv.Handler()
	for i := range 6 {
		for j := range 6 {
			if i == j {
				continue
			}
			if r := get(h, fmt.Sprintf("/pprof/diff/%d/%d/top", i, j), nil); r.StatusCode != 200 {
				t.Fatalf("diff %d %d: %d", i, j, r.StatusCode)
			}
			if n := srv.uis.len(); n > 3 {
				t.Fatalf("%d pprof UIs kept, want at most 3", n)
			}
		}
	}
}

func TestIsLoopback(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1": true, "127.1.2.3": true, "::1": true, "localhost": true, "LOCALHOST": true,
		"": false, "0.0.0.0": false, "::": false, "10.0.0.1": false, "example.com": false,
	} {
		if got := IsLoopback(host); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", host, got, want)
		}
	}
}
