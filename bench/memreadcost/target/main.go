// Command target is an idle Go service for bench/memreadcost: it builds a live heap of
// -heap-mib MiB from many allocation stacks (recursion depths and sizes: hundreds of
// memory-profile buckets), parks -goroutines goroutines, prints "ready PID", and then does
// nothing but wake once a second, as a service between requests. It links no profiling; it
// sets runtime.MemProfileRate to the default itself so that its heap profile is the one a
// service that links pprof would keep.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"time"
)

var heap [][]byte

//go:noinline
func alloc(depth, size int) []byte {
	if depth > 0 {
		return alloc(depth-1, size)
	}
	return make([]byte, size)
}

func main() {
	mib := flag.Int("heap-mib", 200, "live heap to build, MiB")
	goroutines := flag.Int("goroutines", 100, "goroutines parked on a channel")
	flag.Parse()
	runtime.MemProfileRate = 512 * 1024
	for i, n := 0, 0; n < *mib<<20; i++ {
		size := 1024 + (i%64)*256
		heap = append(heap, alloc(i%24, size))
		n += size
	}
	park := make(chan struct{})
	for range *goroutines {
		go func() { <-park }()
	}
	runtime.GC()
	fmt.Println("ready", os.Getpid())
	for {
		time.Sleep(time.Second)
	}
}
