package recorder

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/collect/agentclient"
	"github.com/memdoctor/memdoctor/collect/scrape"
	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/report"
	"github.com/memdoctor/memdoctor/session"
)

// loginWall serves the real pprof index, and an HTML login page for every profile: what a
// service behind an authenticating proxy that lets the index through answers.
func loginWall(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/{$}", pprof.Index)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<!DOCTYPE html><html><head><title>Sign in</title></head><body><form>password</form></body></html>")
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// checkNothingLost checks that a session whose profiles all failed says so: in Attempts, in
// NeverCollected and in a note that explains why.
func checkNothingLost(t *testing.T, dir string) *session.Session {
	t.Helper()
	s, err := session.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	heap := s.Manifest.Attempts[session.AttemptHeap]
	if heap.Tries < 2 || heap.OK != 0 || !strings.Contains(heap.LastError, "HTML page") {
		t.Errorf("heap attempts %+v, want 2 or more tries, none ok, an HTML page as the last error", heap)
	}
	never := s.NeverCollected()
	for _, kind := range []string{session.AttemptHeap, session.AttemptGoroutine} {
		if !slices.Contains(never, kind) {
			t.Errorf("NeverCollected %q lacks %s", never, kind)
		}
	}
	want := fmt.Sprintf("heap profiles: 0 of %d fetches succeeded (the server answered an HTML page: a login page?)", heap.Tries)
	if !slices.Contains(s.Manifest.Notes, want) {
		t.Errorf("notes %q lack %q", s.Manifest.Notes, want)
	}
	if len(s.ProfilesOf(session.KindHeap, false)) != 0 {
		t.Errorf("profiles stored from HTML pages")
	}
	return s
}

// TestRunHTMLProfiles runs a Go program whose pprof address answers every profile with a
// login page: the session must say that no profile came, and why.
func TestRunHTMLProfiles(t *testing.T) {
	srv := loginWall(t)
	cfg := runConfig(t, helperCommand(t, "gc")...)
	cfg.PprofURL, cfg.Duration = srv.URL, 3500*time.Millisecond
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != session.StatusComplete {
		t.Errorf("status %s (%s)", res.Status, res.Detail)
	}
	s := checkNothingLost(t, cfg.Out)
	if p := s.Manifest.Attempts[session.AttemptProc]; p.Tries < 10 || p.OK != p.Tries {
		t.Errorf("proc attempts %+v, want every /proc read of the 3.5 s counted and ok", p)
	}
}

// TestWatchHTMLProfiles watches a service whose profiles are login pages: it answers, so the
// watch goes on for its whole duration (not "the service stopped answering"), and the
// session says what it could not get.
func TestWatchHTMLProfiles(t *testing.T) {
	srv := loginWall(t)
	cfg := watchConfig(t)
	cfg.Duration = 4500 * time.Millisecond
	res, err := Watch(context.Background(), cfg, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != session.StatusComplete {
		t.Errorf("status %s (%s), want complete: the service answered throughout", res.Status, res.Detail)
	}
	s := checkNothingLost(t, cfg.Out)
	want := fmt.Sprintf("MemStats (heap?debug=1): 0 of %d fetches succeeded (the server answered an HTML page: a login page?)", s.Manifest.Attempts[session.AttemptMemStats].Tries)
	if !slices.Contains(s.Manifest.Notes, want) {
		t.Errorf("notes %q lack %q", s.Manifest.Notes, want)
	}
	checkDiagnosisSays(t, s)
}

// checkDiagnosisSays diagnoses a session whose heap profiles all failed: the diagnosis (its
// notes, what the JSON carries, and the text) says what could not be collected, the rule that
// needs heap profiles says it could not judge because of it, and nothing claims health.
func checkDiagnosisSays(t *testing.T, s *session.Session) {
	t.Helper()
	d, _, err := diagnose.DiagnoseSession(s, evidence.Options{}, diagnose.Options{})
	if err != nil {
		t.Fatal(err)
	}
	heap := s.Manifest.Attempts[session.AttemptHeap]
	said := fmt.Sprintf("heap profiles: 0 of %d fetches succeeded", heap.Tries)
	if !slices.ContainsFunc(d.Notes, func(n string) bool { return strings.HasPrefix(n, said) }) {
		t.Errorf("diagnosis notes %q do not say %q", d.Notes, said)
	}
	i := slices.IndexFunc(d.NotJudged, func(n diagnose.NotJudged) bool { return n.Kind == diagnose.KindAllocationHotspot })
	if i < 0 || !strings.HasPrefix(d.NotJudged[i].Reason, said) {
		t.Errorf("not judged %+v: want allocation-hotspot, because %q", d.NotJudged, said)
	}
	var text strings.Builder
	if err := report.Text(&text, d, report.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if out := text.String(); d.Healthy() || strings.Contains(out, "no memory problem found") || !strings.Contains(out, "allocation-hotspot: "+said) {
		t.Errorf("the text report claims health or hides the failed heap profiles:\n%s", out)
	}
}

// TestAttemptsWrittenWhileRunning reads the manifest while a recording runs, as a killed
// collector leaves it: the counts are there, not only at the end.
func TestAttemptsWrittenWhileRunning(t *testing.T) {
	if testing.Short() {
		t.Skip("records for more than five seconds")
	}
	srv := loginWall(t)
	cfg := runConfig(t, helperCommand(t, "gc")...)
	cfg.PprofURL = srv.URL
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := Run(ctx, cfg); done <- err }()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if s, err := session.Open(cfg.Out); err == nil && s.Manifest.Attempts[session.AttemptHeap].Tries >= 2 {
			if s.Manifest.Status != session.StatusRunning {
				t.Fatalf("status %s: the recording should still run", s.Manifest.Status)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the manifest of the running session never counted two heap fetches")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestClean(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"plain", 10, "plain"},
		{"a\n\tb  \x1b[31mred\x1b[0m\r\n", 100, "a b [31mred [0m"},
		{"  lead\xff", 10, "lead"},
		{strings.Repeat("x", 20), 10, "xxxxxxxxxx..."},
	} {
		if got := clean(tc.in, tc.n); got != tc.want {
			t.Errorf("clean(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

func TestExplain(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("GET x: %w: the body is an HTML page: \"<html>\"", scrape.ErrNotProfile), "an HTML page"},
		{fmt.Errorf("GET x: %w: not a heap?debug=1 page; body: \"<!DOCTYPE html>\"", scrape.ErrNoMemStats), "an HTML page"},
		{&scrape.StatusError{URL: "x", StatusCode: 401}, "credentials"},
		{fmt.Errorf("list: %w", agentclient.ErrUnauthorized), "credentials"},
		{fmt.Errorf("GET x: %w: connection refused", scrape.ErrUnreachable), "did not answer"},
		{fmt.Errorf("GET x: %w", scrape.ErrTimeout), "timed out"},
		{fmt.Errorf("read /proc/1/status: %w", fs.ErrPermission), "permission denied"},
		{errors.New("something\x1b[2J else"), "the last error: something [2J else"},
	} {
		if got := explain(tc.err); !strings.Contains(got, tc.want) {
			t.Errorf("explain(%v) = %q, want it to contain %q", tc.err, got, tc.want)
		}
	}
}
