package webui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memdoctor/memdoctor/session"
)

// TestServeRelativeSession serves a session opened by a relative path: the page draws the
// finding's flame-graph diff, and pprof's UI opens the snapshots even after the working
// directory changed.
func TestServeRelativeSession(t *testing.T) {
	abs := testSession(t, 3).Dir
	t.Chdir(filepath.Dir(filepath.Dir(abs)))
	rel := filepath.Join(filepath.Base(filepath.Dir(abs)), filepath.Base(abs))
	s, err := session.Open(rel)
	if err != nil {
		t.Fatal(err)
	}
	if p := s.ProfilesOf(session.KindHeap, true)[0].Path; filepath.IsAbs(p) {
		t.Fatalf("profile path %s: want the relative path the reader gives", p)
	}
	h := newTestServer(t, s, Options{}).Handler()
	t.Chdir(t.TempDir())
	page := body(t, get(h, "/", nil))
	if strings.Contains(page, "could not be compared") || !strings.Contains(page, "growth of the heap held between") {
		t.Errorf("the page has no flame-graph diff for the finding")
	}
	for _, path := range []string{"/pprof/diff/0/1/top?si=inuse_space", "/pprof/snap/2/top"} {
		r := get(h, path, nil)
		if b := body(t, r); r.StatusCode != 200 || !strings.Contains(b, "example.com/svc.(*Cache).Put") {
			t.Errorf("%s: %d:\n%.300s", path, r.StatusCode, b)
		}
	}
	if _, err := os.Stat(rel); err == nil {
		t.Fatal("the test did not leave the session's parent directory")
	}
}
