//go:build linux

package procfs

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"unsafe"
)

// File access without allocations: paths are built NUL-terminated in a
// caller's stack array and opened with raw openat, files are read into pooled
// buffers. os.ReadFile costs several allocations per file (the *os.File, its
// cleanup, the path's C string, a growing buffer); a sample reads ~15 files
// every second.

const (
	pathMax     = 512      // stack space for a path; longer ones spill to the heap
	initialBuf  = 4 << 10  // pooled buffer size: fits status, stat, smaps_rollup
	maxPooled   = 64 << 10 // larger buffers are dropped, not pooled
	maxFileSize = 16 << 20 // whole-file reads stop here
	maxLine     = 1 << 20  // streamed lines longer than this are an error
)

// atFDCWD is AT_FDCWD (-100 on every Linux architecture) as a system call argument.
var atFDCWD = ^uintptr(99)

var errTooLarge = errors.New("file too large")

var bufPool = sync.Pool{New: func() any {
	b := make([]byte, 0, initialBuf)
	return &b
}}

func getBuf() *[]byte { return bufPool.Get().(*[]byte) }

// putBuf returns a buffer to the pool; b is the (possibly grown) buffer last
// taken from *bp.
func putBuf(bp *[]byte, b []byte) {
	if cap(b) > maxPooled {
		return
	}
	*bp = b[:0]
	bufPool.Put(bp)
}

// joinPath appends the parts and a terminating NUL to dst.
func joinPath(dst []byte, parts ...string) []byte {
	for _, p := range parts {
		dst = append(dst, p...)
	}
	return append(dst, 0)
}

// procPath appends root/proc/PID/name and a NUL to dst.
func procPath(dst []byte, root string, pid int, name string) []byte {
	dst = append(dst, root...)
	dst = append(dst, "/proc/"...)
	dst = strconv.AppendInt(dst, int64(pid), 10)
	if name != "" {
		dst = append(dst, '/')
		dst = append(dst, name...)
	}
	return append(dst, 0)
}

// pathString returns a NUL-terminated path as a string (for errors).
func pathString(path []byte) string { return string(bytes.TrimSuffix(path, []byte{0})) }

func pathError(op string, path []byte, err error) error {
	return &fs.PathError{Op: op, Path: pathString(path), Err: err}
}

// openat opens a NUL-terminated path.
func openat(path []byte, flags int) (int, error) {
	if len(path) == 0 || path[len(path)-1] != 0 {
		return -1, syscall.EINVAL
	}
	for {
		r, _, e := syscall.Syscall6(syscall.SYS_OPENAT, atFDCWD, uintptr(unsafe.Pointer(&path[0])),
			uintptr(flags|syscall.O_CLOEXEC), 0, 0, 0)
		switch e {
		case 0:
			return int(r), nil
		case syscall.EINTR:
			continue
		}
		return -1, e
	}
}

// read reads into b, retrying on EINTR.
func read(fd int, b []byte) (int, error) {
	for {
		n, err := syscall.Read(fd, b)
		if err != syscall.EINTR {
			return n, err
		}
	}
}

