package agent

import (
	"runtime/pprof"
	"sync"
)

// bufPool recycles the scratch buffers profiles are written into: a bounded free list, so
// that writing a profile does not grow a new buffer every round. What is kept is an exact
// copy: a 3 KB profile holds 3 KB, not the scratch buffer's 64 KB.
type bufPool struct {
	mu   sync.Mutex
	free [][]byte
}

const (
	poolMax    = 4       // buffers kept free at most
	poolMaxCap = 4 << 20 // larger buffers are left to the GC
)

func (p *bufPool) get() []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.free); n > 0 {
		b := p.free[n-1]
		p.free[n-1] = nil
		p.free = p.free[:n-1]
		return b[:0]
	}
	return make([]byte, 0, 64<<10)
}

func (p *bufPool) put(b []byte) {
	if cap(b) == 0 || cap(b) > poolMaxCap {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.free) < poolMax {
		p.free = append(p.free, b[:0])
	}
}

// appendWriter is an io.Writer that appends to a byte slice.
type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// captureProfile writes the named runtime/pprof profile ("heap" or "goroutine") as a gzipped
// proto through a pooled scratch buffer and returns an exact-size copy. A heap profile is
// read without forcing a GC: its figures are as of the last completed GC cycle.
func captureProfile(pool *bufPool, name string) ([]byte, error) {
	p := pprof.Lookup(name)
	w := appendWriter{b: pool.get()}
	defer func() { pool.put(w.b) }()
	if err := p.WriteTo(&w, 0); err != nil {
		return nil, err
	}
	return append(make([]byte, 0, len(w.b)), w.b...), nil
}
