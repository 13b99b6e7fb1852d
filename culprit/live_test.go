package culprit

import (
	"bytes"
	"context"
	"io"
	"net"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"
)

// This file starts goroutines in known states (blocked on channels, select,
// a mutex, a WaitGroup, network IO) so that tests can check the grouping of
// real goroutine dumps written by runtime/pprof.

const (
	testModule = "github.com/memdoctor/memdoctor"
	testPkg    = testModule + "/culprit."
	// capturedPkg is the package's path when the goroutine dumps in testdata were captured
	// (-capture): their frames name its functions by it. It was internal/culprit then; set it
	// to testPkg after a new capture.
	capturedPkg = testModule + "/internal/culprit."
)

// liveCase describes one set of goroutines started by startLive.
type liveCase struct {
	fn        string // the goroutine's own blocking function (without testPkg)
	state     string // its wait state in a debug=2 dump
	count     int
	createdBy string // creator in a debug=2 dump (without testPkg)
	blocking  string // the innermost non-runtime frame; "" = testPkg+fn
}

// liveCases are the goroutines startLive starts; counts are distinct so that
// a mix-up between groups shows.
var liveCases = []liveCase{
	{"blockRecv", "chan receive", 7, "spawnRecv", ""},
	{"blockSend", "chan send", 5, "startLive", ""},
	{"blockSelect", "select", 4, "startLive", ""},
	{"blockMutex", "sync.Mutex.Lock", 3, "startLive", "internal/sync.(*Mutex).lockSlow"},
	{"blockWaitGroup", "sync.WaitGroup.Wait", 6, "startLive", "sync.(*WaitGroup).Wait"},
	{"blockIO", "IO wait", 2, "startLive", "internal/poll.(*pollDesc).wait"},
	{"blockGeneric[...]", "chan receive", 8, "startLive", ""},
	{"blockLocked", "chan receive", 1, "startLive", ""},
	{"blockNested", "chan receive", 9, "spawnNested", ""},
	{"blockLabeled", "chan receive", 5, "startLive", ""},
}

func blockRecv(ch chan int)             { <-ch }
func blockSend(ch chan int)             { ch <- 1 }
func blockGeneric[T any](ch chan T)     { <-ch }
func blockNested(ch chan int)           { <-ch }
func blockLabeled(ch chan int)          { <-ch }
func blockWaitGroup(wg *sync.WaitGroup) { wg.Wait() }
func blockIO(c net.Conn)                { _, _ = c.Read(make([]byte, 1)) }
func blockMutex(mu *sync.Mutex)         { mu.Lock(); defer mu.Unlock() } // waits while the test holds mu

func spawnRecv(ch chan int, n int) {
	for range n {
		go blockRecv(ch)
	}
}

func spawnNested(ch chan int, n int, done chan<- struct{}) {
	for range n {
		go blockNested(ch)
	}
	close(done)
}

func blockSelect(a, b chan int) {
	select {
	case <-a:
	case <-b:
	}
}

func blockLocked(ch chan int) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	<-ch
}

// startLive starts the goroutines of liveCases plus one io.Copy goroutine
// (standard library only, created by startLive) and waits until all are
// blocked. It returns a function that starts one more blockRecv goroutine.
func startLive(t *testing.T) (more func()) {
	t.Helper()
	recv, send, gen, nested, labeled := make(chan int), make(chan int), make(chan int), make(chan int), make(chan int)
	selA, selB, locked := make(chan int), make(chan int), make(chan int)
	var mu sync.Mutex
	mu.Lock()
	var wg sync.WaitGroup
	wg.Add(1)
	conns := dialPairs(t, 3)
	t.Cleanup(func() {
		close(recv)
		close(gen)
		close(nested)
		close(labeled)
		close(selA)
		close(locked)
		for range 5 {
			<-send
		}
		mu.Unlock()
		wg.Done()
		for _, c := range conns {
			_ = c.Close()
		}
	})

	spawnRecv(recv, 7)
	for range 5 {
		go blockSend(send)
	}
	for range 4 {
		go blockSelect(selA, selB)
	}
	for range 3 {
		go blockMutex(&mu)
	}
	for range 6 {
		go blockWaitGroup(&wg)
	}
	go blockIO(conns[0])
	go blockIO(conns[1])
	for range 8 {
		go blockGeneric(gen)
	}
	go blockLocked(locked)
	done := make(chan struct{})
	go spawnNested(nested, 9, done)
	<-done
	// blockLabeled goroutines with and without pprof labels: debug=1 and
	// proto split them by label, grouping must merge them.
	for range 2 {
		go blockLabeled(labeled)
	}
	pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels("tenant", "acme")))
	for range 3 {
		go blockLabeled(labeled)
	}
	pprof.SetGoroutineLabels(context.Background())
	go io.Copy(io.Discard, conns[2]) //nolint:errcheck // ends with an error at cleanup

	waitBlocked(t, liveCases, "io.Copy", 1)
	return func() {
		spawnRecv(recv, 1)
		want := append([]liveCase(nil), liveCases...)
		want[0].count++
		waitBlocked(t, want, "io.Copy", 1)
	}
}

// dialPairs returns the server ends of n loopback TCP connections whose
// client ends never write.
func dialPairs(t *testing.T, n int) []net.Conn {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no loopback TCP: %v", err)
	}
	defer ln.Close()
	var out []net.Conn
	for range n {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatalf("dial: %v", err)
		}
		s, err := ln.Accept()
		if err != nil {
			t.Fatalf("accept: %v", err)
		}
		out = append(out, c, s)
	}
	var servers []net.Conn
	for i := 1; i < len(out); i += 2 {
		servers = append(servers, out[i])
	}
	t.Cleanup(func() {
		for _, c := range out {
			_ = c.Close()
		}
	})
	return servers
}

// waitBlocked waits until every case's goroutines are parked in their state,
// judged by a naive scan of runtime.Stack that is independent of the parser
// under test.
func waitBlocked(t *testing.T, cases []liveCase, extraFn string, extraN int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		dump := allStacks()
		ok := true
		for _, c := range cases {
			if n := countBlocked(dump, c.state, testPkg+c.fn+"("); n != c.count {
				ok = false
			}
		}
		if n := countBlocked(dump, "IO wait", extraFn+"("); n != extraN {
			ok = false
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("goroutines did not block in time; dump:\n%s", dump)
		}
		time.Sleep(time.Millisecond)
	}
}

func allStacks() string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return string(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
	}
}

func countBlocked(dump, state, marker string) int {
	n := 0
	for g := range strings.SplitSeq(dump, "\n\n") {
		header, _, _ := strings.Cut(g, "\n")
		if strings.Contains(header, "["+state) && strings.Contains(g, "\n"+marker) {
			n++
		}
	}
	return n
}

// captureGoroutines writes the goroutine profile with the given debug level.
func captureGoroutines(t testing.TB, debug int) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, debug); err != nil {
		t.Fatalf("goroutine profile debug=%d: %v", debug, err)
	}
	return buf.Bytes()
}
