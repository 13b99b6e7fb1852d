package process

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
)

// holeySource is a target's memory with holes that cannot be read: base..base+len(data), as
// a copySource reads it (up to the first unreadable address, then an *unreadableError); gone
// makes it a process that has ended. It counts its reads.
type holeySource struct {
	base  uint64
	data  []byte
	holes []Region
	gone  bool
	mu    sync.Mutex
	reads int
}

func (s *holeySource) copyTo(w io.WriterAt, off int64, rs []Region, buf []byte) (int64, error) {
	s.mu.Lock()
	s.reads++
	s.mu.Unlock()
	if s.gone {
		return 0, fmt.Errorf("process 1: its memory is gone: %w", ErrExited)
	}
	n := 0
	for _, r := range rs {
		if r.Lo < s.base || r.Hi > s.base+uint64(len(s.data)) || r.Hi-r.Lo > uint64(len(buf)-n) {
			return 0, fmt.Errorf("copying %#x-%#x: out of range", r.Lo, r.Hi)
		}
		end := r.Hi
		for _, h := range s.holes {
			if h.Lo < end && h.Hi > r.Lo {
				end = max(h.Lo, r.Lo)
				break
			}
		}
		n += copy(buf[n:], s.data[r.Lo-s.base:end-s.base])
		if end < r.Hi {
			if _, err := w.WriteAt(buf[:n], off); err != nil {
				return 0, err
			}
			return 0, &unreadableError{At: end, Err: errors.New("input/output error")}
		}
	}
	_, err := w.WriteAt(buf[:n], off)
	return 0, err
}

func (s *holeySource) where(addr uint64) string {
	return fmt.Sprintf("the mapping that holds %#x", addr)
}

