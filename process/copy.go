package process

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/memdoctor/memdoctor/units"
)

// Copy is a copy of parts of a process's memory, taken while it is stopped, kept in an
// unlinked temporary file: it is never in memdoctor's memory (a read of it is a read of the
// file, served by the kernel's page cache) and never outlives memdoctor, which is the file's
// only holder. What the executable's file holds unchanged (its code, and the read-only data
// of an executable loaded where it was linked) is read from that file rather than copied.
//
// A Copy is filled by Add while the process is stopped; Target.ReadCopy then makes every
// read of the target (its Memory, and Delve's goroutines, frames and variables) a read of
// the copy, so that the process can run again while what was copied is read.
type Copy struct {
	f    *os.File
	dir  string
	src  copySource
	exe  *exeImage
	size int64    // bytes written to the file
	ext  []extent // what the file holds, sorted by address, disjoint
	// bufs are the workers' buffers, made (and their pages touched) before the process is
	// stopped.
	bufs [][]byte
	// Urgent: the process is stopped, and every moment of the copy is its; the workers
	// ask the kernel for a higher priority (see Urgently).
	Urgent bool
	// omit is what the copy leaves out on purpose (sorted, disjoint): memory whose bytes
	// no reading needs, which only Delve's view reads, as zeros.
	omit   []Region
	copied int64 // bytes copied
	// skipped is what AddReadable could not read (sorted, disjoint): the copy does not hold it.
	skipped []Region
	// absent is how much of what was copied was not there in the process: zeros, not read.
	absent int64
}

// extent is one range of the process's memory in the file.
type extent struct {
	lo, hi uint64
	off    int64
}

// copySource reads the memory a Copy copies: the stopped process, or a core.
type copySource interface {
	// copyTo copies the ranges rs of the target's memory, one after the other, to w at
	// off, using buf (which holds them all). Memory it cannot read is an *unreadableError
	// whose At is the first address not read, everything before it written to w; a process
	// that is gone is an error that wraps ErrExited. It returns how many bytes of what it
	// wrote were not there in a live process (never touched, or given back to the system),
	// and so zeros, not read (see residency).
	copyTo(w io.WriterAt, off int64, rs []Region, buf []byte) (absent int64, err error)
	// where describes what the target's memory map holds at addr, for an error.
	where(addr uint64) string
}

// unreadableError: the target's memory at At could not be read, though its memory map says it
// can (memory that only its own threads may read: a guard region made with madvise, a
// device's or the kernel's pages), or a core does not hold it.
type unreadableError struct {
	At  uint64
	Err error
}

func (e *unreadableError) Error() string {
	return fmt.Sprintf("the memory at %#x cannot be read: %v", e.At, e.Err)
}

func (e *unreadableError) Unwrap() error { return e.Err }

// copyChunk is the most one read of a copy moves at once, and maxCopyRanges the most ranges
// it reads at once (the kernel's IOV_MAX).
const (
	copyChunk     = 4 << 20
	maxCopyRanges = 1024
)

// skipPage is how much of what cannot be read AddReadable skips at a time before it tries
// again, and maxSkipTries bounds those tries in one AddReadable: past them, the rest of a range
// that cannot be read is skipped at once. (4096 tries: 16 MiB skipped a page at a time.)
const (
	skipPage     = 4096
	maxSkipTries = 4096
)

// MaxCopy bounds a copy: whatever the target's structures claim, memdoctor never copies more.
const MaxCopy = 1 << 40

// NoSpaceError: the directory chosen for a copy has too little room for it.
type NoSpaceError struct {
	Dir        string
	Need, Free uint64
}

func (e *NoSpaceError) Error() string {
	return fmt.Sprintf("the copy needs about %s in %s, which has %s free", units.Bytes(float64(e.Need)), e.Dir, units.Bytes(float64(e.Free)))
}

// NewCopy prepares a copy of the target's memory in an unlinked file in dir (os.TempDir()
// when empty), created with mode 0600 and unlinked before anything is written to it.
func (t *Target) NewCopy(dir string) (*Copy, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	src, err := t.copySource()
	if err != nil {
		return nil, err
	}
	exe, err := t.exeImage()
	if err != nil {
		return nil, err
	}
	f, err := createUnlinked(dir)
	if err != nil {
		exe.close()
		return nil, fmt.Errorf("a temporary file for the copy in %s: %w", dir, err)
	}
	c := &Copy{f: f, dir: dir, src: src, exe: exe}
	for range copyWorkers() {
		b := make([]byte, copyChunk)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		c.bufs = append(c.bufs, b)
	}
	return c, nil
}

