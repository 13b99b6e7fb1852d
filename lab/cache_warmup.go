package lab

import (
	"container/list"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"
)

func cacheWarmup() Scenario {
	return Scenario{
		Name: "cache-warmup",
		Story: "A control: a product catalogue front end caches rendered pages (64 KiB each) in an " +
			"LRU cache bounded at 120 MiB. After a deploy the cache starts empty and fills as " +
			"traffic touches pages, so for the first half-minute the live heap climbs steeply, then " +
			"more and more slowly, and then stays flat: once the cache is full every new page " +
			"evicts the least recently used one. A trend fitted to the first half-minute looks " +
			"like a leak; it is not one, because the cache is bounded and the heap plateaus. " +
			"memdoctor must not report a heap leak; nothing needs fixing (a service that cannot " +
			"afford the cold start pre-warms its cache or sizes it to its memory budget).",
		Expect: Expect{
			Absent: []string{kindHeapLeak, kindGoroutineLeak, kindNonGoMemory, kindRuntimeRetention,
				kindOOMRisk},
			Watch:    45 * time.Second,
			Interval: 3 * time.Second,
		},
		Run: runCacheWarmup,
	}
}

const (
	pageBytes     = 64 << 10
	pageCacheCap  = 120 << 20 // 1920 pages
	catalogPages  = 2500      // pages traffic asks for, uniformly
	pageRequests  = 120       // per second: the cache is full after about 30 s
	pageCacheSeed = 42
)

func runCacheWarmup(ctx context.Context, env Env) error {
	c := newPageCache(pageCacheCap)
	const workers = 2
	rngs := make([]*rand.Rand, workers)
	for w := range rngs {
		rngs[w] = rand.New(rand.NewPCG(pageCacheSeed, uint64(w)))
	}
	return serve(ctx, env, service{
		name:   "cache-warmup",
		routes: map[string]http.HandlerFunc{"GET /products/{id}": c.handlePage},
		loads: []load{{workers: workers, every: time.Second / pageRequests, send: func(ctx context.Context, cl *client, w int) error {
			id := strconv.Itoa(rngs[w].IntN(catalogPages))
			return cl.send(ctx, call{method: http.MethodGet, path: "/products/" + id})
		}}},
	})
}

// pageCache is an LRU cache of rendered pages bounded by bytes.
type pageCache struct {
	capacity int

	mu     sync.Mutex
	bytes  int
	order  *list.List               // front: most recently used; values are *cachedPage
	byID   map[string]*list.Element // id -> element of order
	hits   int64
	misses int64
}

type cachedPage struct {
	id   string
	html []byte
}

func newPageCache(capacity int) *pageCache {
	return &pageCache{capacity: capacity, order: list.New(), byID: make(map[string]*list.Element)}
}

func (c *pageCache) handlePage(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	html := c.get(id)
	if html == nil {
		html = renderProductPage(id)
		c.put(id, html)
	}
	w.Header().Set("Content-Type", "text/html")
	w.Write(html)
}

func (c *pageCache) get(id string) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byID[id]
	if !ok {
		c.misses++
		return nil
	}
	c.hits++
	c.order.MoveToFront(e)
	return e.Value.(*cachedPage).html
}

// put stores a page, evicting the least recently used ones past capacity.
func (c *pageCache) put(id string, html []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byID[id]; ok { // rendered twice concurrently
		c.order.MoveToFront(e)
		return
	}
	c.byID[id] = c.order.PushFront(&cachedPage{id: id, html: html})
	c.bytes += cap(html)
	for c.bytes > c.capacity {
		last := c.order.Back()
		p := last.Value.(*cachedPage)
		c.order.Remove(last)
		delete(c.byID, p.id)
		c.bytes -= cap(p.html)
	}
}

// pageRows is the body every product page shares, rendered once: rendering a page copies it,
// so that the cache fills at the pace of the traffic, not of the machine's CPU (a busy machine
// that rendered each row would warm the cache for minutes instead of half of one).
var pageRows = func() []byte {
	var b []byte
	for i := 0; len(b) < pageBytes-256; i++ {
		b = fmt.Appendf(b, "<tr><td>option %d</td><td>%d</td></tr>", i, i*7)
	}
	return b
}()

// renderProductPage renders a page of pageBytes.
func renderProductPage(id string) []byte {
	html := make([]byte, 0, pageBytes)
	html = fmt.Appendf(html, "<html><head><title>Product %s</title></head><body><h1>Product %s</h1><table>", id, id)
	html = append(html, pageRows...)
	return append(html, "</table></body></html>"...)
}
