// Command holders-target builds a heap of a chosen size and number of objects for memdoctor
// holders' tests and benchmarks: records in a global map (each a small struct and its
// payload of bytes), the newest also in a goroutine's local slice; with -pointers, records
// whose payload is a slice of pointers (links, built by buildLinks), a heap the walk reads
// whole. It prints its pid when the heap is built, then writes a counter to the heartbeat
// file every 20 ms, so a test can tell that it runs. With -guard, a page of two goroutines'
// stacks cannot be read (guard_linux.go).
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"time"
)

type record struct {
	id      int
	payload []byte
}

var registry = map[int]*record{}

// linked is a record whose payload is pointers (-pointers): memory the walk reads whole.
type linked struct {
	id   int
	refs []*linked
}

var links = map[int]*linked{}

func main() {
	objects := flag.Int("objects", 100000, "objects to build (a record and its payload are two)")
	size := flag.Int("size", 64, "bytes of each payload")
	rate := flag.Int("rate", 0, "runtime.MemProfileRate (0: the default)")
	heartbeat := flag.String("heartbeat", "", "a `FILE` to write a counter to every 20 ms")
	pointers := flag.Bool("pointers", false, "payloads of pointers (into links) rather than bytes")
	guard := flag.Bool("guard", false, "make a page of two goroutines' stacks unreadable (say which on the ready line), the GC off")
	flag.Parse()
	if *rate > 0 {
		runtime.MemProfileRate = *rate
	}
	if *pointers {
		buildLinks(*objects/2, *size)
	} else {
		build(*objects/2, *size)
	}
	recent := make(chan []*record)
	go keepRecent(recent)
	recent <- []*record{registry[0], registry[1]} // nil with -pointers
	if *guard {
		fmt.Println(os.Getpid(), "ready", guardStacks())
	} else {
		fmt.Println(os.Getpid(), "ready")
	}
	for n := 0; ; n++ {
		if *heartbeat != "" {
			os.WriteFile(*heartbeat, []byte(strconv.Itoa(n)), 0o600)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// build fills the registry: the site holders names.
//
//go:noinline
func build(n, size int) {
	for i := range n {
		registry[i] = &record{id: i, payload: make([]byte, size)}
	}
}

// buildLinks fills links, each payload a slice of pointers to the one before.
//
//go:noinline
func buildLinks(n, size int) {
	var prev *linked
	for i := range n {
		l := &linked{id: i, refs: make([]*linked, max(size/8, 1))}
		l.refs[0] = prev
		links[i], prev = l, l
	}
}

// keepRecent holds the records it is sent in a local slice, for ever.
func keepRecent(in chan []*record) {
	var kept []*record
	for rs := range in {
		kept = append(kept, rs...)
	}
	runtime.KeepAlive(kept)
}