// Reserve makes room for about n bytes of copy, refusing a directory with less free space
// (*NoSpaceError). Call it while the process runs: the room made is memory the kernel holds
// already when the copy is written, while the process is stopped.
func (c *Copy) Reserve(n int64) error {
	if n < 0 || n > MaxCopy {
		return fmt.Errorf("a copy of %d bytes: more than memdoctor copies", n)
	}
	if free, ok := freeSpace(c.dir); ok && uint64(n)+reserveSlack > free {
		return &NoSpaceError{Dir: c.dir, Need: uint64(n), Free: free}
	}
	if err := prepareRoom(c.f, n); err != nil {
		if errors.Is(err, errNoSpace) {
			free, _ := freeSpace(c.dir)
			return &NoSpaceError{Dir: c.dir, Need: uint64(n), Free: free}
		}
		return fmt.Errorf("making room for the copy in %s: %w", c.dir, err)
	}
	return nil
}

// Free is the free space in the copy's directory (0 when unknown).
func (c *Copy) Free() uint64 {
	free, _ := freeSpace(c.dir)
	return free
}

// Executable is what a copy takes of the executable's own segments from the process: its
// data and bss, and a position-independent executable's read-only data (relocated when it
// was loaded). Its code, and the read-only data of an executable loaded where it was linked,
// are read from its file.
func (c *Copy) Executable() []Region { return append([]Region(nil), c.exe.fromProcess...) }

// Probe copies rs as Add does, to time it, and forgets it: it returns the bytes copied.
func (c *Copy) Probe(ctx context.Context, rs []Region) (int64, error) {
	ext, size, copied, absent := c.ext, c.size, c.copied, c.absent
	c.ext = append([]extent(nil), ext...)
	err := c.Add(ctx, rs)
	n := c.copied - copied
	c.ext, c.size, c.copied, c.absent = ext, size, copied, absent
	return n, err
}

// reserveSlack is the free space a copy leaves in its directory.
const reserveSlack = 64 << 20

// Dir is where the copy's file is (unlinked).
func (c *Copy) Dir() string { return c.dir }

// Bytes is how much of the process's memory the copy holds.
func (c *Copy) Bytes() int64 { return c.copied }

// NotResident is how much of what the copy holds was not there in the process (pages it
// never touched, or gave back to the system): zeros, never read, so that the copy did not make
// them resident in it.
func (c *Copy) NotResident() int64 { return c.absent }

// Close removes the copy: its file goes with its last descriptor.
func (c *Copy) Close() error {
	if c.exe != nil {
		c.exe.close()
	}
	return c.f.Close()
}

// Add copies the ranges of the process's memory that the copy does not hold yet, in reads of
// at most copyChunk bytes, each written straight to the file, by a few workers at once (the
// process is stopped: its CPUs are free). Ranges the executable's file holds unchanged are
// skipped; the rest must be readable: memory that cannot be read is an error that names it
// and the mapping that holds it.
func (c *Copy) Add(ctx context.Context, rs []Region) error { return c.add(ctx, rs, false) }

// AddReadable copies rs as Add does, but what cannot be read (though the process's memory map
// says it can) is skipped rather than an error: tried again a page at a time past the first
// page that fails (at most maxSkipTries times, then the rest of that range at once), and
// recorded (Skipped). The copy does not hold what was skipped: a read of it is an error. A
// process that is gone is an error still. For what a reading can do without: the stacks.
func (c *Copy) AddReadable(ctx context.Context, rs []Region) error { return c.add(ctx, rs, true) }

// Skipped is what AddReadable could not read, sorted and merged.
func (c *Copy) Skipped() []Region { return append([]Region(nil), c.skipped...) }

// job is up to copyChunk bytes of ranges that follow each other in the file: one read of the
// process (many ranges at once) and one write.
type job struct {
	off int64
	rs  []Region
}

