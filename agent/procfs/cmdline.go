package procfs

import (
	"bytes"
	"strings"
)

// splitNUL splits NUL-terminated strings (/proc/PID/cmdline, environ). A
// trailing NUL does not make an empty last element; a process that rewrote
// its argv into one space-separated string gives a single element. Empty
// input (kernel threads, zombies) gives nil.
func splitNUL(data []byte) []string {
	data = bytes.TrimSuffix(data, []byte{0})
	if len(data) == 0 {
		return nil
	}
	// One string for the whole file; the elements share its memory.
	return strings.Split(string(data), "\x00")
}
