package record

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// FS is the file system a Writer writes to: the operating system's (OSFS) unless a test
// gives one that fails the way a full disk does.
type FS interface {
	MkdirAll(path string, perm fs.FileMode) error
	Stat(name string) (fs.FileInfo, error)
	OpenFile(name string, flag int, perm fs.FileMode) (File, error)
	Rename(oldpath, newpath string) error
	Remove(name string) error
}

// File is a file of an FS, open for writing.
type File interface {
	io.Writer
	io.Closer
}

// OSFS is the operating system's file system.
type OSFS struct{}

func (OSFS) MkdirAll(path string, perm fs.FileMode) error { return os.MkdirAll(path, perm) }
func (OSFS) Stat(name string) (fs.FileInfo, error)        { return os.Stat(name) }
func (OSFS) Rename(oldpath, newpath string) error         { return os.Rename(oldpath, newpath) }
func (OSFS) Remove(name string) error                     { return os.Remove(name) }

func (OSFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	return os.OpenFile(name, flag, perm)
}

// writeFileAtomic writes data to a new temporary file next to path (a dot file, which readers
// skip) and renames it into place: path is whole or unchanged, whatever fails.
func writeFileAtomic(fsys FS, path string, data []byte) error {
	f, tmp, err := createTemp(fsys, path)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, unwrapPathError(err))
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fsys.Rename(tmp, path)
	}
	if err != nil {
		fsys.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, unwrapPathError(err))
	}
	return nil
}

// createTemp creates ".BASE.tmpRANDOM" in path's directory, as os.CreateTemp does.
func createTemp(fsys FS, path string) (File, string, error) {
	dir, base := filepath.Split(path)
	for range 100 {
		tmp := filepath.Join(dir, "."+base+".tmp"+strconv.FormatUint(rand.Uint64(), 36))
		f, err := fsys.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, tmp, err
	}
	return nil, "", errors.New("cannot find an unused temporary file name")
}
