package agentclient

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestJSONCapped: an agent answering a listing with megabytes of JSON is refused before
// the decoder makes several times as much of it.
func TestJSONCapped(t *testing.T) {
	item := `{"name":"heap-20261122T064512.345Z.pb.gz","kind":"heap","time":"2026-11-22T06:45:12Z","label":"","size":1},`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("["))
		for n := 0; n < 9<<20; n += len(item) {
			w.Write([]byte(item))
		}
		w.Write([]byte(`{}]`))
	}))
	defer srv.Close()
	c, err := New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Profiles(context.Background()); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "8388608") {
		t.Errorf("a 9 MiB listing: %v, want ErrTooLarge", err)
	}
}