func (c *Copy) add(ctx context.Context, rs []Region, partial bool) error {
	todo := c.missing(rs)
	var total uint64
	for _, r := range todo {
		total += r.Hi - r.Lo
	}
	if uint64(c.size)+total > MaxCopy {
		return fmt.Errorf("a copy of %s: more than memdoctor copies", units.Bytes(float64(uint64(c.size)+total)))
	}
	var jobs []job
	var cur job
	var n uint64
	flush := func() {
		if len(cur.rs) > 0 {
			jobs = append(jobs, cur)
		}
		cur, n = job{off: c.size}, 0
	}
	start := len(c.ext)
	flush()
	for _, r := range todo {
		c.ext = append(c.ext, extent{lo: r.Lo, hi: r.Hi, off: c.size})
		for lo := r.Lo; lo < r.Hi; {
			hi := min(lo+copyChunk-n, r.Hi)
			cur.rs = append(cur.rs, Region{lo, hi})
			n += hi - lo
			c.size += int64(hi - lo)
			lo = hi
			if n == copyChunk || len(cur.rs) == maxCopyRanges {
				flush()
			}
		}
	}
	flush()
	workers := min(copyWorkers(), len(jobs))
	next := make(chan job)
	errs := make(chan error, workers)
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		holes  []Region
		tries  atomic.Int64
		absent atomic.Int64
	)
	tries.Store(maxSkipTries)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if c.Urgent {
				// Given back to the runtime once its priority is put back: a thread that
				// ends may take with it a program the caller started (see Urgently).
				runtime.LockOSThread()
				defer onUrgentThreadEnd(raisePriority())
			}
			buf := c.bufs[w]
			for j := range next {
				skipped, err := c.copyJob(j, buf, partial, &tries, &absent)
				if err != nil {
					errs <- err
					for range next {
					}
					return
				}
				if len(skipped) > 0 {
					mu.Lock()
					holes = append(holes, skipped...)
					mu.Unlock()
				}
			}
		}()
	}
	var err error
feed:
	for _, j := range jobs {
		select {
		case next <- j:
		case err = <-errs:
			break feed
		case <-ctx.Done():
			err = ctx.Err()
			break feed
		}
	}
	close(next)
	wg.Wait()
	close(errs)
	if err == nil {
		err = <-errs
	}
	if err != nil {
		c.ext = c.ext[:start]
		return err
	}
	holes = merge(holes)
	var skipped uint64
	for _, h := range holes {
		skipped += h.Hi - h.Lo
	}
	c.copied += int64(total - skipped)
	c.absent += absent.Load()
	sort.Slice(c.ext, func(i, j int) bool { return c.ext[i].lo < c.ext[j].lo })
	c.ext = cutExtents(c.ext, holes)
	c.skipped = merge(append(c.skipped, holes...))
	return nil
}

// copyJob copies one job. A failure to read memory is an error naming it and its mapping
// unless partial: then the failing page is skipped, and the rest of the job copied, as long as
// tries last (then the rest of the failing range is skipped at once). It returns what was
// skipped, and adds to absent what was not there.
func (c *Copy) copyJob(j job, buf []byte, partial bool, tries, absent *atomic.Int64) ([]Region, error) {
	rs, off := j.rs, j.off
	var holes []Region
	for len(rs) > 0 {
		n, err := c.src.copyTo(c.f, off, rs, buf)
		absent.Add(n)
		if err == nil {
			return holes, nil
		}
		var ue *unreadableError
		if !errors.As(err, &ue) {
			return nil, err
		}
		i := sort.Search(len(rs), func(i int) bool { return rs[i].Hi > ue.At })
		if i == len(rs) || ue.At < rs[i].Lo {
			return nil, fmt.Errorf("copying %#x-%#x: %w (outside the ranges read)", rs[0].Lo, rs[len(rs)-1].Hi, err)
		}
		if !partial {
			r := rs[i]
			return nil, fmt.Errorf("copying %d bytes at %#x: %w; %s", r.Hi-r.Lo, r.Lo, err, c.src.where(ue.At))
		}
		// What precedes ue.At is in the file; what follows the skipped part is tried again.
		skipTo := min((ue.At|(skipPage-1))+1, rs[i].Hi)
		if tries.Add(-1) < 0 {
			skipTo = rs[i].Hi
		}
		holes = append(holes, Region{ue.At, skipTo})
		for _, r := range rs[:i] {
			off += int64(r.Hi - r.Lo)
		}
		off += int64(skipTo - rs[i].Lo)
		rest := rs[i+1:]
		if skipTo < rs[i].Hi {
			rest = append([]Region{{skipTo, rs[i].Hi}}, rest...)
		}
		rs = rest
	}
	return holes, nil
}

