package leaktest

import (
	"bytes"
	"container/list"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"
)

// The healthy patterns: memory and goroutines that grow to a bound, or are reused, must pass.
// bench/leaktest runs each of these 20 times on a loaded machine (docs/leaktest.md).

// lru is a bounded least-recently-used cache.
type lru struct {
	max   int
	order *list.List
	items map[string]*list.Element
}

type entry struct {
	key string
	val []byte
}

func newLRU(max int) *lru {
	return &lru{max: max, order: list.New(), items: make(map[string]*list.Element, max)}
}

func (c *lru) add(key string, val []byte) {
	if e, ok := c.items[key]; ok {
		c.order.MoveToFront(e)
		e.Value.(*entry).val = val
		return
	}
	c.items[key] = c.order.PushFront(&entry{key, val})
	if c.order.Len() > c.max {
		old := c.order.Back()
		c.order.Remove(old)
		delete(c.items, old.Value.(*entry).key)
	}
}

// A bounded LRU filled far past its size with keys never seen before.
func TestHealthyLRU(t *testing.T) {
	c := newLRU(1000)
	i := 0
	mustPass(t, loop(t, func() {
		c.add("key-"+strconv.Itoa(i), make([]byte, 100))
		i++
	}))
	if c.order.Len() != 1000 {
		t.Fatalf("the LRU holds %d entries", c.order.Len())
	}
}

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// Buffers taken from a sync.Pool, used, and put back.
func TestHealthySyncPool(t *testing.T) {
	payload := bytes.Repeat([]byte("x"), 4096)
	mustPass(t, loop(t, func() {
		b := bufPool.Get().(*bytes.Buffer)
		b.Reset()
		b.Write(payload)
		fmt.Fprintf(b, "%d", b.Len())
		bufPool.Put(b)
	}))
}

// One http.Client reused against an httptest server: its idle connections, their goroutines
// and buffers are reused call after call.
func TestHealthyHTTPClient(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello, "+r.URL.Query().Get("name"))
	}))
	defer srv.Close()
	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	i := 0
	mustPass(t, loop(t, func() {
		resp, err := client.Get(srv.URL + "/?name=" + strconv.Itoa(i))
		i++
		if err != nil {
			t.Error(err)
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}))
}

var (
	tableOnce sync.Once
	table     map[string]int
)

// lookup builds its table (about 1 MiB) on the first call only.
func lookup(key string) int {
	tableOnce.Do(func() {
		table = make(map[string]int, 20000)
		for i := range 20000 {
			table["k"+strconv.Itoa(i)] = i
		}
	})
	return table[key]
}

// Lazy initialisation with sync.Once: a step at the first call, then nothing.
func TestHealthySyncOnce(t *testing.T) {
	i := 0
	mustPass(t, loop(t, func() {
		lookup("k" + strconv.Itoa(i%20000))
		i++
	}))
}

// A cache that keeps filling for a round or two after the warm-up, then holds: a rise that
// levels off, not a leak. (Every allocation is sampled while Loop runs, so a round is a few
// thousand of these calls; 20000 entries kept filling for five rounds of seven on a loaded
// machine, a rise the contract does not promise to tell from a leak.)
func TestHealthyCacheFillsThenHolds(t *testing.T) {
	const size = 10000
	m := make(map[int][]byte)
	i := 0
	mustPass(t, loop(t, func() {
		if len(m) < size {
			m[i] = make([]byte, 32)
		} else {
			m[i%size] = m[i%size][:0]
		}
		i++
	}))
}

// A worker pool started lazily: goroutines that grow to its size, then are reused.
func TestHealthyWorkerPool(t *testing.T) {
	jobs := make(chan func())
	defer close(jobs)
	workers := 0
	var wg sync.WaitGroup
	mustPass(t, loop(t, func() {
		if workers < 8 {
			workers++
			go func() {
				for j := range jobs {
					j()
				}
			}()
		}
		wg.Add(1)
		jobs <- func() { wg.Done() }
		wg.Wait()
	}))
}

// A timer per call that fires a moment later: goroutines and memory in flight, none kept.
func TestHealthyTimers(t *testing.T) {
	var wg sync.WaitGroup
	defer wg.Wait()
	mustPass(t, loop(t, func() {
		wg.Add(1)
		time.AfterFunc(time.Millisecond, wg.Done)
	}))
}

// The healthy counterparts of the shapes of shapes_test.go.

// An informer per call, stopped: its resync loop (period zero) spins until it is.
func TestHealthyInformerStopped(t *testing.T) {
	reg := &informers{}
	defer reg.shutdown()
	mustPass(t, loop(t, func() { listOnce(reg, true) }))
}

// Hundreds of goroutines of work left behind by each call, every one of which ends.
func TestHealthyHeavyWorkLeftBehind(t *testing.T) {
	l := newLeader(300, true)
	defer close(l.quit)
	entry := make([]byte, 256)
	mustPass(t, loop(t, func() { l.propose(entry) }))
}

// A thousand goroutines per call, most still running when the call returns, none left.
func TestHealthyFanOutQuery(t *testing.T) {
	tbl := newKeyspace(1000, 0)
	defer close(tbl.quit)
	mustPass(t, loop(t, func() { tbl.query(100) }))
}
