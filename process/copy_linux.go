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
// profile) and for a range it could not read whole. readv, when set, stands for
// process_vm_readv (tests).
type liveSource struct {
	pid   int
	mem   io.ReaderAt
	novm  atomic.Bool
	readv func(local []unix.Iovec, remote []unix.RemoteIovec) (int, error)
}

func (s *liveSource) copyTo(w io.WriterAt, off int64, rs []Region, buf []byte) error {
	total := 0
	remote := make([]unix.RemoteIovec, 0, len(rs))
	for _, r := range rs {
		if r.Hi < r.Lo || r.Hi-r.Lo > uint64(len(buf)-total) || r.Lo > 1<<63 {
			return fmt.Errorf("copying %#x-%#x: out of range", r.Lo, r.Hi)
		}
		remote = append(remote, unix.RemoteIovec{Base: uintptr(r.Lo), Len: int(r.Hi - r.Lo)})
		total += int(r.Hi - r.Lo)
	}
	if total == 0 {
		return nil
	}
	b := buf[:total]
	done := 0
	if !s.novm.Load() {
		local := []unix.Iovec{{Base: &b[0]}}
		local[0].SetLen(len(b))
		readv := s.readv
		if readv == nil {
			readv = func(local []unix.Iovec, remote []unix.RemoteIovec) (int, error) {
				return unix.ProcessVMReadv(s.pid, local, remote, 0)
			}
		}
		n, err := readv(local, remote)
		switch {
		case errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM):
			s.novm.Store(true)
		case err == nil:
			done = min(max(n, 0), total)
		}
		// Any other error (EFAULT: the first page cannot be read; ESRCH: the process is
		// gone) is told apart by /proc/PID/mem below.
	}
	// What process_vm_readv did not read (a range it stopped at, or all of it), read range by
	// range from /proc/PID/mem: it reads up to the first page it cannot (EIO past it), and
	// nothing at all once the process's memory is gone (EOF).
	at := 0
	for _, r := range rs {
		size := int(r.Hi - r.Lo)
		if at+size > done {
			from := max(done-at, 0)
			n, err := s.mem.ReadAt(b[at+from:at+size], int64(r.Lo)+int64(from))
			if err != nil || n < size-from {
				switch {
				case errors.Is(err, io.EOF):
					return fmt.Errorf("its memory is gone: it ended (killed?) while it was stopped to be copied: %w", ErrExited)
				case err == nil:
					err = io.ErrUnexpectedEOF
				}
				if _, werr := w.WriteAt(b[:at+from+n], off); werr != nil {
					return writeError(werr)
				}
				return &unreadableError{At: r.Lo + uint64(from+n), Err: err}
			}
		}
		at += size
	}
	if _, err := w.WriteAt(b, off); err != nil {
		return writeError(err)
	}
	return nil
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
