package process

import (
	"sync"

	"github.com/go-delve/delve/pkg/proc"
)

// pageCache keeps the pages Delve reads while the process is stopped: listing goroutines and
// unwinding their stacks reads the same g structs, stack pages and tables again and again, a
// few words at a time, and each read of /proc/PID/mem is a system call made while the target
// waits. A stopped process's memory does not change, so the cache is exact until it runs
// again; it is dropped at every resume, and bounded (maxCachedPages) however much is read.
type pageCache struct {
	mu    sync.Mutex
	src   proc.MemoryReader
	pages map[uint64][]byte // by page address; nil: the page cannot be read
}

const (
	cachePage      = 4096
	maxCachedPages = 16384 // 64 MiB
)

func newPageCache(src proc.MemoryReader) *pageCache {
	return &pageCache{src: src, pages: map[uint64][]byte{}}
}

// ReadMemory reads through the cache; a range with a page that cannot be read is read
// directly, so that errors are the kernel's.
func (c *pageCache) ReadMemory(buf []byte, addr uint64) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if uint64(len(buf)) > 16*cachePage || addr+uint64(len(buf)) < addr {
		return c.src.ReadMemory(buf, addr)
	}
	done := 0
	for done < len(buf) {
		a := addr + uint64(done)
		page := a &^ (cachePage - 1)
		b, ok := c.pages[page]
		if !ok {
			if len(c.pages) >= maxCachedPages {
				clear(c.pages)
			}
			b = make([]byte, cachePage)
			if _, err := c.src.ReadMemory(b, page); err != nil {
				b = nil
			}
			c.pages[page] = b
		}
		if b == nil {
			return c.src.ReadMemory(buf, addr)
		}
		done += copy(buf[done:], b[a-page:])
	}
	return done, nil
}

func (c *pageCache) WriteMemory(uint64, []byte) (int, error) { return 0, errReadOnly }
