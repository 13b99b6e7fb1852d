package process

import (
	"encoding/binary"
	"errors"
	"testing"
)

// partial is memory readable only in [lo, hi).
type partial struct{ lo, hi uint64 }

func (p partial) ReadMemory(buf []byte, addr uint64) (int, error) {
	if addr < p.lo || addr+uint64(len(buf)) > p.hi {
		return 0, errors.New("unmapped")
	}
	for i := range buf {
		buf[i] = byte(addr + uint64(i))
	}
	return len(buf), nil
}

// TestCacheWordOfAPartBlock: a word whose block cannot be read whole (a copy holding only a
// goroutine's 2 KiB stack of an 8 KiB block) is still read.
func TestCacheWordOfAPartBlock(t *testing.T) {
	lo := uint64(3 * CacheBlock / 4)
	c := NewCache(NewMemory(partial{lo, lo + 2048}), 1<<20)
	w, err := c.Word(lo + 16)
	if err != nil {
		t.Fatal(err)
	}
	var want [8]byte
	partial{lo, lo + 2048}.ReadMemory(want[:], lo+16)
	if w != binary.LittleEndian.Uint64(want[:]) {
		t.Errorf("read %#x", w)
	}
	if _, err := c.Word(lo + 4096); err == nil {
		t.Error("a word outside the readable memory reads")
	}
}
