package process

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A read of another process's memory (process_vm_readv, /proc/PID/mem) makes the kernel bring
// in every page it reads: a page of anonymous memory that the process never touched, or gave
// back to the system (the Go runtime's scavenger does, with madvise), is allocated in the
// process on the reader's behalf, and counted in its RSS and its cgroup's memory from then on.
// A read of a heap arena of 64 MiB of which the process uses 10 would make it 54 MiB bigger:
// the very read meant to explain a service near its memory limit could push it over.
//
// So memdoctor reads only the pages that are there: resident, or in swap (the process's own
// data: reading it back is what the process would do). The process's page map
// (/proc/PID/pagemap, which the permission to read its memory lets memdoctor read too) says
// which pages of its private anonymous memory are neither; those read as zeros, which is what
// the process itself would find there, and are never touched. Memory a file backs (the
// executable's data) is read as it is: a page not there holds the file's bytes, and reading it
// costs the page cache, not the process's anonymous memory.
//
// The page map is asked with the PAGEMAP_SCAN ioctl where the kernel has it (Linux 6.7: one
// call returns the runs of pages there), else read entry by entry (8 bytes per page).

// residency answers which pages of a live process's readable private anonymous mappings are
// not there. It is safe for concurrent use.
type residency struct {
	pid  int
	pm   *os.File // /proc/PID/pagemap
	page uint64
	// scan is PAGEMAP_SCAN's state: scanUntried, scanGuard (it takes PAGE_IS_GUARD), scanPlain
	// (it does not: before Linux 6.14), scanNone (before Linux 6.7: read the entries).
	scan atomic.Int32

	mu     sync.Mutex
	maps   []mapping // sorted by address
	mapsAt time.Time
}

const (
	scanUntried = iota
	scanGuard
	scanPlain
	scanNone
)

// newResidency opens the process's page map. It returns nil when the page map cannot be
// read (a kernel without it): every page is then read, at the cost this file describes.
func newResidency(pid int) *residency {
	pm, err := os.Open("/proc/" + strconv.Itoa(pid) + "/pagemap")
	if err != nil {
		return nil
	}
	return &residency{pid: pid, pm: pm, page: uint64(unix.Getpagesize())}
}

func (r *residency) close() {
	if r != nil {
		r.pm.Close()
	}
}

// setMaps gives the process's memory map as read now (the process stopped).
func (r *residency) setMaps(ms []mapping) {
	r.mu.Lock()
	r.maps, r.mapsAt = ms, time.Now()
	r.mu.Unlock()
}

// mapsRefresh is how often at most the memory map of a running process is read again, for an
// address outside the mappings known.
const mapsRefresh = 50 * time.Millisecond

// anonParts returns the parts of [lo, hi) that lie in readable private anonymous mappings,
// reading the memory map again (at most every mapsRefresh) when a part of the range lies in
// no mapping known: a running process maps memory as its heap grows.
func (r *residency) anonParts(lo, hi uint64, out []Region) []Region {
	r.mu.Lock()
	defer r.mu.Unlock()
	if (r.maps == nil || !covered(r.maps, lo, hi)) && time.Since(r.mapsAt) >= mapsRefresh {
		if ms, err := readMappings(r.pid); err == nil {
			r.maps = ms
		}
		r.mapsAt = time.Now()
	}
	ms := r.maps
	i := sort.Search(len(ms), func(i int) bool { return ms[i].Hi > lo })
	for ; i < len(ms) && ms[i].Lo < hi; i++ {
		if ms[i].anon && ms[i].readable {
			out = append(out, Region{max(lo, ms[i].Lo), min(hi, ms[i].Hi)})
		}
	}
	return out
}

// covered says whether the mappings ms cover [lo, hi) with no gap.
func covered(ms []mapping, lo, hi uint64) bool {
	i := sort.Search(len(ms), func(i int) bool { return ms[i].Hi > lo })
	for ; lo < hi; i++ {
		if i == len(ms) || ms[i].Lo > lo {
			return false
		}
		lo = ms[i].Hi
	}
	return true
}

// absent returns the parts of rs (sorted, disjoint) whose pages are in readable private
// anonymous memory and neither resident nor in swap, sorted, appended to out. The page map is
// asked once per cluster of ranges (ranges less than absentGap apart).
func (r *residency) absent(rs []Region, out []Region) ([]Region, error) {
	var anon, gone []Region
	for i := 0; i < len(rs); {
		j := i + 1
		for j < len(rs) && rs[j].Lo-rs[j-1].Hi < absentGap {
			j++
		}
		lo, hi := rs[i].Lo&^(r.page-1), (rs[j-1].Hi+r.page-1)&^(r.page-1)
		anon = r.anonParts(lo, hi, anon[:0])
		gone = gone[:0]
		for _, a := range anon {
			var err error
			if gone, err = r.notThere(a.Lo, a.Hi, gone); err != nil {
				return out, err
			}
		}
		out = intersect(rs[i:j], gone, out)
		i = j
	}
	return out, nil
}

// absentGap: ranges closer than this are asked of the page map at once (the page map of the
// gap costs less than a call of its own).
const absentGap = 1 << 20