// cutExtents takes holes (sorted, disjoint) out of extents (sorted, disjoint).
func cutExtents(ext []extent, holes []Region) []extent {
	if len(holes) == 0 {
		return ext
	}
	var out []extent
	h := 0
	for _, e := range ext {
		for e.lo < e.hi {
			for h < len(holes) && holes[h].Hi <= e.lo {
				h++
			}
			if h == len(holes) || holes[h].Lo >= e.hi {
				out = append(out, e)
				break
			}
			if holes[h].Lo > e.lo {
				out = append(out, extent{lo: e.lo, hi: holes[h].Lo, off: e.off})
			}
			skip := min(holes[h].Hi, e.hi) - e.lo
			e.lo, e.off = e.lo+skip, e.off+int64(skip)
		}
	}
	return out
}

// missing returns the parts of rs (merged, in address order) that neither the copy nor the
// executable's file holds.
func (c *Copy) missing(rs []Region) []Region {
	in := merge(append([]Region(nil), rs...))
	var out []Region
	for _, r := range in {
		lo := r.Lo
		for lo < r.Hi {
			if e, ok := c.find(lo); ok {
				lo = min(e.hi, r.Hi)
				continue
			}
			if s, ok := c.exe.find(lo); ok {
				lo = min(s.hi, r.Hi)
				continue
			}
			// Up to the next extent or segment that starts in the range.
			hi := r.Hi
			if i := sort.Search(len(c.ext), func(i int) bool { return c.ext[i].lo > lo }); i < len(c.ext) {
				hi = min(hi, c.ext[i].lo)
			}
			hi = min(hi, c.exe.nextStart(lo))
			out = append(out, Region{lo, hi})
			lo = hi
		}
	}
	return out
}

// copySource is where a Copy of the target reads: the stopped process, or the core.
func (t *Target) copySource() (copySource, error) {
	if t.live != nil {
		return t.live.source(), nil
	}
	return memSource{t.mem}, nil
}

// memSource copies from memory read through a Memory (a core's).
type memSource struct{ m *Memory }

func (s memSource) copyTo(w io.WriterAt, off int64, rs []Region, buf []byte) (int64, error) {
	n := 0
	for _, r := range rs {
		if r.Hi < r.Lo || r.Hi-r.Lo > uint64(len(buf)-n) {
			return 0, fmt.Errorf("copying %#x-%#x: out of range", r.Lo, r.Hi)
		}
		if err := s.m.Read(buf[n:n+int(r.Hi-r.Lo)], r.Lo); err != nil {
			// Up to the first page that cannot be read.
			at := r.Lo
			for at < r.Hi {
				end := min((at|(skipPage-1))+1, r.Hi)
				if s.m.Read(buf[n:n+int(end-at)], at) != nil {
					break
				}
				n += int(end - at)
				at = end
			}
			if _, werr := w.WriteAt(buf[:n], off); werr != nil {
				return 0, werr
			}
			return 0, &unreadableError{At: at, Err: err}
		}
		n += int(r.Hi - r.Lo)
	}
	_, err := w.WriteAt(buf[:n], off)
	return 0, err
}

func (s memSource) where(uint64) string { return "the core does not hold it" }

// exeImage opens the executable's file as the process loaded it.
func (t *Target) exeImage() (*exeImage, error) {
	path := t.Exe
	if t.live != nil {
		path = "/proc/" + strconv.Itoa(t.PID) + "/exe"
	}
	var bias uint64
	if imgs := t.Delve.BinInfo().Images; len(imgs) > 0 {
		bias = imgs[0].StaticBase
	}
	return openExeImage(path, bias)
}

// Urgently runs fn on a thread of its own at a raised priority, where the kernel allows it
// (CAP_SYS_NICE), and restores it: for what memdoctor does while a process is stopped, so
// that a busy machine does not stretch the stop.
//
// The thread is given back to the runtime after, never ended (as a goroutine locked to its
// thread ends it when it returns): the kernel sends a child its parent-death signal when the
// thread that started it ends, so that a caller's program started with one would be killed.
func Urgently(fn func() error) error {
	runtime.LockOSThread()
	defer onUrgentThreadEnd(raisePriority())
	return fn()
}

// onUrgentThreadEnd puts the thread's priority back and gives the thread back to the runtime;
// a thread whose priority could not be put back is ended instead, with its goroutine.
func onUrgentThreadEnd(restore func() error) {
	if restore() == nil {
		runtime.UnlockOSThread()
	}
}

// copyWorkers is how many reads a copy makes at once.
func copyWorkers() int { return 2 }
