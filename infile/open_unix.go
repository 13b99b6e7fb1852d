//go:build unix

package infile

import (
	"os"
	"syscall"
)

// openNonblock opens path for reading without waiting: opening a named pipe blocks until a
// writer comes, unless O_NONBLOCK is given. On a regular file the flag changes nothing.
func openNonblock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
