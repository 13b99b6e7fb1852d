package lab

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Holder scenarios whose leak is held where types hide: behind an interface-typed package
// variable, in a static the compiler made for a package-level composite literal, and in the
// runtime's generic containers. Each path must name every field from the root to the record.

// --- a metrics registry behind an interface ---

// holderCollector and holderRegisterer mirror a metrics library's Collector and Registerer:
// the registry keeps its collectors as interface values, and the package exposes it as an
// interface.
type holderCollector interface{ describe() string }

type holderRegisterer interface {
	counterVec(name string) *holderCounterVec
}

type holderRegistry struct {
	mu         sync.Mutex
	collectors map[string]holderCollector
}

// counterVec returns the vector registered under name, registering a new one the first time
// (a get-or-register API: the caller keeps no reference of its own).
func (r *holderRegistry) counterVec(name string) *holderCounterVec {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.collectors[name].(*holderCounterVec); ok {
		return c
	}
	v := &holderCounterVec{name: name, series: map[string]*holderSeries{}}
	r.collectors[name] = v
	return v
}

// holderCounterVec keeps one series per label value, for ever: a counter labelled by the
// request's path grows with every path ever requested.
type holderCounterVec struct {
	name   string
	mu     sync.Mutex
	series map[string]*holderSeries
}

type holderSeries struct {
	label   string
	count   uint64
	buckets []byte // a histogram's buckets, a record's worth
}

func (v *holderCounterVec) describe() string { return v.name }

//go:noinline
func newHolderRegistry() *holderRegistry {
	return &holderRegistry{collectors: map[string]holderCollector{}}
}

var holderDefaultRegisterer holderRegisterer = newHolderRegistry()

func holderInterfaceRegistry() Scenario {
	return holderScenario("holder-interface-registry",
		"A counter vector labelled by the request's path is registered in the default metrics registry, an interface-typed package variable: every path ever requested keeps its series for ever.",
		HolderExpect{Site: labPkg + ".(*holderCounterVec).with", Root: "global",
			Path: labPkg + ".holderDefaultRegisterer.(*" + labPkg + ".holderRegistry).collectors[value].(*" + labPkg + ".holderCounterVec).series[value].buckets",
			Cut:  labPkg + ".holderDefaultRegisterer.(*" + labPkg + ".holderRegistry).collectors[value].(*" + labPkg + ".holderCounterVec).series"},
		func(ctx context.Context, env Env) error {
			i := 0
			return leakEvery(ctx, env, "holder-interface-registry", "a metrics registry behind an interface", func() {
				i++
				holderDefaultRegisterer.counterVec("http_requests_total").with(fmt.Sprintf("/users/%d", i)).count++
			})
		})
}

//go:noinline
func (v *holderCounterVec) with(label string) *holderSeries {
	v.mu.Lock()
	defer v.mu.Unlock()
	s := v.series[label]
	if s == nil {
		s = &holderSeries{label: label, buckets: make([]byte, holderRecord)}
		v.series[label] = s
	}
	return s
}

// --- a struct embedded by value in a static ---

type holderShelf struct {
	mu    sync.Mutex
	books map[int]*holderBook
}

type holderBook struct {
	id    int
	pages []byte
}

// holderCatalog embeds its shelf by value.
type holderCatalog struct {
	name string
	holderShelf
}

// holderIndex points at a holderCatalog the compiler lays out in the data segment (a static
// temporary with no name of its own): the catalog's map is a root word no variable names.
var holderIndex = &holderCatalog{name: "books"}

func holderStaticStruct() Scenario {
	return holderScenario("holder-static-struct",
		"A catalog declared as a package-level pointer to a composite literal (the compiler lays the struct out in the data segment) keeps every book in the map of a shelf it embeds by value, and never evicts one.",
		HolderExpect{Site: labPkg + ".shelveBook", Root: "global",
			Path: labPkg + ".holderIndex.holderShelf.books[value].pages",
			Cut:  labPkg + ".holderIndex.holderShelf.books"},
		func(ctx context.Context, env Env) error {
			i := 0
			return leakEvery(ctx, env, "holder-static-struct", "a map in a static struct", func() { i++; shelveBook(i) })
		})
}

//go:noinline
func shelveBook(i int) {
	s := &holderIndex.holderShelf
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.books == nil {
		s.books = map[int]*holderBook{}
	}
	s.books[i] = &holderBook{id: i, pages: make([]byte, holderRecord)}
}

// --- generic containers: a sync.Map of tenants, an atomic.Pointer to a generic cache ---

// holderCache is a generic cache with no eviction.
type holderCache[K comparable, V any] struct {
	mu    sync.Mutex
	items map[K]*holderCacheEntry[V]
}

type holderCacheEntry[V any] struct {
	value  V
	stored time.Time
}

func (c *holderCache[K, V]) put(k K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.items[k] = &holderCacheEntry[V]{value: v, stored: time.Now()}
}

// holderTenant swaps its cache atomically (a reload would); the cache is never swapped.
type holderTenant struct {
	name  string
	pages atomic.Pointer[holderCache[string, []byte]]
}

var holderTenants sync.Map // tenant name -> *holderTenant

func holderGenericCache() Scenario {
	return holderScenario("holder-generic-cache",
		"Each tenant's rendered pages go in a generic cache reached through an atomic.Pointer, and the tenants live in a sync.Map: the cache never evicts a page.",
		HolderExpect{Site: labPkg + ".renderPage", Root: "global",
			Path: labPkg + ".holderTenants[value].(*" + labPkg + ".holderTenant).pages.v.items[value].value",
			Cut:  labPkg + ".holderTenants[value].(*" + labPkg + ".holderTenant).pages.v.items"},
		func(ctx context.Context, env Env) error {
			t := &holderTenant{name: "acme"}
			t.pages.Store(&holderCache[string, []byte]{items: map[string]*holderCacheEntry[[]byte]{}})
			holderTenants.Store(t.name, t)
			i := 0
			return leakEvery(ctx, env, "holder-generic-cache", "a generic cache behind an atomic.Pointer in a sync.Map", func() {
				i++
				v, _ := holderTenants.Load("acme")
				tenant := v.(*holderTenant)
				tenant.pages.Load().put(fmt.Sprintf("/page/%d", i), renderPage())
			})
		})
}

//go:noinline
func renderPage() []byte { return make([]byte, holderRecord) }
