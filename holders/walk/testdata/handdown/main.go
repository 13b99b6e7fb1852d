// Command handdown keeps records in a field of a server whose goroutine hands the server down
// its calls: serve(s) fills s.recent, then calls s.handle, which waits there for ever, so that
// both frames hold s live whenever the process is read. memdoctor holders must name the
// records from the outermost of them, (*server).serve's s, as it does when the goroutine is in
// serve alone. It prints its pid and "ready" once handle waits.
package main

import (
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
	runtime.MemProfileRate = 4096
	ready := make(chan struct{})
	go (&server{}).serve(ready)
	<-ready
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
