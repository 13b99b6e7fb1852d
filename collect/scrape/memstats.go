package scrape

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// MemStats mirrors the runtime.MemStats fields that heap?debug=1 prints
// (runtime/pprof writeHeapInternal). A field the page does not print (an
// older Go, or MaxRSS on a platform without it) stays zero. PauseTotalNs,
// EnableGC and BySize are not printed.
type MemStats struct {
	Alloc, TotalAlloc, Sys, Lookups, Mallocs, Frees                    uint64
	HeapAlloc, HeapSys, HeapIdle, HeapInuse, HeapReleased, HeapObjects uint64
	StackInuse, StackSys, MSpanInuse, MSpanSys, MCacheInuse, MCacheSys uint64
	BuckHashSys, GCSys, OtherSys, NextGC, LastGC                       uint64
	PauseNs                                                            []uint64 // the 256-entry ring as printed; the latest pause is at (NumGC+255)%256
	PauseEnd                                                           []uint64 // the same ring of pause end times, Unix ns
	NumGC, NumForcedGC                                                 uint32
	GCCPUFraction                                                      float64
	DebugGC                                                            bool
	MaxRSS                                                             uint64 // peak RSS in bytes, printed on Unix and Windows; 0 when absent
}

// maxTextLine bounds the line buffer. The longest MemStats line, PauseNs
// with 256 twenty-digit numbers, is under 6 KiB; a longer line is a heap
// record (or junk) and is skipped without being buffered.
const maxTextLine = 64 << 10

// ParseMemStats reads a heap?debug=1 body, or just its MemStats block, and
// returns the MemStats from its "# Field = value" lines. It streams: memory
// use does not depend on the size of the body. It fails with ErrNoMemStats
// when there is no "# Alloc = " line, and on a malformed value of a known
// field; unknown fields are ignored and, when a field repeats, the last wins.
func ParseMemStats(r io.Reader) (MemStats, error) {
	br := bufio.NewReaderSize(r, maxTextLine)
	var ms MemStats
	found := false
	for lineNo := 1; ; lineNo++ {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if err = skipLine(br); err == nil {
				continue
			}
			line = nil
		}
		if len(line) > 0 {
			ok, perr := ms.parseLine(line)
			if perr != nil {
				return MemStats{}, fmt.Errorf("heap text line %d: %w", lineNo, perr)
			}
			found = found || ok
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return MemStats{}, fmt.Errorf("reading heap text at line %d: %w", lineNo, err)
		}
	}
	if !found {
		return MemStats{}, ErrNoMemStats
	}
	return ms, nil
}

// skipLine discards the rest of an over-long line.
func skipLine(br *bufio.Reader) error {
	for {
		_, err := br.ReadSlice('\n')
		if !errors.Is(err, bufio.ErrBufferFull) {
			return err
		}
	}
}

// parseLine parses one "# Field = value" line; other lines are ignored. It
// reports whether the line was "# Alloc = ...".
func (ms *MemStats) parseLine(line []byte) (isAlloc bool, err error) {
	rest, ok := bytes.CutPrefix(line, []byte("# "))
	if !ok {
		return false, nil
	}
	name, value, ok := bytes.Cut(rest, []byte(" = "))
	if !ok {
		return false, nil
	}
	value = bytes.TrimSpace(value)
	if err := ms.setField(string(name), value); err != nil {
		return false, fmt.Errorf("# %s = %s: %w", name, clip(value), err)
	}
	return string(name) == "Alloc", nil
}

// clip shortens a value quoted in an error.
func clip(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "…"
	}
	return string(b)
}
