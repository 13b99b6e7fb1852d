// Command holders-target builds a heap of a chosen size and number of objects for memdoctor
// holders' tests and benchmarks: records in a global map (each a small struct and its
// payload of bytes), the newest also in a goroutine's local slice; with -pointers, records
// whose payload is a slice of pointers (links, built by buildLinks), a heap the walk reads
// whole. It prints its pid when the heap is built, then writes a counter to the heartbeat
// file every 20 ms, so a test can tell that it runs. With -guard, a page of two goroutines'
// stacks cannot be read (guard_linux.go). With -untouched and -released, its heap also holds
// memory that is not resident: a buffer it never touched, and spans it used, freed and gave
// back to the system (what a reading must not make resident).
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
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
	untouched := flag.Int("untouched", 0, "`MiB` of bytes allocated and kept, never touched")
	released := flag.Int("released", 0, "`MiB` of pointers allocated, touched, freed and given back to the system")
	flag.Parse()
	if *rate > 0 {
		runtime.MemProfileRate = *rate
	}
	if *pointers {
		buildLinks(*objects/2, *size)
	} else {
		build(*objects/2, *size)
	}
	if *untouched > 0 {
		// Fresh memory from the system: the runtime knows it is zeros and does not clear it.
		neverTouched = make([]byte, *untouched<<20)
	}
	if *released > 0 {
		release(*released << 20)
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

// neverTouched is a buffer the program never touches (-untouched): the garbage collector does
// not read it either (it holds no pointers).
var neverTouched []byte

// release allocates n bytes of pointers, touches them, lets them go and gives them back to the
// system (-released).
//
//go:noinline
func release(n int) {
	b, r := make([]*record, n/8), &record{}
	for i := range b {
		b[i] = r
	}
	b = nil
	runtime.KeepAlive(b)
	debug.FreeOSMemory()
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
