//go:build !linux

package process

import (
	"errors"
	"os"
)

var errNoSpace = errors.New("no space left")

// createUnlinked creates a file in dir and removes its name before anything is written.
func createUnlinked(dir string) (*os.File, error) {
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

func freeSpace(string) (uint64, bool) { return 0, false }

func prepareRoom(*os.File, int64) error { return nil }

func (*live) source() copySource { return nil }

func raisePriority() (restore func() error) { return func() error { return nil } }
