package agentclient

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/agent"
	"github.com/memdoctor/memdoctor/session"
)

// TestContract runs a real agent behind httptest and reads everything through the client.
func TestContract(t *testing.T) {
	ctx := context.Background()
	a, err := agent.Start(ctx, agent.WithSampleInterval(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Stop(ctx)
	mux := http.NewServeMux()
	mux.Handle("/debug/memdoctor/", a.Handler())
	srv := httptest.NewServer(mux)
	defer srv.Close()
	deadline := time.Now().Add(30 * time.Second)
	for a.Info().Samples < 5 || len(a.Profiles()) < 2 {
		if time.Now().After(deadline) {
			t.Fatal("the agent took no samples")
		}
		time.Sleep(20 * time.Millisecond)
	}

	for _, base := range []string{srv.URL, srv.URL + "/debug/memdoctor/", srv.URL + "/debug/pprof", strings.TrimPrefix(srv.URL, "http://")} {
		c, err := New(base)
		if err != nil {
			t.Fatal(err)
		}
		in, err := c.Info(ctx)
		if err != nil {
			t.Fatalf("%s: %v", base, err)
		}
		if in.PID == 0 || in.GoVersion == "" || in.SampleIntervalSeconds != 0.1 {
			t.Errorf("%s: info %+v", base, in)
		}
	}
	c, _ := New(srv.URL)
	var got []session.Sample
	n, last, err := c.Metrics(ctx, time.Time{}, func(s session.Sample) error { got = append(got, s); return nil })
	if err != nil || n < 5 || n != len(got) || !last.Equal(got[n-1].Time) {
		t.Fatalf("metrics: %d samples, last %v, err %v", n, last, err)
	}
	for _, s := range got {
		if s.Go == nil || s.Go.Source != "runtime/metrics" || s.Go.TotalBytes == 0 || s.Proc == nil || s.Proc.RSSBytes == 0 {
			t.Fatalf("sample %+v", s)
		}
	}
	// Incremental: only what is newer than the last one seen.
	n2, _, err := c.Metrics(ctx, got[2].Time, func(s session.Sample) error {
		if !s.Time.After(got[2].Time) {
			t.Errorf("sample at %v is not after %v", s.Time, got[2].Time)
		}
		return nil
	})
	if err != nil || n2 < n-3 {
		t.Errorf("since the third: %d samples (of %d), err %v", n2, n, err)
	}
	stop := errors.New("enough")
	if n, _, err := c.Metrics(ctx, time.Time{}, func(session.Sample) error { return stop }); !errors.Is(err, stop) || n != 0 {
		t.Errorf("fn's error: n %d, err %v", n, err)
	}

	profs, err := c.Profiles(ctx)
	if err != nil || len(profs) != 2 {
		t.Fatalf("profiles %v, %v", profs, err)
	}
	b, err := c.Profile(ctx, profs[0].Name)
	if err != nil || len(b) != profs[0].Size || !bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
		t.Errorf("profile %s: %d bytes, %v", profs[0].Name, len(b), err)
	}
	if _, err := c.Profile(ctx, "heap-19700101T000000.000Z.pb.gz"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing profile: %v", err)
	}
	if _, err := c.Profile(ctx, "../x"); err == nil {
		t.Error("a name with a slash was requested")
	}
	if evs, err := c.Events(ctx); err != nil || len(evs) != 0 {
		t.Errorf("events %v, %v", evs, err)
	}
	if trs, err := c.Traces(ctx); err != nil || len(trs) != 0 {
		t.Errorf("traces %v, %v", trs, err)
	}
	if bd, err := c.Breakdown(ctx); err != nil || bd.RSSBytes == 0 || bd.GoSource != "runtime/metrics" {
		t.Errorf("breakdown %+v, %v", bd, err)
	}
}

func TestToken(t *testing.T) {
	ctx := context.Background()
	const tok = "token-0123456789abcdef"
	a, err := agent.Start(ctx, agent.WithToken(tok))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Stop(ctx)
	srv := httptest.NewServer(a.Handler())
	defer srv.Close()
	c, _ := New(srv.URL)
	if _, err := c.Info(ctx); !errors.Is(err, ErrUnauthorized) {
		t.Errorf("without the token: %v", err)
	}
	c, _ = New(srv.URL, WithToken(tok))
	if _, err := c.Info(ctx); err != nil {
		t.Errorf("with the token: %v", err)
	}
}

func TestNotAnAgent(t *testing.T) {
	ctx := context.Background()
	for name, h := range map[string]http.HandlerFunc{
		"404":       func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) },
		"html":      func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("<html>hello</html>")) },
		"otherjson": func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"agent":"someone-else"}`)) },
	} {
		srv := httptest.NewServer(h)
		c, _ := New(srv.URL)
		if _, err := c.Info(ctx); !errors.Is(err, ErrNotAgent) {
			t.Errorf("%s: %v, want ErrNotAgent", name, err)
		}
		srv.Close()
	}
	c, _ := New("127.0.0.1:1", WithTimeout(2*time.Second))
	if _, err := c.Info(ctx); err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Errorf("nothing listening: %v", err)
	}
}

func TestBodyCap(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(bytes.Repeat([]byte("x"), 2000))
	}))
	defer srv.Close()
	c, _ := New(srv.URL, WithMaxBodyBytes(1000))
	if _, err := c.Profile(context.Background(), "p"); !errors.Is(err, ErrTooLarge) {
		t.Errorf("%v, want ErrTooLarge", err)
	}
}

func TestURLs(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1:6060":                    "http://127.0.0.1:6060/debug/memdoctor/",
		"http://h:6060/":                    "http://h:6060/debug/memdoctor/",
		"http://h:6060/debug/memdoctor":     "http://h:6060/debug/memdoctor/",
		"https://h/prefix/debug/memdoctor/": "https://h/prefix/debug/memdoctor/",
		"http://h:6060/debug/pprof/":        "http://h:6060/debug/memdoctor/",
		"http://h:6060/custom/debug/pprof":  "http://h:6060/custom/debug/memdoctor/",
	} {
		u, err := AgentURL(in)
		if err != nil || u.String() != want {
			t.Errorf("AgentURL(%q) = %v, %v; want %s", in, u, err, want)
		}
	}
	for _, bad := range []string{"", "ftp://h", "http://", "http://h/debug/memdoctor/metrics", "http://h/?x=1"} {
		if _, err := AgentURL(bad); err == nil {
			t.Errorf("AgentURL(%q) accepted", bad)
		}
	}
	if !PointsAtAgent("h:1/debug/memdoctor/") || PointsAtAgent("h:1") || PointsAtAgent("h:1/debug/pprof/") {
		t.Error("PointsAtAgent")
	}
	if got := PprofURL("http://h:1/x/debug/memdoctor/"); got != "http://h:1/x/debug/pprof/" {
		t.Errorf("PprofURL = %s", got)
	}
	if got := PprofURL("http://h:1"); got != "http://h:1" {
		t.Errorf("PprofURL of a base = %s", got)
	}
}
