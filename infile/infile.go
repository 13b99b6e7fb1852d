// Package infile opens the files memdoctor reads (a session's manifest, samples, gctrace
// log, profiles and traces) so that no file can hang it or make it read without end. Open
// takes regular files only: a named pipe or a device such as /dev/zero, behind a symbolic
// link or not, is refused before anything is read, and opening never waits for a pipe's
// writer. A file larger than the caller's bound is refused, and reading stops at the size
// the file had when it was opened, however it grows. OpenArg, for a path the user names on
// the command line, also takes a pipe (memdoctor diff <(curl ...) ...), read within the
// bound. It is a leaf of memdoctor's layers (docs/development.md): it imports nothing of
// memdoctor's, and the session, the holders and the readers of profiles open through it.
package infile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ErrNotRegular is wrapped by the errors of paths that are not regular files.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is wrapped by the errors of files over the caller's bound.
var ErrTooLarge = errors.New("larger than memdoctor reads")

// File is a file opened for reading within its bound.
type File struct {
	f    *os.File
	size int64 // -1 for a pipe
	left int64 // bytes Read may still return; -1 = no bound (a pipe without one)
	max  int64
}

// Open opens the regular file at path for reading. max bounds its size (0 = no bound).
// Errors are *fs.PathError naming path, wrapping ErrNotRegular or ErrTooLarge when the file
// is refused.
func Open(path string, max int64) (*File, error) { return open(path, max, false) }

// OpenArg is Open for a path the user named: a pipe is accepted too (a shell's <(...)), and
// reading it fails with ErrTooLarge past max bytes (0 = no bound). Devices, sockets and
// directories are refused.
func OpenArg(path string, max int64) (*File, error) { return open(path, max, true) }

func open(path string, max int64, pipes bool) (*File, error) {
	f, err := openNonblock(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	mode := st.Mode()
	switch {
	case mode.IsRegular():
		if max > 0 && st.Size() > max {
			f.Close()
			return nil, &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w: %s, over %s", ErrTooLarge, formatBytes(st.Size()), formatBytes(max))}
		}
		return &File{f: f, size: st.Size(), left: st.Size(), max: max}, nil
	case pipes && mode&fs.ModeNamedPipe != 0:
		left := int64(-1)
		if max > 0 {
			left = max
		}
		return &File{f: f, size: -1, left: left, max: max}, nil
	}
	f.Close()
	return nil, &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w: it is %s", ErrNotRegular, describe(path, mode))}
}

// describe names a file's type, and where a symbolic link led.
func describe(path string, mode fs.FileMode) string {
	var what string
	switch {
	case mode.IsDir():
		what = "a directory"
	case mode&fs.ModeNamedPipe != 0:
		what = "a named pipe"
	case mode&fs.ModeCharDevice != 0:
		what = "a character device"
	case mode&fs.ModeDevice != 0:
		what = "a block device"
	case mode&fs.ModeSocket != 0:
		what = "a socket"
	default:
		what = "not a regular file (" + mode.Type().String() + ")"
	}
	if target, err := os.Readlink(path); err == nil {
		return fmt.Sprintf("%s (a symbolic link to %s)", what, target)
	}
	return what
}

// Size is the file's size when it was opened; -1 for a pipe.
func (f *File) Size() int64 { return f.size }

// Read reads no further than the size the file had when it was opened (for a pipe: than
// the bound, past which it fails with ErrTooLarge).
func (f *File) Read(p []byte) (int, error) {
	if f.left < 0 { // a pipe without a bound
		return f.f.Read(p)
	}
	if f.left == 0 {
		if f.size >= 0 || len(p) == 0 {
			return 0, io.EOF
		}
		var one [1]byte // a pipe at its bound: does it go on?
		if n, err := f.f.Read(one[:]); n > 0 {
			return 0, &fs.PathError{Op: "read", Path: f.f.Name(), Err: fmt.Errorf("%w: more than %s", ErrTooLarge, formatBytes(f.max))}
		} else if err != nil {
			return 0, err
		}
		return 0, nil
	}
	if int64(len(p)) > f.left {
		p = p[:f.left]
	}
	n, err := f.f.Read(p)
	f.left -= int64(n)
	if err == nil && f.left == 0 && f.size >= 0 {
		err = io.EOF
	}
	return n, err
}

// ReadAt reads within the size the file had when opened; a pipe cannot be read at an offset.
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	if f.size < 0 {
		return 0, &fs.PathError{Op: "readat", Path: f.f.Name(), Err: errors.ErrUnsupported}
	}
	if off >= f.size {
		return 0, io.EOF
	}
	short := false
	if int64(len(p)) > f.size-off {
		p, short = p[:f.size-off], true
	}
	n, err := f.f.ReadAt(p, off)
	if err == nil && short {
		err = io.EOF
	}
	return n, err
}

// Close closes the file.
func (f *File) Close() error { return f.f.Close() }

// ReadFile reads the whole regular file at path, refusing it past max bytes (0 = no bound).
func ReadFile(path string, max int64) ([]byte, error) {
	f, err := Open(path, max)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, 0, f.size)
	for len(b) < cap(b) {
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	return b, nil
}

// Check says whether path names a regular file of at most max bytes (0 = no bound), without
// opening it: for listings, where each file is opened later. The error is as Open's.
func Check(path string, max int64) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	switch {
	case !st.Mode().IsRegular():
		return &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w: it is %s", ErrNotRegular, describe(path, st.Mode()))}
	case max > 0 && st.Size() > max:
		return &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w: %s, over %s", ErrTooLarge, formatBytes(st.Size()), formatBytes(max))}
	}
	return nil
}

func formatBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.3g GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.3g MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.3g KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
