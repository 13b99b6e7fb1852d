package process

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
)

// LiveMemory reads a running (or stopped) process's memory through /proc/PID/mem without
// making the process bigger: the pages of its private anonymous memory that are neither
// resident nor in swap are never read, and read as zeros (see residency). Every read of a live
// process that memdoctor makes goes through one: the runtime's figures and heap profile read
// while it runs, Delve's reads and the copy made while it is stopped.
type LiveMemory struct {
	pid int
	f   *os.File
	res *residency // nil: the page map cannot be read, and every page is read
	// notResident counts the bytes read as zeros because they were not there.
	notResident atomic.Int64
}

// OpenLiveMemory opens process pid's memory for reading.
func OpenLiveMemory(pid int) (*LiveMemory, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/mem")
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("process %d: %w", pid, ErrExited)
		}
		if errors.Is(err, os.ErrPermission) {
			return nil, fmt.Errorf("process %d: %w (%v)", pid, ErrPermission, err)
		}
		return nil, fmt.Errorf("process %d: %w", pid, err)
	}
	return &LiveMemory{pid: pid, f: f, res: newResidency(pid)}, nil
}

// Close closes the process's memory.
func (m *LiveMemory) Close() error {
	m.res.close()
	return m.f.Close()
}

// NotResident is how many bytes the reads so far found not there (never touched, or given
// back to the system) and so did not read: without that care, each would have been made
// resident in the process by the read.
func (m *LiveMemory) NotResident() int64 { return m.notResident.Load() }

// PageMapRead says whether the process's page map can be read: when it cannot, reads of pages
// that are not there make the kernel allocate them in the process.
func (m *LiveMemory) PageMapRead() bool { return m.res != nil }

// ReadMemory reads len(buf) bytes at addr; a short read is an error, as Delve expects.
func (m *LiveMemory) ReadMemory(buf []byte, addr uint64) (int, error) {
	if addr > 1<<63 {
		return 0, fmt.Errorf("address %#x is out of range", addr)
	}
	n, err := m.readAt(buf, addr)
	if err == nil && n < len(buf) {
		err = fmt.Errorf("short read at %#x", addr)
	}
	return n, err
}

// readAt fills buf from addr as os.File.ReadAt does (io.EOF once the process's memory is
// gone), the pages that are not there zeroed rather than read. It returns how many bytes from
// the start are filled.
func (m *LiveMemory) readAt(buf []byte, addr uint64) (int, error) {
	if m.res == nil || len(buf) == 0 {
		return m.f.ReadAt(buf, int64(addr))
	}
	gone, err := m.res.absent([]Region{{addr, addr + uint64(len(buf))}}, nil)
	if err != nil || len(gone) == 0 {
		// A page map that cannot be read now (the process is gone): the read says why.
		return m.f.ReadAt(buf, int64(addr))
	}
	at := addr
	for _, g := range append(gone, Region{addr + uint64(len(buf)), addr + uint64(len(buf))}) {
		if g.Lo > at {
			n, err := m.f.ReadAt(buf[at-addr:g.Lo-addr], int64(at))
			if err != nil || n < int(g.Lo-at) {
				return int(at-addr) + n, err
			}
		}
		clear(buf[g.Lo-addr : g.Hi-addr])
		m.notResident.Add(int64(g.Hi - g.Lo))
		at = g.Hi
	}
	return len(buf), nil
}
