// Command fakeprog stands in for a real program in the runner's tests: it serves
// net/http/pprof, leaks one goroutine per request to /leak, and writes its pid to
// $FAKEPROG_PID_FILE.
package main

import (
	"flag"
	"log"
	"net/http"
	_ "net/http/pprof"
	"os"
	"strconv"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	flag.Parse()
	if f := os.Getenv("FAKEPROG_PID_FILE"); f != "" {
		os.WriteFile(f, []byte(strconv.Itoa(os.Getpid())), 0o644)
	}
	http.HandleFunc("/leak", func(w http.ResponseWriter, r *http.Request) {
		go leak(make(chan struct{}))
	})
	log.Fatal(http.ListenAndServe(*addr, nil))
}

func leak(never chan struct{}) { <-never }
