package recorder

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/session"
)

// pprofMux serves the real net/http/pprof handlers of this test process.
func pprofMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline) // who the service is
	return mux
}

func openSession(t *testing.T, dir string) *session.Session {
	t.Helper()
	s, err := session.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// blockGoroutines starts n goroutines that block until the test ends.
func blockGoroutines(t *testing.T, n int) {
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	for range n {
		go func() { <-stop }()
	}
}

// TestWatchRecordsIndexCounts watches this test process through its real pprof handlers:
// every sample carries the index's counts, beside the /proc figures of the same instant,
// and the goroutineleak count says the profile is not served (this runtime has none), so
// no goroutineleak fetch is made.
func TestWatchRecordsIndexCounts(t *testing.T) {
	blockGoroutines(t, 300)
	var leakHits atomic.Int64
	mux := pprofMux()
	mux.Handle("/debug/pprof/goroutineleak", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leakHits.Add(1)
		http.NotFound(w, r)
	}))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	cfg := watchConfig(t)
	cfg.Duration = 3 * time.Second
	if _, err := Watch(context.Background(), cfg, srv.URL); err != nil {
		t.Fatal(err)
	}
	s := openSession(t, cfg.Out)
	var counted, withProc int
	for _, smp := range samplesOf(t, s) {
		if smp.Pprof == nil {
			continue
		}
		counted++
		if smp.Proc != nil {
			withProc++
		}
		if smp.Pprof.Goroutines < 300 || smp.Pprof.GoroutineLeak != -1 || smp.Pprof.Threads == 0 {
			t.Errorf("counts %+v: want at least 300 goroutines, goroutineleak -1 (not served), threads", *smp.Pprof)
		}
	}
	// 3 s at 200 ms: 15 samples when nothing is late; a loaded machine makes fewer.
	if counted < 2 || withProc == 0 {
		t.Errorf("%d samples with index counts, %d of them with /proc beside; want at least 2, and /proc (notes %q)", counted, withProc, s.Manifest.Notes)
	}
	if n := leakHits.Load(); n != 0 || len(s.ProfilesOf(session.KindGoroutineLeak, false)) != 0 {
		t.Errorf("%d goroutineleak request(s) though the index does not list it", n)
	}
}

// TestIndexUnreadable: a pprof index page without counts (a proxy's own page, say) costs the
// samples their counts, and the manifest says so; the goroutine counts still reach the
// session, in the MemStats samples, from the goroutine profiles.
func TestIndexUnreadable(t *testing.T) {
	blockGoroutines(t, 200)
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/debug/pprof/" {
			pprof.Index(w, r)
			return
		}
		fmt.Fprint(w, `<html><a href="heap?debug=1">heap</a> <a href="goroutine?debug=1">goroutine</a></html>`)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	cfg := watchConfig(t)
	cfg.Interval = 400 * time.Millisecond
	if _, err := Watch(context.Background(), cfg, srv.URL); err != nil {
		t.Fatal(err)
	}
	s := openSession(t, cfg.Out)
	goSamples, counted := 0, 0
	for _, smp := range samplesOf(t, s) {
		if smp.Pprof != nil {
			t.Fatalf("counts from a page without any: %+v", *smp.Pprof)
		}
		if smp.Go != nil {
			goSamples++
			// 0 is "not known yet" (a MemStats read before the first goroutine profile).
			if n := smp.Go.Goroutines; n > 0 && n < 200 {
				t.Errorf("MemStats sample with %d goroutines; want the goroutine profile's count, at least 200", n)
			} else if n >= 200 {
				counted++
			}
		}
	}
	if goSamples == 0 || counted == 0 {
		t.Errorf("%d MemStats samples, %d with the goroutine profile's count; want some of each", goSamples, counted)
	}
	if !hasNote(s, "the pprof index page (per-second goroutine counts) could not be read") {
		t.Errorf("no note of the failed index reads: %q", s.Manifest.Notes)
	}
}

func hasNote(s *session.Session, prefix string) bool {
	for _, n := range s.Manifest.Notes {
		if strings.HasPrefix(n, prefix) {
			return true
		}
	}
	return false
}

// fakeLeakTarget serves the real pprof handlers, an index that lists a goroutineleak count
// (or not), and the real Go 1.27 goroutineleak profile in testdata, counting its requests.
func fakeLeakTarget(t *testing.T, listLeak bool, status int) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	profile, err := os.ReadFile("testdata/goroutineleak_go1.27.pb.gz")
	if err != nil {
		t.Fatal(err)
	}
	var hits atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/debug/pprof/" {
			pprof.Index(w, r)
			return
		}
		rec := httptest.NewRecorder()
		pprof.Index(rec, r)
		page := rec.Body.String()
		if listLeak {
			page = strings.Replace(page, "<tr><td>", "<tr><td>7</td><td><a href='goroutineleak?debug=1'>goroutineleak</a></td></tr>\n<tr><td>", 1)
		}
		fmt.Fprint(w, page)
	})
	mux.HandleFunc("/debug/pprof/goroutineleak", func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if status != http.StatusOK {
			http.Error(w, "Unknown profile", status)
			return
		}
		w.Write(profile)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, &hits
}

// TestLeakFetchPolicy: a target that lists goroutineleak gets one fetch at the start (the
// next is minutes away), stored as a goroutineleak profile and noted as a forced GC; one that
// answers 404 is asked once; --leak-check-every 0 never asks.
func TestLeakFetchPolicy(t *testing.T) {
	for _, tc := range []struct {
		name      string
		every     time.Duration
		status    int
		wantHits  int64
		wantSaved int
	}{
		{"served", 0, http.StatusOK, 1, 1},
		{"404", 0, http.StatusNotFound, 1, 0},
		{"off", -1, http.StatusOK, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, hits := fakeLeakTarget(t, true, tc.status)
			cfg := watchConfig(t)
			cfg.LeakCheckEvery = tc.every
			cfg.leakCostShare = -1 // the target is this test process: its heap is whatever the tests before left
			if _, err := Watch(context.Background(), cfg, srv.URL); err != nil {
				t.Fatal(err)
			}
			s := openSession(t, cfg.Out)
			leaks := s.ProfilesOf(session.KindGoroutineLeak, false)
			if hits.Load() != tc.wantHits || len(leaks) != tc.wantSaved {
				t.Errorf("%d request(s), %d profile(s) stored; want %d and %d", hits.Load(), len(leaks), tc.wantHits, tc.wantSaved)
			}
			noted := hasNote(s, "fetched the goroutineleak profile 1 time(s) (0 failed); each fetch ran one forced GC cycle")
			if noted != (tc.wantSaved == 1) {
				t.Errorf("note of the forced GC: %v; notes %q", noted, s.Manifest.Notes)
			}
			if tc.wantSaved == 1 {
				if b, err := os.ReadFile(leaks[0].Path); err != nil || len(b) == 0 {
					t.Errorf("stored profile: %d bytes, %v", len(b), err)
				}
				for _, smp := range samplesOf(t, s) {
					if smp.Pprof != nil && smp.Pprof.GoroutineLeak != 7 {
						t.Errorf("goroutineleak count %d, want the index's 7", smp.Pprof.GoroutineLeak)
					}
				}
			}
		})
	}
}
