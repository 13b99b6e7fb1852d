package walk

import (
	"encoding/binary"

	"github.com/memdoctor/memdoctor/process"
)

// blockCache keeps recently read blocks of the target's memory: the walk reads each object's
// pointer words, and objects sit side by side in spans, so one read of a block serves many.
// It is direct-mapped and of fixed size, so memdoctor's memory stays bounded however large
// the heap it reads.
type blockCache struct {
	mem    *process.Memory
	tags   []uint64 // block address + 1; 0 = empty
	data   []byte
	reads  int64
	misses int64
}

const blockSize = 8192

func newBlockCache(mem *process.Memory, bytes int) *blockCache {
	n := max(bytes/blockSize, 16)
	return &blockCache{mem: mem, tags: make([]uint64, n), data: make([]byte, n*blockSize)}
}

// word reads the 8-byte word at addr (8-aligned).
func (c *blockCache) word(addr uint64) (uint64, error) {
	b, err := c.block(addr &^ (blockSize - 1))
	if err != nil {
		return 0, err
	}
	off := addr & (blockSize - 1)
	return binary.LittleEndian.Uint64(b[off:]), nil
}

func (c *blockCache) block(blk uint64) ([]byte, error) {
	c.reads++
	i := (blk / blockSize) % uint64(len(c.tags))
	b := c.data[i*blockSize : (i+1)*blockSize]
	if c.tags[i] == blk+1 {
		return b, nil
	}
	c.misses++
	c.tags[i] = 0
	if err := c.mem.Read(b, blk); err != nil {
		return nil, err
	}
	c.tags[i] = blk + 1
	return b, nil
}

// Read fills buf from addr through the cache, reading directly what the cache cannot hold (a
// read across blocks, or a block not wholly mapped).
func (c *blockCache) Read(buf []byte, addr uint64) error {
	blk := addr &^ (blockSize - 1)
	if addr+uint64(len(buf)) <= blk+blockSize {
		if b, err := c.block(blk); err == nil {
			copy(buf, b[addr-blk:])
			return nil
		}
	}
	return c.mem.Read(buf, addr)
}