// newTestCopy is a Copy of src into an unlinked file, with no executable behind it.
func newTestCopy(t *testing.T, src copySource) *Copy {
	t.Helper()
	f, err := createUnlinked(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c := &Copy{f: f, src: src}
	for range copyWorkers() {
		c.bufs = append(c.bufs, make([]byte, copyChunk))
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestCopyReadableSkipsHoles: memory that cannot be read (a page in the middle of a stack, a
// run of pages, the last page of a range) fails Add, naming the range and its mapping, and is
// skipped by AddReadable, which copies everything around it: the copy reads as the memory
// where it holds it, refuses the holes, says which ranges it skipped and counts only what it
// copied.
func TestCopyReadableSkipsHoles(t *testing.T) {
	const base = 0x100000
	src := &holeySource{base: base, data: make([]byte, 64*skipPage)}
	for i := range src.data {
		src.data[i] = byte(i*7 + i/4096)
	}
	src.holes = []Region{
		{base + 3*skipPage, base + 4*skipPage},   // one page
		{base + 10*skipPage, base + 13*skipPage}, // three
		{base + 31*skipPage, base + 32*skipPage}, // a range's last page
	}
	// Two stacks, a thread's region; not page-aligned where they start.
	rs := []Region{{base + 100, base + 20*skipPage}, {base + 24*skipPage, base + 32*skipPage}, {base + 40*skipPage + 8, base + 41*skipPage}}

	strict := newTestCopy(t, src)
	err := strict.Add(context.Background(), rs)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("at %#x", rs[0].Lo)) || !strings.Contains(err.Error(), fmt.Sprintf("the mapping that holds %#x", base+3*skipPage)) {
		t.Errorf("Add over a hole: %v, want an error naming the range at %#x and the mapping of %#x", err, rs[0].Lo, base+3*skipPage)
	}
	if strict.Holds(rs[0].Lo, 8) {
		t.Error("a failed Add holds what it tried")
	}

	// In two parts, the higher first: what a copy holds stays in address order.
	c := newTestCopy(t, src)
	for _, part := range [][]Region{rs[1:], rs[:1]} {
		if err := c.AddReadable(context.Background(), part); err != nil {
			t.Fatal(err)
		}
	}
	if got := c.Skipped(); fmt.Sprint(got) != fmt.Sprint(src.holes) {
		t.Errorf("skipped %v, want %v", got, src.holes)
	}
	var want, skipped uint64
	for _, r := range rs {
		want += r.Hi - r.Lo
	}
	for _, h := range src.holes {
		skipped += h.Hi - h.Lo
	}
	if c.Bytes() != int64(want-skipped) {
		t.Errorf("copied %d bytes, want %d (%d asked, %d skipped)", c.Bytes(), want-skipped, want, skipped)
	}
	for _, r := range rs {
		for lo := r.Lo; lo < r.Hi; {
			hi := min((lo|(skipPage-1))+1, r.Hi)
			inHole := false
			for _, h := range src.holes {
				inHole = inHole || lo >= h.Lo && lo < h.Hi
			}
			got := make([]byte, hi-lo)
			_, err := c.ReadMemory(got, lo)
			switch {
			case inHole && (err == nil || !strings.Contains(err.Error(), "could not be read from the process")):
				t.Errorf("reading the hole at %#x: %v, want an error saying it could not be read", lo, err)
			case !inHole && err != nil:
				t.Errorf("reading %#x-%#x: %v", lo, hi, err)
			case !inHole && !bytes.Equal(got, src.data[lo-base:hi-base]):
				t.Errorf("%#x-%#x does not read as the memory", lo, hi)
			}
			if c.Holds(lo, hi-lo) == inHole {
				t.Errorf("Holds(%#x, %d) = %v", lo, hi-lo, !inHole)
			}
			lo = hi
		}
	}
}

// TestCopyReadableIsBounded: a range that cannot be read at all is tried a page at a time at
// most maxSkipTries times, then skipped whole, however large it is.
func TestCopyReadableIsBounded(t *testing.T) {
	const base = 0x100000
	size := uint64(2*maxSkipTries) * skipPage
	src := &holeySource{base: base, data: make([]byte, size+skipPage)}
	src.holes = []Region{{base, base + size}}
	c := newTestCopy(t, src)
	rs := []Region{{base, base + size}, {base + size, base + size + skipPage}}
	if err := c.AddReadable(context.Background(), rs); err != nil {
		t.Fatal(err)
	}
	// Each read of the process is a job of at most copyChunk bytes: once the tries are spent,
	// one read per job.
	if jobs := int(size/copyChunk) + 1; src.reads > maxSkipTries+jobs {
		t.Errorf("%d reads for a hole of %d pages: want at most %d (%d tries, %d jobs)", src.reads, size/skipPage, maxSkipTries+jobs, maxSkipTries, jobs)
	}
	if got := c.Skipped(); len(got) != 1 || got[0] != (Region{base, base + size}) {
		t.Errorf("skipped %v, want the whole hole %#x-%#x", got, base, base+size)
	}
	if !c.Holds(base+size, skipPage) {
		t.Error("the range after the hole was not copied")
	}
}

// TestCopyOfAGoneProcess: a process whose memory is gone is an error for AddReadable too, not a
// copy of holes.
func TestCopyOfAGoneProcess(t *testing.T) {
	src := &holeySource{base: 0x100000, data: make([]byte, 4*skipPage), gone: true}
	c := newTestCopy(t, src)
	err := c.AddReadable(context.Background(), []Region{{0x100000, 0x100000 + 4*skipPage}})
	if !errors.Is(err, ErrExited) {
		t.Errorf("copying a process that is gone: %v, want ErrExited", err)
	}
	if len(c.Skipped()) != 0 || c.Bytes() != 0 {
		t.Errorf("skipped %v, copied %d", c.Skipped(), c.Bytes())
	}
}

// TestCutExtents takes holes out of extents, keeping each part's offset in the file.
func TestCutExtents(t *testing.T) {
	ext := []extent{{0, 100, 0}, {200, 300, 100}, {400, 500, 200}}
	holes := []Region{{50, 60}, {90, 210}, {250, 260}, {290, 420}, {490, 600}}
	want := []extent{{0, 50, 0}, {60, 90, 60}, {210, 250, 110}, {260, 290, 160}, {420, 490, 220}}
	if got := cutExtents(ext, holes); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("cutExtents = %v, want %v", got, want)
	}
	if got := cutExtents(ext, nil); fmt.Sprint(got) != fmt.Sprint(ext) {
		t.Errorf("no holes: %v", got)
	}
}
