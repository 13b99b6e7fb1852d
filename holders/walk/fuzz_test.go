package walk

import (
	"os"
	"testing"

	"github.com/memdoctor/memdoctor/process"
)

type bufMem struct {
	base uint64
	b    []byte
}

func (m bufMem) ReadMemory(buf []byte, addr uint64) (int, error) {
	if addr < m.base || addr-m.base >= uint64(len(m.b)) {
		return 0, os.ErrNotExist
	}
	n := copy(buf, m.b[addr-m.base:])
	if n < len(buf) {
		return n, os.ErrNotExist
	}
	return n, nil
}

// FuzzStackMap reads hostile stack maps (a count, a bit count, the bitmaps) at any index.
func FuzzStackMap(f *testing.F) {
	f.Add([]byte{2, 0, 0, 0, 9, 0, 0, 0, 0xff, 1, 0, 0}, int32(1))
	f.Add([]byte{0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 0x7f}, int32(-1))
	f.Fuzz(func(t *testing.T, data []byte, idx int32) {
		bm, err := readStackMap(process.NewMemory(bufMem{0x1000, data}), 0x1000, idx)
		if err == nil && uint64(len(bm.bits))*8 < bm.n {
			t.Fatalf("%d bits in %d bytes", bm.n, len(bm.bits))
		}
	})
}
