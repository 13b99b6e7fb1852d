package lab

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func nonGoMmap() Scenario {
	return Scenario{
		Name: "non-go-mmap",
		Story: "A service keeps its value cache off the Go heap, in 16 MiB slabs of anonymous " +
			"memory from syscall.Mmap, to spare the GC from scanning it (like fastcache or an " +
			"mmap-backed arena). The cache fills to 256 MiB within seconds and then recycles its " +
			"oldest slab. RSS is hundreds of MiB while the Go heap and every pprof profile show " +
			"a few MiB: the memory is invisible to runtime/metrics, and only RssAnon in " +
			"/proc/PID/status minus what the Go runtime accounts for reveals it. Nothing leaks; " +
			"the fix, if the memory is too much, is to size the cache (and to count it when " +
			"setting GOMEMLIMIT, which only bounds Go's own memory).",
		Expect: Expect{
			Kinds: []string{kindNonGoMemory},
			// Its load generator runs in the process and allocates per request.
			Allowed: []string{kindAllocationHotspot},
			// RSS far above the Go heap is memory Go never had, not memory
			// the runtime keeps.
			Absent:   []string{kindHeapLeak, kindRuntimeRetention},
			Watch:    20 * time.Second,
			Interval: 2 * time.Second,
		},
		Run: runNonGoMmap,
	}
}

const (
	offHeapSlabSize = 16 << 20
	offHeapSlabs    = 16
	offHeapValue    = 64 << 10
)

func runNonGoMmap(ctx context.Context, env Env) error {
	c := newOffHeapCache(offHeapSlabSize, offHeapSlabs)
	defer c.close()
	if _, err := c.reserve(0); err != nil { // map the first slab now, to fail early
		return fmt.Errorf("lab: non-go-mmap: %w", err)
	}
	value := bytes.Repeat([]byte("off-heap value "), offHeapValue/15)
	var puts atomic.Int64
	return serve(ctx, env, service{
		name: "non-go-mmap",
		routes: map[string]http.HandlerFunc{
			"PUT /cache/{key}": c.handlePut,
			"GET /cache/{key}": c.handleGet,
		},
		loads: []load{
			{workers: 2, every: time.Second / 400, send: func(ctx context.Context, cl *client, _ int) error {
				key := "/cache/k" + strconv.FormatInt(puts.Add(1)%100000, 10)
				return cl.send(ctx, call{method: http.MethodPut, path: key, body: bytes.NewReader(value)})
			}},
			{workers: 1, every: time.Second / 100, send: func(ctx context.Context, cl *client, _ int) error {
				n := puts.Load() - 50 // a value stored a moment ago
				if n < 1 {
					return nil
				}
				key := "/cache/k" + strconv.FormatInt(n%100000, 10)
				return cl.send(ctx, call{method: http.MethodGet, path: key})
			}},
		},
	})
}

// offHeapCache stores values in slabs of anonymous memory mapped outside the
// Go heap; a Go map indexes them.
type offHeapCache struct {
	slabSize, maxSlabs int

	mu       sync.RWMutex
	slabs    [][]byte
	slabKeys [][]string // the keys stored in each slab, to evict them with it
	cur, off int        // where the next value goes
	index    map[string]offHeapEntry
	closed   bool
}

type offHeapEntry struct {
	slab, off, n int
}

func newOffHeapCache(slabSize, maxSlabs int) *offHeapCache {
	return &offHeapCache{slabSize: slabSize, maxSlabs: maxSlabs, index: make(map[string]offHeapEntry)}
}

func (c *offHeapCache) handlePut(w http.ResponseWriter, r *http.Request) {
	n := int(r.ContentLength)
	if n <= 0 || n > c.slabSize {
		http.Error(w, fmt.Sprintf("value size %d out of range (1 to %d bytes, with Content-Length)", n, c.slabSize),
			http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	slab, err := c.reserve(n)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInsufficientStorage)
		return
	}
	if _, err := io.ReadFull(r.Body, c.slabs[slab][c.off:c.off+n]); err != nil {
		http.Error(w, "reading value: "+err.Error(), http.StatusBadRequest)
		return
	}
	key := strings.Clone(r.PathValue("key"))
	c.index[key] = offHeapEntry{slab: slab, off: c.off, n: n}
	c.slabKeys[slab] = append(c.slabKeys[slab], key)
	c.off += n
	w.WriteHeader(http.StatusNoContent)
}

// reserve makes room for n bytes at c.off in the current slab, mapping a new
// slab or recycling the oldest one when it is full.
func (c *offHeapCache) reserve(n int) (int, error) {
	if c.closed {
		return 0, errors.New("cache closed")
	}
	if len(c.slabs) > 0 && c.off+n <= c.slabSize {
		return c.cur, nil
	}
	if len(c.slabs) < c.maxSlabs {
		slab, err := mapAnon(c.slabSize)
		if err != nil {
			return 0, fmt.Errorf("mapping a cache slab: %w", err)
		}
		c.slabs = append(c.slabs, slab)
		c.slabKeys = append(c.slabKeys, nil)
		c.cur, c.off = len(c.slabs)-1, 0
		return c.cur, nil
	}
	c.cur, c.off = (c.cur+1)%len(c.slabs), 0
	for _, k := range c.slabKeys[c.cur] {
		if e, ok := c.index[k]; ok && e.slab == c.cur {
			delete(c.index, k)
		}
	}
	c.slabKeys[c.cur] = c.slabKeys[c.cur][:0]
	return c.cur, nil
}

func (c *offHeapCache) handleGet(w http.ResponseWriter, r *http.Request) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	e, ok := c.index[r.PathValue("key")]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Write(c.slabs[e.slab][e.off : e.off+e.n])
}

// close unmaps the slabs; the cache must not be used afterwards.
func (c *offHeapCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.slabs {
		unmapAnon(s)
	}
	c.slabs, c.slabKeys, c.index, c.closed = nil, nil, nil, true
}
