package webui

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/memdoctor/memdoctor/collect/pprofio"
	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/report"
	"github.com/memdoctor/memdoctor/session"
)

// hostileSession writes a session of two heap snapshots (IDs 0 and 1) holding data.
func hostileSession(t *testing.T, data []byte) *session.Session {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "s")
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	w, err := session.Create(dir, session.Manifest{Mode: "watch", Start: t0})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if _, err := w.WriteProfile(session.KindHeap, t0.Add(time.Duration(i)*time.Second), "", data); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(session.StatusComplete, "test"); err != nil {
		t.Fatal(err)
	}
	s, err := session.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestServeNoLocalFiles serves a profile whose functions name /etc/passwd and a relative
// path climbing to it as their source files, and whose mapping names /etc/shadow as its
// binary: the source and disassembly views are refused and show no file; the other views
// still work.
func TestServeNoLocalFiles(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret.go")
	if err := os.WriteFile(secret, []byte("package secret // the-secret-line\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m := &profile.Mapping{ID: 1, Start: 0x1000, Limit: 0x2000, File: "/etc/shadow", HasFunctions: true}
	var fns []*profile.Function
	var locs []*profile.Location
	for i, file := range []string{"/etc/passwd", strings.Repeat("../", 30) + "etc/passwd", secret} {
		fn := &profile.Function{ID: uint64(i + 1), Name: "main.leak" + string(rune('A'+i)), Filename: file}
		fns = append(fns, fn)
		locs = append(locs, &profile.Location{ID: uint64(i + 1), Mapping: m, Address: 0x1000 + uint64(i), Line: []profile.Line{{Function: fn, Line: 1}}})
	}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "inuse_space", Unit: "bytes"}},
		Sample:     []*profile.Sample{{Location: locs, Value: []int64{1 << 20}}},
		Mapping:    []*profile.Mapping{m}, Location: locs, Function: fns,
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	s := hostileSession(t, buf.Bytes())
	d, ev, err := diagnose.DiagnoseSession(s, evidence.Options{}, diagnose.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(s, ev, d, Options{HTML: reportOptionsUTC()})
	if err != nil {
		t.Fatal(err)
	}
	h := srv.Handler()
	for _, path := range []string{
		"/pprof/snap/0/source?f=.", "/pprof/snap/0/source?f=main.leakA", "/pprof/snap/0/source?f=main.leakC",
		"/pprof/snap/0/disasm?f=.", "/pprof/diff/0/1/source?f=.", "/pprof/snap/0/saveconfig?config=x",
	} {
		r := get(h, path, nil)
		b := body(t, r)
		if r.StatusCode != http.StatusForbidden || strings.Contains(b, "root:") || strings.Contains(b, "the-secret-line") {
			t.Errorf("%s: %d, want 403 without the files (root: %v, secret: %v)", path, r.StatusCode, strings.Contains(b, "root:"), strings.Contains(b, "the-secret-line"))
		}
	}
	if r := get(h, "/pprof/snap/0/top", nil); r.StatusCode != 200 || !strings.Contains(body(t, r), "main.leakA") {
		t.Errorf("the top view no longer works: %d", r.StatusCode)
	}
}

// TestServeRemembersFailure serves a session whose snapshots are a gzip bomb: every request
// for them fails with the reason, and the bomb is read once.
func TestServeRemembersFailure(t *testing.T) {
	var member bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&member, gzip.BestCompression)
	zw.Write(make([]byte, 65<<20))
	zw.Close()
	s := hostileSession(t, bytes.Repeat(member.Bytes(), 16)) // 1 GiB in 1 MiB
	d, ev, err := diagnose.DiagnoseSession(s, evidence.Options{}, diagnose.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(s, ev, d, Options{HTML: reportOptionsUTC()})
	if err != nil {
		t.Fatal(err)
	}
	reads := map[string]int{}
	srv.uis.fetch.read = func(name, path string) (*profile.Profile, error) {
		reads[path]++
		return uiLimits.ReadFileAs(name, path)
	}
	h := srv.Handler()
	for _, path := range []string{"/pprof/snap/0/", "/pprof/snap/0/top", "/pprof/snap/0/flamegraph", "/pprof/diff/0/1/", "/pprof/diff/1/0/top"} {
		r := get(h, path, nil)
		if b := body(t, r); r.StatusCode != http.StatusInternalServerError || !strings.Contains(b, "decompresses to more than 32 MiB") {
			t.Errorf("%s: %d %q, want 500 saying the profile decompresses past the limit", path, r.StatusCode, b)
		}
	}
	for path, n := range reads {
		if n != 1 {
			t.Errorf("%s read %d times", filepath.Base(path), n)
		}
	}
	if len(reads) != 2 {
		t.Errorf("%d profiles read, want 2", len(reads))
	}
}

func reportOptionsUTC() report.HTMLOptions { return report.HTMLOptions{Location: time.UTC} }

// TestServeUILimit serves a valid profile that memdoctor's other commands read but that
// pprof's web UI would take gigabytes to show (about 60 MiB to parse): serve refuses it with
// the reason.
func TestServeUILimit(t *testing.T) {
	raw := []byte{0x0a, 0x04, 0x08, 0x01, 0x10, 0x02, 0x32, 0x00, 0x32, 0x01, 'x', 0x32, 0x01, 'y', 0x22, 0x02, 0x08, 0x01}
	for len(raw) < 2<<20 {
		raw = append(raw, 0x12, 0x06, 0x0a, 0x01, 0x01, 0x12, 0x01, 0x01) // one-frame samples
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(raw)
	zw.Close()
	if _, err := pprofio.Default.Parse("p", gz.Bytes()); err != nil {
		t.Fatalf("the default limits refuse the profile: %v", err)
	}
	s := hostileSession(t, gz.Bytes())
	d, ev, err := diagnose.DiagnoseSession(s, evidence.Options{}, diagnose.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(s, ev, d, Options{HTML: reportOptionsUTC()})
	if err != nil {
		t.Fatal(err)
	}
	r := get(srv.Handler(), "/pprof/snap/0/top", nil)
	if b := body(t, r); r.StatusCode != http.StatusInternalServerError || !strings.Contains(b, "more than 40 MiB") {
		t.Errorf("%d %q, want 500 saying the profile is over serve's limit", r.StatusCode, b)
	}
}

// TestServeOneViewAtATime asks for eight different views at once, as a browser with several
// tabs does: pprof's views are built one at a time, so memory holds one view's cost, not
// eight.
func TestServeOneViewAtATime(t *testing.T) {
	s := testSession(t, 4)
	srv := newTestServer(t, s, Options{})
	var mu sync.Mutex
	inside, most := 0, 0
	srv.uis.fetch.read = func(name, path string) (*profile.Profile, error) {
		mu.Lock()
		inside++
		most = max(most, inside)
		mu.Unlock()
		time.Sleep(50 * time.Millisecond) // time for another request to come in, were it let
		mu.Lock()
		inside--
		mu.Unlock()
		return uiLimits.ReadFileAs(name, path)
	}
	h := srv.Handler()
	var wg sync.WaitGroup
	codes := make([]int, 8)
	for i, path := range []string{"/pprof/snap/0/top", "/pprof/snap/1/top", "/pprof/snap/2/top", "/pprof/snap/3/top",
		"/pprof/diff/0/1/top", "/pprof/diff/1/2/top", "/pprof/diff/2/3/top", "/pprof/diff/0/3/top"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i] = get(h, path, nil).StatusCode
		}()
	}
	wg.Wait()
	for i, c := range codes {
		if c != 200 {
			t.Errorf("request %d: %d", i, c)
		}
	}
	if most != 1 {
		t.Errorf("%d views were built at once, want 1", most)
	}
}
