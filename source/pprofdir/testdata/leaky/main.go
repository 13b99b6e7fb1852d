// Command leaky is a small service with a memory problem on demand, serving net/http/pprof on
// loopback: the program the tests of package pprofdir recorded their folders of profiles
// from (see ../record.sh). It prints its pprof URL on its first line.
//
//	leaky -mode heap -leak 3MiB/s      a cache that only grows (main.(*store).remember), plus
//	                                   request garbage from a regexp compiled per call
//	leaky -mode goroutine -leak 20/s   a fan-out whose late senders block for ever on an
//	                                   unbuffered channel (main.backend)
//	leaky -mode healthy                the request garbage alone: a steady heap
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"regexp"
	"strconv"
	"sync"
	"time"
)

func main() {
	mode := flag.String("mode", "heap", "heap, goroutine or healthy")
	leak := flag.Float64("leak", 0, "what leaks per second: bytes (heap) or goroutines (goroutine)")
	base := flag.Int("base", 8<<20, "bytes held from the start (a steady table)")
	churn := flag.Int("churn", 200, "requests per second, each leaving garbage")
	flag.Parse()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("leaky serving http://%s/debug/pprof/\n", ln.Addr())
	os.Stdout.Sync()
	table = makeTable(*base)
	go requests(*churn)
	switch *mode {
	case "heap":
		go leakHeap(*leak)
	case "goroutine":
		go leakGoroutines(*leak)
	case "healthy":
	default:
		log.Fatalf("unknown mode %q", *mode)
	}
	log.Fatal(http.Serve(ln, nil))
}

var table [][]byte

// makeTable is the steady live heap.
func makeTable(n int) [][]byte {
	var t [][]byte
	for ; n > 0; n -= 64 << 10 {
		t = append(t, make([]byte, 64<<10))
	}
	return t
}

// requests makes the request garbage: a regexp compiled per call, and a response built.
func requests(perSecond int) {
	if perSecond <= 0 {
		return
	}
	tick := time.NewTicker(time.Second / time.Duration(perSecond))
	for i := 0; ; i++ {
		<-tick.C
		sink = handle("order-" + strconv.Itoa(i))
	}
}

var sink []byte

func handle(id string) []byte {
	if !validate(id) {
		return nil
	}
	out := make([]byte, 0, 4096)
	for j := 0; j < 64; j++ {
		out = append(out, id...)
	}
	return out
}

// validate compiles its pattern on every call: the known anti-pattern.
func validate(id string) bool {
	return regexp.MustCompile(`^order-[0-9]+$`).MatchString(id)
}

// store is a cache that is never evicted.
type store struct {
	mu   sync.Mutex
	byID map[int][]byte
}

// remember keeps a copy of the response: nothing ever deletes it.
func (s *store) remember(id int, v []byte) {
	c := append([]byte(nil), v...)
	s.mu.Lock()
	s.byID[id] = c
	s.mu.Unlock()
}

func leakHeap(bytesPerSecond float64) {
	s := &store{byID: map[int][]byte{}}
	const chunk = 32 << 10
	every := time.Duration(float64(time.Second) * chunk / bytesPerSecond)
	tick := time.NewTicker(every)
	response := make([]byte, chunk)
	for i := 0; ; i++ {
		<-tick.C
		s.remember(i, response)
	}
}

func leakGoroutines(perSecond float64) {
	tick := time.NewTicker(time.Duration(float64(time.Second) / perSecond))
	for {
		<-tick.C
		query()
	}
}

// query fans out to two backends and takes the first answer: the other's goroutine blocks
// for ever on its send, on a channel nothing else can reach (what Go 1.27's goroutineleak
// profile proves; a closure capturing the channel is not reported by go1.27.0).
func query() string {
	answers := make(chan string)
	for _, b := range []string{"a", "b"} {
		go backend(answers, b)
	}
	return <-answers
}

// backend answers a query.
func backend(answers chan<- string, name string) {
	answers <- name
}
