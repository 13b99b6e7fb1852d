package process

import "encoding/binary"

// Cache keeps recently read blocks of the target's memory: a heap walk reads each object's
// pointer words, and objects sit side by side in spans (as the memory profile's buckets sit
// side by side in the runtime's persistent allocations), so one read of a block serves many.
// It is direct-mapped and of fixed size, so memdoctor's memory stays bounded however large
// the memory it reads. A cache is a snapshot: make a new one for each reading of a running
// process.
type Cache struct {
	mem    *Memory
	tags   []uint64 // block address + 1; 0 = empty
	data   []byte
	reads  int64
	misses int64
}

// CacheBlock is the size of the blocks a Cache reads, aligned on it.
const CacheBlock = 8192

// NewCache makes a cache of about bytes (at least 16 blocks) in front of mem.
func NewCache(mem *Memory, bytes int) *Cache {
	n := max(bytes/CacheBlock, 16)
	return &Cache{mem: mem, tags: make([]uint64, n), data: make([]byte, n*CacheBlock)}
}

// Word reads the 8-byte word at addr (8-aligned); directly when its block cannot be read
// whole (memory that ends, or a copy that holds only part of the block).
func (c *Cache) Word(addr uint64) (uint64, error) {
	b, err := c.Block(addr &^ (CacheBlock - 1))
	if err != nil {
		return c.mem.Uint64(addr)
	}
	off := addr & (CacheBlock - 1)
	return binary.LittleEndian.Uint64(b[off:]), nil
}

// Block returns the cached block at blk (CacheBlock-aligned), reading it when missing.
func (c *Cache) Block(blk uint64) ([]byte, error) {
	c.reads++
	i := (blk / CacheBlock) % uint64(len(c.tags))
	b := c.data[i*CacheBlock : (i+1)*CacheBlock]
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
func (c *Cache) Read(buf []byte, addr uint64) error {
	blk := addr &^ (CacheBlock - 1)
	if addr+uint64(len(buf)) <= blk+CacheBlock {
		if b, err := c.Block(blk); err == nil {
			copy(buf, b[addr-blk:])
			return nil
		}
	}
	return c.mem.Read(buf, addr)
}
