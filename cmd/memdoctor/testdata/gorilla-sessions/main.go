// Command gorilla-sessions is a web server with the memory leak gorilla/sessions v1.1.x is
// known for: it keeps each request's session registry in gorilla/context's global map
// (context.data, keyed by *http.Request), which only context.Clear or
// context.ClearHandler empties. This handler calls store.Get per request and never clears,
// as so many programs did: every request it served stays in the map, with its registry and
// its session.
//
// It listens on 127.0.0.1 (port 0 unless -addr says), prints the address on its first line,
// and serves / (a visit counter in a cookie session). The memdoctor tests drive it and read
// its holders.
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"runtime"

	"github.com/gorilla/sessions"
)

var store = sessions.NewCookieStore([]byte("memdoctor-gorilla-sessions-test!"))

func visit(w http.ResponseWriter, r *http.Request) {
	// The leak: store.Get registers the session in gorilla/context's map under r, and
	// nothing calls context.Clear(r) after the request.
	s, err := store.Get(r, "visits")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	n, _ := s.Values["n"].(int)
	s.Values["n"] = n + 1
	if err := s.Save(r, w); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	fmt.Fprintf(w, "visit %d\n", n+1)
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	// The heap profile's sampling rate: every sampled object is one memdoctor holders can
	// name a path to. The default (512 KiB) samples a few of the small objects each request
	// leaks; the tests want enough of them to judge in a few thousand requests.
	rate := flag.Int("memprofilerate", 4096, "runtime.MemProfileRate")
	flag.Parse()
	runtime.MemProfileRate = *rate
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Fprintln(os.Stdout, l.Addr())
	log.Fatal(http.Serve(l, http.HandlerFunc(visit)))
}
