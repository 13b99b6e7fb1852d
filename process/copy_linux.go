package process

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

var errNoSpace = errors.New("no space left")

// createUnlinked opens a new file in dir that no name refers to (O_TMPFILE), mode 0600; where
// the file system cannot, a named file is created and removed before anything is written.
func createUnlinked(dir string) (*os.File, error) {
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
	if err == nil {
		return os.NewFile(uintptr(fd), dir+"/(unlinked copy)"), nil
	}
	if !errors.Is(err, unix.EOPNOTSUPP) && !errors.Is(err, unix.EISDIR) && !errors.Is(err, unix.EINVAL) {
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	f, err := os.CreateTemp(dir, ".memdoctor-copy-*")
	if err != nil {
		return nil, err
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// freeSpace is what an unprivileged user may still write in dir's file system.
func freeSpace(dir string) (uint64, bool) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return st.Bavail * uint64(st.Bsize), true
}

// prepareRoom reserves n bytes of the file (fallocate), and has the kernel hold its pages
// (reading them back: zeros) so that the copy's writes, made while the process is stopped,
// neither allocate blocks nor pages.
func prepareRoom(f *os.File, n int64) error {
	if n <= 0 {
		return nil
	}
	if err := unix.Fallocate(int(f.Fd()), 0, 0, n); err != nil {
		if errors.Is(err, unix.ENOSPC) {
			return errNoSpace
		}
		if !errors.Is(err, unix.EOPNOTSUPP) && !errors.Is(err, unix.ENOSYS) {
			return err
		}
		return nil
	}
	// Read back by a few readers at once: the kernel zeroes each page it adds.
	parts := int64(copyWorkers())
	each := (n/parts + 1<<20) &^ (1<<20 - 1)
	errs := make(chan error, parts)
	for p := range parts {
		go func() {
			buf := make([]byte, 1<<20)
			for off := p * each; off < min(n, (p+1)*each); off += int64(len(buf)) {
				if _, err := f.ReadAt(buf[:min(int64(len(buf)), n-off)], off); err != nil && err != io.EOF {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	var err error
	for range parts {
		if e := <-errs; e != nil && err == nil {
			err = e
		}
	}
	return err
}

// liveSource copies from a stopped live process: process_vm_readv moves the bytes straight
// from its pages, /proc/PID/mem is the fallback where that call is not allowed (a seccomp
// profile) and for a range it could not read whole. Pages of its anonymous memory that are not
// there are never read (a read would allocate them in the process: see residency): they are
// zeros in the copy. readv, when set, stands for process_vm_readv (tests).
type liveSource struct {
	pid   int
	mem   *LiveMemory
	novm  atomic.Bool
	readv func(local []unix.Iovec, remote []unix.RemoteIovec) (int, error)
}

// run is a part of the ranges copied that is read: its addresses and its place in the buffer.
type run struct {
	lo, hi uint64
	at     int
}

func (s *liveSource) copyTo(w io.WriterAt, off int64, rs []Region, buf []byte) (int64, error) {
	total := 0
	for _, r := range rs {
		if r.Hi < r.Lo || r.Hi-r.Lo > uint64(len(buf)-total) || r.Lo > 1<<63 {
			return 0, fmt.Errorf("copying %#x-%#x: out of range", r.Lo, r.Hi)
		}
		total += int(r.Hi - r.Lo)
	}
	if total == 0 {
		return 0, nil
	}
	b := buf[:total]
	runs, absent, err := s.runs(rs, b)
	if err != nil {
		if s.gone(rs[0].Lo) {
			return 0, errGone
		}
		return 0, err
	}
	done := 0 // bytes of the runs read, in order
	if !s.novm.Load() {
		done = s.readRuns(runs, b)
	}
	// What process_vm_readv did not read (a run it stopped at, and those after it, or all),
	// read run by run from /proc/PID/mem: it reads up to the first page it cannot (EIO past
	// it), and nothing at all once the process's memory is gone (EOF).
	for _, r := range runs {
		size := int(r.hi - r.lo)
		if done >= size {
			done -= size
			continue
		}
		from := done
		done = 0
		n, err := s.mem.f.ReadAt(b[r.at+from:r.at+size], int64(r.lo)+int64(from))
		if err != nil || n < size-from {
			switch {
			case errors.Is(err, io.EOF):
				return 0, errGone
			case err == nil:
				err = io.ErrUnexpectedEOF
			}
			if _, werr := w.WriteAt(b[:r.at+from+n], off); werr != nil {
				return 0, writeError(werr)
			}
			return absent, &unreadableError{At: r.lo + uint64(from+n), Err: err}
		}
	}
	if _, err := w.WriteAt(b, off); err != nil {
		return 0, writeError(err)
	}
	return absent, nil
}

// errGone: the process's memory went while it was copied.
var errGone = fmt.Errorf("its memory is gone: it ended (killed?) while it was stopped to be copied: %w", ErrExited)

// gone says whether the process's memory is gone: /proc/PID/mem reads nothing at addr.
func (s *liveSource) gone(addr uint64) bool {
	var b [1]byte
	n, err := s.mem.f.ReadAt(b[:], int64(addr))
	return n == 0 && errors.Is(err, io.EOF)
}

// runs splits rs (laid out one after the other in b) into the runs to read, and zeroes in b
// what is not there; it returns the runs and the bytes not there.
func (s *liveSource) runs(rs []Region, b []byte) ([]run, int64, error) {
	var gone []Region
	if s.mem.res != nil {
		var err error
		if gone, err = s.mem.res.absent(rs, nil); err != nil {
			return nil, 0, err
		}
	}
	runs := make([]run, 0, len(rs)+len(gone))
	at, g := 0, 0
	var absent int64
	for _, r := range rs {
		lo := r.Lo
		for ; g < len(gone) && gone[g].Lo < r.Hi; g++ {
			if gone[g].Lo > lo {
				runs = append(runs, run{lo, gone[g].Lo, at + int(lo-r.Lo)})
			}
			clear(b[at+int(gone[g].Lo-r.Lo) : at+int(gone[g].Hi-r.Lo)])
			absent += int64(gone[g].Hi - gone[g].Lo)
			lo = gone[g].Hi
		}
		if lo < r.Hi {
			runs = append(runs, run{lo, r.Hi, at + int(lo-r.Lo)})
		}
		at += int(r.Hi - r.Lo)
	}
	s.mem.notResident.Add(absent)
	return runs, absent, nil
}

// readRuns reads runs into b with process_vm_readv, at most maxCopyRanges at a time, and
// returns how many bytes of them it read, in order, up to the first it could not.
func (s *liveSource) readRuns(runs []run, b []byte) int {
	readv := s.readv
	if readv == nil {
		readv = func(local []unix.Iovec, remote []unix.RemoteIovec) (int, error) {
			return unix.ProcessVMReadv(s.pid, local, remote, 0)
		}
	}
	done := 0
	local := make([]unix.Iovec, 0, min(len(runs), maxCopyRanges))
	remote := make([]unix.RemoteIovec, 0, min(len(runs), maxCopyRanges))
	for len(runs) > 0 {
		batch := runs[:min(len(runs), maxCopyRanges)]
		runs = runs[len(batch):]
		local, remote = local[:0], remote[:0]
		want := 0
		for _, r := range batch {
			size := int(r.hi - r.lo)
			v := unix.Iovec{Base: &b[r.at]}
			v.SetLen(size)
			local = append(local, v)
			remote = append(remote, unix.RemoteIovec{Base: uintptr(r.lo), Len: size})
			want += size
		}
		n, err := readv(local, remote)
		switch {
		case errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM):
			s.novm.Store(true)
			return done
		case err != nil:
			// EFAULT (the first page cannot be read), ESRCH (the process is gone): told
			// apart by /proc/PID/mem.
			return done
		}
		done += min(max(n, 0), want)
		if n < want {
			return done
		}
	}
	return done
}

func writeError(err error) error {
	if errors.Is(err, unix.ENOSPC) {
		return fmt.Errorf("writing the copy: %w", errNoSpace)
	}
	return fmt.Errorf("writing the copy: %w", err)
}

func (s *liveSource) where(addr uint64) string { return mappingAt(s.pid, addr) }

// source is what a Copy of the stopped process reads.
func (p *live) source() copySource { return &liveSource{pid: p.pid, mem: p.mem} }

// urgentNice is the nice value of memdoctor's threads while a process is stopped: ahead of a
// busy machine's other work (nice 0), behind what an administrator made urgent.
const urgentNice = -10

// raisePriority lowers the calling thread's nice value to urgentNice when allowed, and returns
// what restores it. (On Linux a nice value is a thread's.)
func raisePriority() (restore func() error) {
	tid := unix.Gettid()
	old, err := unix.Getpriority(unix.PRIO_PROCESS, tid)
	if err != nil {
		return func() error { return nil }
	}
	prev := 20 - old // the system call returns 20 - nice
	if prev <= urgentNice || unix.Setpriority(unix.PRIO_PROCESS, tid, urgentNice) != nil {
		return func() error { return nil }
	}
	return func() error { return unix.Setpriority(unix.PRIO_PROCESS, tid, prev) }
}
