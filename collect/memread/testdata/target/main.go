// Command target is the live program collect/memread's tests read: it retains objects from a
// known site (one with a call inlined into it), churns garbage from another, parks goroutines
// on a channel (three of them started with an argument), spins in others (-spin), runs two GCs so that its heap profile is published, prints "ready PID
// GOROUTINES [PPROF-ADDR]", and then allocates nothing until told to on stdin ("alloc N":
// retain N more objects from main.later, then two GCs, then "done"). It exits 0 at the end
// of stdin. Built with -tags withpprof it serves net/http/pprof on a loopback port; without,
// it links no profiling at all (runtime.MemProfileRate starts at 0).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

var (
	retained [][]byte
	sink     []byte
	park     = make(chan struct{})
)

// newBuf is inlined into its callers: their heap-profile stacks hold two logical frames in
// one physical one.
func newBuf(n int) []byte { return make([]byte, n) }

//go:noinline
func retain(n int) {
	for range n {
		retained = append(retained, newBuf(4096))
	}
}

//go:noinline
func churn(n int) {
	for range n {
		sink = make([]byte, 32<<10)
	}
	sink = nil
}

//go:noinline
func later(n int) {
	for range n {
		retained = append(retained, make([]byte, 8192))
	}
}

//go:noinline
func parked() { <-park }

// parkedOn is started with an argument: the compiler wraps the go statement's call in a
// function of its own (main.main.gowrap1), which the runtime's stacks leave out.
//
//go:noinline
func parkedOn(c chan struct{}) { <-c }

// spin never blocks: a goroutine that is running or runnable whenever it is looked at.
//
//go:noinline
func spin() {
	for {
		select {
		case <-park:
			return
		default:
		}
	}
}

func main() {
	nRetain := flag.Int("retain", 2000, "objects of 4 KiB to retain")
	nChurn := flag.Int("churn", 2000, "objects of 32 KiB to allocate and drop")
	nParked := flag.Int("parked", 10, "goroutines to park")
	nSpin := flag.Int("spin", 0, "goroutines that spin")
	linger := flag.Duration("linger", 0, "run this long more once stdin ends (a program started with no input)")
	flag.Parse()
	addr := servePprof()
	for range *nParked {
		go parked()
	}
	for range 3 {
		go parkedOn(park)
	}
	retain(*nRetain)
	churn(*nChurn)
	runtime.GC()
	runtime.GC()
	for range *nSpin {
		go spin()
	}
	fmt.Println("ready", os.Getpid(), runtime.NumGoroutine(), addr)
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		if n, ok := strings.CutPrefix(sc.Text(), "alloc "); ok {
			k, _ := strconv.Atoi(n)
			later(k)
			runtime.GC()
			runtime.GC()
			fmt.Println("done")
		}
	}
	time.Sleep(*linger)
}
