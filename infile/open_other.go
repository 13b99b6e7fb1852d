//go:build !unix

package infile

import "os"

// openNonblock opens path for reading (outside Unix, opening never waits for a writer).
func openNonblock(path string) (*os.File, error) { return os.Open(path) }