// intersect appends the parts of rs (sorted, disjoint) that lie in gone (sorted, disjoint).
func intersect(rs, gone []Region, out []Region) []Region {
	g := 0
	for _, x := range rs {
		for g < len(gone) && gone[g].Hi <= x.Lo {
			g++
		}
		for k := g; k < len(gone) && gone[k].Lo < x.Hi; k++ {
			out = append(out, Region{max(x.Lo, gone[k].Lo), min(x.Hi, gone[k].Hi)})
		}
	}
	return out
}

// notThere appends the pages of [lo, hi) (page-aligned, in one anonymous mapping) that are
// neither resident nor in swap, nor a guard region (whose read must fail, as the process's
// own would), merged in runs.
func (r *residency) notThere(lo, hi uint64, out []Region) ([]Region, error) {
	if s := r.scan.Load(); s != scanNone {
		res, err := r.scanThere(lo, hi, s, out)
		if err == nil {
			return res, nil
		}
		if !errors.Is(err, unix.ENOTTY) && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.EOPNOTSUPP) {
			return out, err
		}
		if s == scanUntried {
			// An older kernel: without PAGE_IS_GUARD (EINVAL), or without the call at all.
			if res, err := r.scanThere(lo, hi, scanPlain, out); err == nil {
				r.scan.Store(scanPlain)
				return res, nil
			}
		}
		r.scan.Store(scanNone)
	}
	return r.readThere(lo, hi, out)
}

// The page map's ioctl (linux/fs.h): PAGEMAP_SCAN, its argument and the categories asked.
const (
	pagemapScan    = 0xC0606610 // _IOWR('f', 16, struct pm_scan_arg)
	pageIsPresent  = 1 << 3
	pageIsSwapped  = 1 << 4
	pageIsGuard    = 1 << 8
	scanVecRegions = 256
)

type pmScanArg struct {
	size, flags, start, end, walkEnd, vec, vecLen, maxPages, categoryInverted, categoryMask, categoryAnyof, returnMask uint64
}

type pageRegion struct{ start, end, categories uint64 }

// scanBuf is what one PAGEMAP_SCAN call reads and writes: on the heap (from scanBufs), where
// it does not move while the kernel writes to it.
type scanBuf struct {
	arg pmScanArg
	vec [scanVecRegions]pageRegion
}

var scanBufs = sync.Pool{New: func() any { return new(scanBuf) }}

// scanThere asks PAGEMAP_SCAN for the runs of pages of [lo, hi) that are there (or guard
// regions), and appends the runs between them.
func (r *residency) scanThere(lo, hi uint64, mode int32, out []Region) ([]Region, error) {
	want := uint64(pageIsPresent | pageIsSwapped)
	if mode != scanPlain {
		want |= pageIsGuard
	}
	sb := scanBufs.Get().(*scanBuf)
	defer scanBufs.Put(sb)
	at := lo
	for at < hi {
		sb.arg = pmScanArg{
			size: uint64(unsafe.Sizeof(pmScanArg{})), start: at, end: hi,
			vec: uint64(uintptr(unsafe.Pointer(&sb.vec[0]))), vecLen: scanVecRegions,
			categoryAnyof: want, returnMask: want,
		}
		n, _, errno := unix.Syscall(unix.SYS_IOCTL, r.pm.Fd(), pagemapScan, uintptr(unsafe.Pointer(&sb.arg)))
		runtime.KeepAlive(sb)
		if errno != 0 {
			return out, errno
		}
		end := sb.arg.walkEnd
		if n > scanVecRegions || end <= at || end > hi {
			return out, fmt.Errorf("the page map's scan of %#x-%#x answered %d runs up to %#x", at, hi, n, end)
		}
		for _, v := range sb.vec[:n] {
			if v.start > at {
				out = appendRun(out, at, min(v.start, end))
			}
			at = max(at, v.end)
		}
		if at < end {
			out = appendRun(out, at, end)
		}
		at = end
	}
	return out, nil
}

// The page map's entry bits (Documentation/admin-guide/mm/pagemap.rst).
const (
	pmPresent = 1 << 63
	pmSwapped = 1 << 62
	pmGuard   = 1 << 58
)

// readThere reads the page map's entries of [lo, hi) and appends the runs of pages that are
// not there.
func (r *residency) readThere(lo, hi uint64, out []Region) ([]Region, error) {
	var buf [4096]byte
	for at := lo; at < hi; {
		pages := min((hi-at)/r.page, uint64(len(buf)/8))
		b := buf[:pages*8]
		n, err := r.pm.ReadAt(b, int64(at/r.page*8))
		if n < len(b) {
			if err == nil {
				err = fmt.Errorf("short read of the page map at %#x", at)
			}
			return out, fmt.Errorf("reading process %d's page map: %w", r.pid, err)
		}
		for i := range pages {
			if binary.LittleEndian.Uint64(b[i*8:])&(pmPresent|pmSwapped|pmGuard) == 0 {
				out = appendRun(out, at+i*r.page, at+(i+1)*r.page)
			}
		}
		at += pages * r.page
	}
	return out, nil
}

// appendRun appends [lo, hi), merged with the last run when they touch.
func appendRun(out []Region, lo, hi uint64) []Region {
	if n := len(out); n > 0 && out[n-1].Hi == lo {
		out[n-1].Hi = hi
		return out
	}
	return append(out, Region{lo, hi})
}
