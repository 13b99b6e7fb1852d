package process

import (
	"bytes"
	"os"
	"runtime"
	"testing"
	"unsafe"
)

// TestPageCache reads this process's own memory through the page cache Delve reads a stopped
// process through: the same bytes as a direct read, across pages, errors for what cannot be
// read, and no more pages kept than its bound.
func TestPageCache(t *testing.T) {
	p, err := openLive(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	defer p.mem.Close()
	c := newPageCache(p)
	data := make([]byte, 5*cachePage)
	for i := range data {
		data[i] = byte(i * 7)
	}
	base := uint64(uintptr(unsafe.Pointer(&data[0])))
	for _, r := range [][2]int{{0, 8}, {cachePage - 3, 8}, {100, 3 * cachePage}, {cachePage, cachePage}, {5*cachePage - 1, 1}} {
		got := make([]byte, r[1])
		if n, err := c.ReadMemory(got, base+uint64(r[0])); err != nil || n != r[1] || !bytes.Equal(got, data[r[0]:r[0]+r[1]]) {
			t.Errorf("read of %d bytes at +%d: %d, %v, equal %v", r[1], r[0], n, err, bytes.Equal(got, data[r[0]:r[0]+r[1]]))
		}
	}
	if _, err := c.ReadMemory(make([]byte, 8), 8); err == nil {
		t.Error("a read of page zero succeeded")
	}
	for i := uint64(0); i < maxCachedPages+10; i++ {
		c.ReadMemory(make([]byte, 1), 1<<40+i*cachePage) // unmapped: remembered as unreadable
	}
	if len(c.pages) > maxCachedPages {
		t.Errorf("%d pages kept, more than %d", len(c.pages), maxCachedPages)
	}
	runtime.KeepAlive(data)
}
