// Package healthy holds code that uses memory and goroutines without leaking: a sync.Once, a
// sync.Pool, a cache that fills to a bound, an HTTP server that is closed, a goroutine that
// ends late but ends.
package healthy

import (
	"bytes"
	"container/list"
	"strconv"
	"sync"
	"time"
)

var (
	once  sync.Once
	table map[int]string
)

// Name looks a number up in a table made once.
func Name(n int) string {
	once.Do(func() {
		table = map[int]string{}
		for i := range 10000 {
			table[i] = strconv.Itoa(i)
		}
	})
	return table[n%10000]
}

var buffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// Format formats with a pooled buffer.
func Format(parts ...string) string {
	b := buffers.Get().(*bytes.Buffer)
	defer buffers.Put(b)
	b.Reset()
	for _, p := range parts {
		b.WriteString(p)
	}
	return b.String()
}

// Cache keeps the last Size values it was given.
type Cache struct {
	mu    sync.Mutex
	Size  int
	order *list.List
	items map[string]*list.Element
}

type entry struct {
	key string
	val []byte
}

// Put adds a value, evicting the oldest past Size.
func (c *Cache) Put(key string, val []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.items == nil {
		c.order, c.items = list.New(), map[string]*list.Element{}
	}
	if e, ok := c.items[key]; ok {
		c.order.MoveToFront(e)
		e.Value.(*entry).val = val
		return
	}
	c.items[key] = c.order.PushFront(&entry{key, val})
	if c.order.Len() > c.Size {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.items, last.Value.(*entry).key)
	}
}

// Notify tells a listener in the background, which takes its time and ends.
func Notify(done func()) {
	go func() {
		time.Sleep(20 * time.Millisecond)
		done()
	}()
}
