// Command handdown keeps records in a field of a server whose goroutine hands the server down
// its calls: serve(s) fills s.recent, then calls s.handle, which waits there for ever, so that
// both frames hold s live whenever the process is read. memdoctor holders must name the
// records from the outermost of them, (*server).serve's s, as it does when the goroutine is in
// serve alone. With -request, a younger goroutine holds the server too, in a request's frame
// that waits, and comes before serve's in the runtime's list of goroutines (it reuses the
// record of one that ended): the records must still be named from serve's, the oldest
// goroutine's. It prints its pid and "ready" once every goroutine waits.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"time"
)

type server struct {
	recent [][]byte
	served int
}

var never chan struct{} // nil: a receive waits for ever

func main() {
	request := flag.Bool("request", false, "a younger goroutine holds the server too, listed first")
	flag.Parse()
	runtime.MemProfileRate = 4096
	if *request {
		// Goroutines that end leave their records to be reused, the last ended first: serve
		// takes the latest, the request the one before it, earlier in the runtime's list.
		var done [2]chan struct{}
		for i := range done {
			done[i] = make(chan struct{})
			go close(done[i])
			<-done[i]
		}
		runtime.Gosched()
	}
	s := &server{}
	ready := make(chan struct{})
	go s.serve(ready)
	<-ready
	if *request {
		waiting := make(chan struct{})
		go s.request(waiting)
		<-waiting
	}
	fmt.Println(os.Getpid(), "ready")
	for {
		time.Sleep(time.Hour)
	}
}

//go:noinline
func (s *server) serve(ready chan struct{}) {
	for range 1000 {
		s.keep()
	}
	s.handle(ready)
	fmt.Println(len(s.recent)) // s is live in serve's frame across handle
}

// keep is the site whose records are held.
//
//go:noinline
func (s *server) keep() { s.recent = append(s.recent, make([]byte, 4096)) }

//go:noinline
func (s *server) handle(ready chan struct{}) {
	close(ready)
	<-never
	s.served++ // s is live in handle's frame across the wait
}

// request holds the server in its frame while it waits, as a request's handler does.
//
//go:noinline
func (s *server) request(waiting chan struct{}) {
	close(waiting)
	<-never
	s.served++
}
