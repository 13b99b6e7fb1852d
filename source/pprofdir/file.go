package pprofdir

import (
	"compress/gzip"
	"io"

	"github.com/memdoctor/memdoctor/collect/pprofio"
	"github.com/memdoctor/memdoctor/infile"
)

// kind of input a file is, from its first bytes.
type fileKind int

const (
	kindOther   fileKind = iota // neither a profile nor text: skipped
	kindProfile                 // a profile (protobuf, legacy text, goroutine dump), maybe gzipped
	kindText                    // text: a gctrace log if it holds gc lines
)

// sniffFile reads the first bytes of a regular file (those it decompresses to, when it is
// gzipped) and says what it may be. It reads at most pprofio.SniffLen bytes of either.
func sniffFile(path string) (kind fileKind, gzipped bool, err error) {
	rf, err := infile.Open(path, 0) // a regular file still, never waiting on a pipe
	if err != nil {
		return kindOther, false, err
	}
	defer rf.Close()
	f := io.NewSectionReader(rf, 0, rf.Size())
	head := make([]byte, pprofio.SniffLen)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return kindOther, false, err
	}
	head = head[:n]
	format := pprofio.Sniff(head)
	if format == pprofio.FormatGzip {
		gzipped = true
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return kindOther, true, err
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			return kindProfile, true, nil // a damaged gzip: reading it as a profile says why
		}
		inner := make([]byte, pprofio.SniffLen)
		n, err := io.ReadFull(zr, inner)
		if n == 0 && err != nil {
			return kindProfile, true, nil
		}
		format = pprofio.Sniff(inner[:n])
	}
	switch format {
	case pprofio.FormatProto, pprofio.FormatLegacy, pprofio.FormatGoroutineText:
		return kindProfile, gzipped, nil
	case pprofio.FormatText:
		return kindText, gzipped, nil
	}
	return kindOther, gzipped, nil
}