// readAll appends the whole file at path to buf. It returns the buffer even
// on error so that the caller can pool it.
func readAll(path, buf []byte) ([]byte, error) {
	fd, err := openat(path, syscall.O_RDONLY)
	if err != nil {
		return buf, pathError("open", path, err)
	}
	defer syscall.Close(fd)
	for {
		if len(buf) == cap(buf) {
			if cap(buf) >= maxFileSize {
				return buf, pathError("read", path, errTooLarge)
			}
			buf = slices.Grow(buf, max(cap(buf), initialBuf))
		}
		n, err := read(fd, buf[len(buf):cap(buf)])
		if err != nil {
			return buf, pathError("read", path, err)
		}
		if n == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}

// withFile reads the file at path into a pooled buffer and calls fn with its
// contents, which fn must not retain. An error from fn is wrapped with the path.
func withFile(path []byte, fn func(data []byte) error) error {
	bp := getBuf()
	data, err := readAll(path, (*bp)[:0])
	if err == nil {
		if err = fn(data); err != nil {
			err = fmt.Errorf("parse %s: %w", pathString(path), err)
		}
	}
	putBuf(bp, data)
	return err
}

// eachLine streams the file at path line by line (without the '\n') into fn
// until fn returns false. Lines must not be retained. Memory is bounded by
// the longest line, not by the file: /proc/net/tcp can be megabytes.
func eachLine(path []byte, fn func(line []byte) bool) error {
	fd, err := openat(path, syscall.O_RDONLY)
	if err != nil {
		return pathError("open", path, err)
	}
	defer syscall.Close(fd)
	bp := getBuf()
	buf := (*bp)[:0]
	defer func() { putBuf(bp, buf) }()
	for {
		if len(buf) == cap(buf) {
			if cap(buf) >= maxLine {
				return pathError("read", path, fmt.Errorf("line longer than %d bytes", maxLine))
			}
			buf = slices.Grow(buf, cap(buf))
		}
		n, err := read(fd, buf[len(buf):cap(buf)])
		if err != nil {
			return pathError("read", path, err)
		}
		if n == 0 {
			if len(buf) > 0 {
				fn(buf)
			}
			return nil
		}
		buf = buf[:len(buf)+n]
		start := 0
		for {
			i := bytes.IndexByte(buf[start:], '\n')
			if i < 0 {
				break
			}
			if !fn(buf[start : start+i]) {
				return nil
			}
			start += i + 1
		}
		buf = buf[:copy(buf, buf[start:])]
	}
}

// eachDirInt calls fn with every entry of the directory at path whose name is
// a decimal number (PIDs, TIDs, file descriptors) until fn returns false.
func eachDirInt(path []byte, fn func(n int) bool) error {
	fd, err := openat(path, syscall.O_RDONLY|syscall.O_DIRECTORY)
	if err != nil {
		return pathError("open", path, err)
	}
	defer syscall.Close(fd)
	bp := getBuf()
	buf := (*bp)[:cap(*bp)]
	defer putBuf(bp, buf)
	for {
		n, err := syscall.Getdents(fd, buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return pathError("getdents", path, err)
		}
		if n <= 0 {
			return nil
		}
		// struct linux_dirent64 { u64 ino; s64 off; u16 reclen; u8 type; char name[]; }
		for off := 0; off+19 <= n; {
			reclen := int(binary.NativeEndian.Uint16(buf[off+16:]))
			if reclen < 19 || off+reclen > n {
				return pathError("getdents", path, errors.New("corrupt directory entry"))
			}
			name := buf[off+19 : off+reclen]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			off += reclen
			if v, ok := parseUint(name); ok && v <= uint64(maxInt) {
				if !fn(int(v)) {
					return nil
				}
			}
		}
	}
}

// readlink reads the target of the symbolic link at path into buf and returns
// it; a target that fills buf is reported as truncated.
func readlink(path, buf []byte) ([]byte, error) {
	if len(path) == 0 || path[len(path)-1] != 0 || len(buf) == 0 {
		return nil, syscall.EINVAL
	}
	r, _, e := syscall.Syscall6(syscall.SYS_READLINKAT, atFDCWD, uintptr(unsafe.Pointer(&path[0])),
		uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0)
	if e != 0 {
		return nil, pathError("readlink", path, e)
	}
	if int(r) >= len(buf) {
		return buf, pathError("readlink", path, errors.New("target truncated"))
	}
	return buf[:r], nil
}

// isDir reports whether path names a directory that can be opened.
func isDir(path []byte) bool {
	fd, err := openat(path, syscall.O_RDONLY|syscall.O_DIRECTORY)
	if err != nil {
		return false
	}
	syscall.Close(fd)
	return true
}
