//go:build linux

package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"strings"
	"time"

	"github.com/memdoctor/memdoctor/agent/wire"
	"github.com/memdoctor/memdoctor/session"
)

// pprofServer serves net/http/pprof's index and a hostile heap profile (heap), a valid
// goroutine profile, and goroutine?debug=1 text of textBytes (chunked, no Content-Length).
func pprofServer(heap, goroutine []byte, textBytes int) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/heap", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("debug") == "1" {
			io.WriteString(w, "heap profile: 0: 0 [0: 0] @ heap/1048576\n\n# runtime.MemStats\n# Alloc = 1048576\n# TotalAlloc = 1048576\n# Sys = 8388608\n# HeapAlloc = 1048576\n# HeapSys = 4194304\n# HeapIdle = 1048576\n# HeapInuse = 2097152\n# HeapReleased = 0\n# NumGC = 1\n")
			return
		}
		chunked(w, heap)
	})
	mux.HandleFunc("/debug/pprof/goroutine", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("debug") == "1" {
			w.(http.Flusher).Flush() // no Content-Length
			io.WriteString(w, "goroutine profile: total 1\n")
			line := []byte("1 @ 0x401000 0x402000 0x403000\n#\t0x401000\tmain.f+0x10\t/src/main.go:10\n")
			for n := 0; n < textBytes; n += len(line) {
				if _, err := w.Write(line); err != nil {
					return
				}
			}
			return
		}
		chunked(w, goroutine)
	})
	return httptest.NewServer(mux)
}

// chunked writes b without a Content-Length, as net/http/pprof does for large profiles.
func chunked(w http.ResponseWriter, b []byte) {
	w.Header().Set("Content-Type", "application/octet-stream")
	w.(http.Flusher).Flush()
	for len(b) > 0 {
		n := min(len(b), 1<<20)
		if _, err := w.Write(b[:n]); err != nil {
			return
		}
		b = b[n:]
	}
}

// agentServer poses as a memdoctor agent that lists one heap profile whose body is prof.
func agentServer(prof []byte) *httptest.Server {
	t0 := time.Now().UTC().Add(-time.Minute).Truncate(time.Millisecond)
	name := session.ProfileFileName(session.KindHeap, t0, "")
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		enc := json.NewEncoder(w)
		switch rest := strings.TrimPrefix(r.URL.Path, "/debug/memdoctor/"); rest {
		case "":
			enc.Encode(wire.Info{Agent: "memdoctor", Version: wire.Version, GoVersion: "go1.26.0", Start: t0})
		case "metrics":
			enc.Encode(session.Sample{Time: time.Now().UTC(), Go: &session.GoMem{Source: "runtime/metrics", HeapObjectsBytes: 1 << 20}})
		case "profiles":
			enc.Encode([]wire.ProfileInfo{{Name: name, Kind: session.KindHeap, Time: t0, Size: len(prof)}})
		case "traces", "events":
			io.WriteString(w, "[]")
		case "profiles/" + name:
			chunked(w, prof)
		default:
			w.Header().Set("X-Memdoctor-Agent", "1")
			http.Error(w, `{"error":"not found"}`, http.StatusNotFound)
		}
	}))
}
