// Command profcycle is the live program collect/memread's tests read while its runtime moves
// heap-profile counts from one cycle to the next (src/runtime/mprof.go): it samples every
// allocation (runtime.MemProfileRate 1) once told to, and allocates from known sites on
// command. It prints "ready PID GOROUTINES -" and then obeys stdin, one command a line, answering each:
//
//	enable         sample every allocation from now on ("done")
//	alloc a|b N    retain N more 64-byte objects from main.siteA or main.siteB ("done")
//	gc             allocate garbage until the GC runs once by itself (GOGC 100 for as long),
//	               not runtime.GC, whose sweep publishes the profile at once ("done")
//	race S P       allocate from main.site through S different stacks (each a bucket of its
//	               own), keeping the last 4096 objects, while another goroutine runs
//	               runtime.GC and then sleeps P microseconds, over and over ("done" at once)
//	stop           end the race and run two GCs ("done")
//	memprofile     say what runtime.MemProfile reports, allocations and frees, for
//	               main.siteA, main.siteB and main.site: "memprofile A F A F A F"
//
// Its GC is off (GOGC=off) but for those commands. It exits 0 at the end of stdin.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/bits"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

var (
	retained = make([][]byte, 0, 1<<16) // siteA and siteB's appends allocate nothing more
	ring     [4096]*[64]byte
	garbage  []byte
)

//go:noinline
func siteA(n int) {
	for range n {
		retained = append(retained, make([]byte, 64))
	}
}

//go:noinline
func siteB(n int) {
	for range n {
		retained = append(retained, make([]byte, 64))
	}
}

// site allocates one object, kept in the ring until 4096 more have been.
//
//go:noinline
func site(i int) { ring[i%len(ring)] = new([64]byte) }

// deep calls site through n levels of left and right, as the low n bits of path say: each
// path is a stack, and so a bucket, of its own.
//
//go:noinline
func deep(path, n, i int) {
	switch {
	case n == 0:
		site(i)
	case path&1 == 0:
		left(path>>1, n-1, i)
	default:
		right(path>>1, n-1, i)
	}
}

//go:noinline
func left(path, n, i int) { deep(path, n, i) }

//go:noinline
func right(path, n, i int) { deep(path, n, i) }

//go:noinline
func churn() { garbage = make([]byte, 256<<10) }

// gcs is how many GC cycles have completed.
func gcs() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// memProfile sums what runtime.MemProfile reports for the buckets of each leaf function.
func memProfile() map[string][2]int64 {
	var recs []runtime.MemProfileRecord
	for {
		n, ok := runtime.MemProfile(recs, true)
		if ok {
			recs = recs[:n]
			break
		}
		recs = make([]runtime.MemProfileRecord, n+64)
	}
	out := map[string][2]int64{}
	for _, r := range recs {
		fn := leaf(r.Stack())
		out[fn] = [2]int64{out[fn][0] + r.AllocObjects, out[fn][1] + r.FreeObjects}
	}
	return out
}

// leaf is the innermost function of a stack that is not the runtime's, as runtime/pprof's
// heap profile shows it: the runtime's own frames at the top of a stack are left out.
func leaf(stk []uintptr) string {
	frames := runtime.CallersFrames(stk)
	for {
		f, more := frames.Next()
		if !strings.HasPrefix(f.Function, "runtime.") && !strings.HasPrefix(f.Function, "internal/runtime/") {
			return f.Function
		}
		if !more {
			return ""
		}
	}
}

func main() {
	flag.Parse()
	runtime.MemProfileRate = 0
	debug.SetGCPercent(-1)
	fmt.Println("ready", os.Getpid(), runtime.NumGoroutine(), "-")
	var (
		stop atomic.Bool
		wg   sync.WaitGroup
	)
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		arg := func(i int) int {
			if i >= len(f) {
				return 0
			}
			n, _ := strconv.Atoi(f[i])
			return n
		}
		switch f[0] {
		case "enable":
			runtime.MemProfileRate = 1
			fmt.Println("done")
		case "alloc":
			if len(f) > 1 && f[1] == "b" {
				siteB(arg(2))
			} else {
				siteA(arg(2))
			}
			fmt.Println("done")
		case "gc":
			debug.SetGCPercent(100)
			for n := gcs(); gcs() == n; {
				churn()
			}
			debug.SetGCPercent(-1) // and waits for the cycle's mark to end
			fmt.Println("done")
		case "race":
			paths, pause := max(arg(1), 1), time.Duration(arg(2))*time.Microsecond
			levels := bits.Len(uint(paths - 1))
			stop.Store(false)
			wg.Add(2)
			go func() {
				defer wg.Done()
				for i := 0; !stop.Load(); i++ {
					deep(i%paths, levels, i)
				}
			}()
			go func() {
				defer wg.Done()
				for !stop.Load() {
					runtime.GC()
					time.Sleep(pause)
				}
			}()
			fmt.Println("done")
		case "stop":
			stop.Store(true)
			wg.Wait()
			runtime.GC()
			runtime.GC()
			fmt.Println("done")
		case "memprofile":
			m := memProfile()
			fmt.Println("memprofile", m["main.siteA"][0], m["main.siteA"][1], m["main.siteB"][0], m["main.siteB"][1], m["main.site"][0], m["main.site"][1])
		default:
			fmt.Println("unknown command", f[0])
		}
	}
}
