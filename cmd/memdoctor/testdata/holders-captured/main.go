// Command holders-captured is the shape of nats-server v2.8.4's subscription leak: keys kept in a
// map of an account of a server whose signal-handling goroutine captured it.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// Server is 3104 bytes, like nats-server v2.8.4's: its size class (3200) holds one, which memdoctor
// holders must not read as an array; its signal goroutine captured it.
type Server struct {
	pad    [3000]byte
	quitCh chan struct{}
	gacc   *Account
	rest   [88]byte
}

type Account struct{ lqws map[string]int32 }

func (s *Server) Debugf(f string, a ...any) { fmt.Fprintf(os.Stderr, f, a...) }

func (s *Server) handleSignals() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGUSR1)
	go func() {
		for {
			select {
			case sig := <-c:
				s.Debugf("Trapped %q signal", sig)
			case <-s.quitCh:
				return
			}
		}
	}()
}

//go:noinline
func keyOf(i int) string { return strings.Repeat("k", 1100) + fmt.Sprint(i) }

func main() {
	runtime.MemProfileRate = 4096
	s := &Server{quitCh: make(chan struct{}), gacc: &Account{lqws: map[string]int32{}}}
	s.handleSignals()
	for i := 0; i < 20000; i++ {
		s.gacc.lqws[keyOf(i)] = 0
	}
	fmt.Println(os.Getpid(), runtime.NumGoroutine())
	s = nil
	for {
		time.Sleep(time.Hour)
	}
}
