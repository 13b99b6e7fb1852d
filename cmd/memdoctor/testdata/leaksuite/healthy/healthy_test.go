package healthy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
)

// setUp is what TestMain prepares: the tests fail without it.
var setUp bool

func TestMain(m *testing.M) {
	setUp = true
	os.Exit(m.Run())
}

func TestOnce(t *testing.T) {
	if !setUp {
		t.Fatal("TestMain did not run")
	}
	if Name(42) != "42" {
		t.Fatal("wrong name")
	}
}

func TestPool(t *testing.T) {
	if Format("a", "b") != "ab" {
		t.Fatal("wrong format")
	}
}

var cache = &Cache{Size: 100}
var seq int

func TestBoundedCache(t *testing.T) {
	seq++
	cache.Put(strconv.Itoa(seq), make([]byte, 512))
}

func TestServerClosed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	client := srv.Client()
	defer client.CloseIdleConnections()
	resp, err := client.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

var notified atomic.Int64

func TestEndsLate(t *testing.T) {
	Notify(func() { notified.Add(1) })
}

func TestParallel(t *testing.T) {
	t.Parallel()
	for i := range 3 {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			t.Parallel()
			_ = Format("x", strconv.Itoa(i))
		})
	}
}
