package process

import (
	"errors"
	"fmt"
	"sort"

	"github.com/go-delve/delve/pkg/proc"
)

var errReadOnly = errors.New("memdoctor never writes to the process it reads")

// find returns the extent holding addr.
func (c *Copy) find(addr uint64) (extent, bool) {
	i := sort.Search(len(c.ext), func(i int) bool { return c.ext[i].hi > addr })
	if i < len(c.ext) && c.ext[i].lo <= addr {
		return c.ext[i], true
	}
	return extent{}, false
}

// Holds says whether the copy (or the executable's file) holds all of [addr, addr+n).
func (c *Copy) Holds(addr, n uint64) bool {
	for end := addr + n; addr < end; {
		if e, ok := c.find(addr); ok {
			addr = e.hi
		} else if s, ok := c.exe.find(addr); ok {
			addr = s.hi
		} else {
			return false
		}
	}
	return true
}

// Omit records ranges the copy leaves out on purpose: pointer-free memory whose bytes neither
// the walk nor the naming needs (the walk never reads them; Delve, loading a local variable,
// may read a few of its values, which no name depends on). ReadMemory refuses them; Delve's
// view (Lenient) reads them as zeros.
func (c *Copy) Omit(rs []Region) {
	c.omit = merge(append(append([]Region(nil), c.omit...), rs...))
}

// Omitted is how much the copy leaves out on purpose.
func (c *Copy) Omitted() uint64 {
	var n uint64
	for _, r := range c.omit {
		n += r.Hi - r.Lo
	}
	return n
}

// Lenient is the copy as Delve reads it: what was omitted reads as zeros.
func (c *Copy) Lenient() proc.MemoryReader { return lenientCopy{c} }

type lenientCopy struct{ c *Copy }

func (l lenientCopy) ReadMemory(buf []byte, addr uint64) (int, error) {
	return l.c.read(buf, addr, true)
}

func (l lenientCopy) WriteMemory(uint64, []byte) (int, error) { return 0, errReadOnly }

// ReadMemory reads the copy: what was copied from the file, the executable's unchanged
// parts from the executable. A range the copy does not hold is an error.
func (c *Copy) ReadMemory(buf []byte, addr uint64) (int, error) { return c.read(buf, addr, false) }

func (c *Copy) read(buf []byte, addr uint64, zeros bool) (int, error) {
	done := 0
	for done < len(buf) {
		a := addr + uint64(done)
		var n int
		var err error
		if e, ok := c.find(a); ok {
			m := min(uint64(len(buf)-done), e.hi-a)
			n, err = c.f.ReadAt(buf[done:done+int(m)], e.off+int64(a-e.lo))
		} else if s, ok := c.exe.find(a); ok {
			m := min(uint64(len(buf)-done), s.hi-a)
			n, err = c.exe.f.ReadAt(buf[done:done+int(m)], s.off+int64(a-s.lo))
		} else if r, ok := c.omitted(a); ok && zeros {
			n = int(min(uint64(len(buf)-done), r.Hi-a))
			clear(buf[done : done+n])
		} else if ok {
			return done, fmt.Errorf("the copy leaves out the pointer-free memory at %#x", a)
		} else if c.wasSkipped(a) {
			return done, fmt.Errorf("the copy holds no memory at %#x: it could not be read from the process", a)
		} else {
			return done, fmt.Errorf("the copy holds no memory at %#x", a)
		}
		done += n
		if err != nil {
			return done, fmt.Errorf("reading the copy at %#x: %w", a, err)
		}
	}
	return done, nil
}

// omitted returns the omitted range holding addr.
func (c *Copy) omitted(addr uint64) (Region, bool) {
	i := sort.Search(len(c.omit), func(i int) bool { return c.omit[i].Hi > addr })
	if i < len(c.omit) && c.omit[i].Lo <= addr {
		return c.omit[i], true
	}
	return Region{}, false
}

// wasSkipped says whether AddReadable skipped addr.
func (c *Copy) wasSkipped(addr uint64) bool {
	i := sort.Search(len(c.skipped), func(i int) bool { return c.skipped[i].Hi > addr })
	return i < len(c.skipped) && c.skipped[i].Lo <= addr
}

// WriteMemory: a copy is never written to.
func (c *Copy) WriteMemory(uint64, []byte) (int, error) { return 0, errReadOnly }
