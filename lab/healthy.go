package lab

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"
)

func healthy() Scenario {
	return Scenario{
		Name: "healthy",
		Story: "The control: a JSON catalogue API done right. It keeps a fixed set of 20,000 items, " +
			"encodes responses through pooled buffers, decodes request bodies as a stream with a " +
			"size limit, lists items by streaming them to the response, and replaces items in " +
			"place, so the live heap is stable, the allocation rate is modest and every request " +
			"goroutine ends. memdoctor must find nothing wrong with it.",
		Expect: Expect{
			Absent: []string{kindHeapLeak, kindGoroutineLeak, kindGCOverhead, kindRuntimeRetention,
				kindTransientSpike, kindOOMRisk, kindNonGoMemory},
			Watch:    20 * time.Second,
			Interval: 2 * time.Second,
		},
		Run: runHealthy,
	}
}

const catalogueSize = 20000

func runHealthy(ctx context.Context, env Env) error {
	cat := newCatalogue(catalogueSize)
	return serve(ctx, env, service{
		name: "healthy",
		routes: map[string]http.HandlerFunc{
			"GET /items/{id}": cat.handleGet,
			"PUT /items/{id}": cat.handlePut,
			"GET /items":      cat.handleList,
		},
		loads: []load{catalogueLoad(200)},
	})
}

type catalogueItem struct {
	ID      int      `json:"id"`
	Name    string   `json:"name"`
	Price   float64  `json:"price"`
	Stock   int      `json:"stock"`
	Tags    []string `json:"tags"`
	Updated string   `json:"updated"`
}

type catalogue struct {
	mu    sync.RWMutex
	items []catalogueItem
}

func newCatalogue(n int) *catalogue {
	c := &catalogue{items: make([]catalogueItem, n)}
	for i := range c.items {
		c.items[i] = catalogueItem{ID: i, Name: fmt.Sprintf("item %d", i), Price: float64(i%5000) / 10,
			Stock: i % 100, Tags: []string{"catalogue", "v1"}, Updated: "2024-05-01T10:00:00Z"}
	}
	return c
}

var jsonBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func (c *catalogue) id(w http.ResponseWriter, r *http.Request) (int, bool) {
	id, err := strconv.Atoi(r.PathValue("id"))
	if err != nil || id < 0 || id >= len(c.items) {
		http.NotFound(w, r)
		return 0, false
	}
	return id, true
}

func (c *catalogue) handleGet(w http.ResponseWriter, r *http.Request) {
	id, ok := c.id(w, r)
	if !ok {
		return
	}
	buf := jsonBuffers.Get().(*bytes.Buffer)
	defer jsonBuffers.Put(buf)
	buf.Reset()
	c.mu.RLock()
	err := json.NewEncoder(buf).Encode(&c.items[id])
	c.mu.RUnlock()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(buf.Bytes())
}

func (c *catalogue) handlePut(w http.ResponseWriter, r *http.Request) {
	id, ok := c.id(w, r)
	if !ok {
		return
	}
	var it catalogueItem
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10))
	if err := dec.Decode(&it); err != nil {
		http.Error(w, "decoding item: "+err.Error(), http.StatusBadRequest)
		return
	}
	it.ID = id
	c.mu.Lock()
	c.items[id] = it
	c.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// handleList streams a page of items to the response, from a copy taken
// under the lock so that no lock is held while writing to the network.
func (c *catalogue) handleList(w http.ResponseWriter, r *http.Request) {
	from, _ := strconv.Atoi(r.URL.Query().Get("from"))
	from = min(max(from, 0), len(c.items))
	to := min(from+50, len(c.items))
	c.mu.RLock()
	page := slices.Clone(c.items[from:to])
	c.mu.RUnlock()
	w.Header().Set("Content-Type", "application/x-ndjson")
	enc := json.NewEncoder(w)
	for i := range page {
		if err := enc.Encode(&page[i]); err != nil {
			return // the client went away
		}
	}
}

// catalogueLoad mixes reads, updates and listings, about perSecond
// requests a second.
func catalogueLoad(perSecond int) load {
	update := []byte(`{"name":"renamed item","price":12.5,"stock":7,"tags":["catalogue","v2"],"updated":"2024-05-02T08:00:00Z"}`)
	return load{
		workers: 2,
		every:   time.Second / time.Duration(perSecond),
		send: func(ctx context.Context, c *client, w int) error {
			n := int(c.requests.Load())
			id := strconv.Itoa(n * 7919 % catalogueSize)
			switch n % 10 {
			case 0:
				return c.send(ctx, call{method: http.MethodPut, path: "/items/" + id,
					contentType: "application/json", body: bytes.NewReader(update)})
			case 1:
				return c.send(ctx, call{method: http.MethodGet, path: "/items?from=" + id})
			default:
				return c.send(ctx, call{method: http.MethodGet, path: "/items/" + id})
			}
		},
	}
}
