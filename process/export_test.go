package process

import "github.com/go-delve/delve/pkg/proc"

// patched overlays bytes on the target's memory, as memdoctor reads it: a corrupt core's
// runtime structures, for the hostile-input tests.
type patched struct {
	r    proc.MemoryReader
	addr uint64
	b    []byte
}

func (p *patched) ReadMemory(buf []byte, addr uint64) (int, error) {
	n, err := p.r.ReadMemory(buf, addr)
	for i := range buf[:n] {
		a := addr + uint64(i)
		if a >= p.addr && a < p.addr+uint64(len(p.b)) {
			buf[i] = p.b[a-p.addr]
		}
	}
	return n, err
}

// Patch makes memdoctor read b at addr in the target's memory.
func Patch(t *Target, addr uint64, b []byte) { t.mem.r = &patched{t.mem.r, addr, b} }
