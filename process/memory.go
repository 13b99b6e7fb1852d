package process

import (
	"encoding/binary"
	"fmt"

	"github.com/go-delve/delve/pkg/proc"
)

// MaxRead is the most one read of the target's memory may ask for: whatever the target's
// structures claim, memdoctor never reads more at once.
const MaxRead = 64 << 20

// Memory reads the target's memory, little-endian (both supported architectures are), in
// reads of at most MaxRead bytes, and counts what it read.
type Memory struct {
	r    proc.MemoryReader
	read int64
}

func newMemory(r proc.MemoryReader) *Memory { return &Memory{r: r} }

// Read fills buf from addr; a read it cannot complete is an error naming the address.
func (m *Memory) Read(buf []byte, addr uint64) error {
	if len(buf) > MaxRead {
		return fmt.Errorf("refusing to read %d bytes at %#x at once (at most %d)", len(buf), addr, MaxRead)
	}
	if addr+uint64(len(buf)) < addr {
		return fmt.Errorf("read at %#x wraps around", addr)
	}
	n, err := m.r.ReadMemory(buf, addr)
	m.read += int64(n)
	if err != nil {
		return fmt.Errorf("reading %d bytes at %#x: %w", len(buf), addr, err)
	}
	if n < len(buf) {
		return fmt.Errorf("reading %d bytes at %#x: only %d read", len(buf), addr, n)
	}
	return nil
}

// Uint64 reads one little-endian word.
func (m *Memory) Uint64(addr uint64) (uint64, error) {
	var b [8]byte
	if err := m.Read(b[:], addr); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b[:]), nil
}

// Uint32 reads a little-endian uint32.
func (m *Memory) Uint32(addr uint64) (uint32, error) {
	var b [4]byte
	if err := m.Read(b[:], addr); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b[:]), nil
}

// BytesRead is how much has been read so far.
func (m *Memory) BytesRead() int64 { return m.read }
