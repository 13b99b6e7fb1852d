package scrape

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"os"
	"slices"
	"testing"
)

// TestCmdline reads this process's command line through its real pprof handler.
func TestCmdline(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	c, err := New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Cmdline(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, os.Args) {
		t.Errorf("cmdline %q, want %q", got, os.Args)
	}
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("<html><body>login</body></html>"))
	}))
	defer html.Close()
	c, _ = New(html.URL)
	if _, err := c.Cmdline(context.Background()); err == nil {
		t.Error("an HTML page read as a command line")
	}
}
