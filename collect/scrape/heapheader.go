package scrape

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// HeapProfileHeader is the first line of a heap?debug=1 page,
//
//	heap profile: 18: 4718592 [18: 4718593] @ heap/1048576
//
// the totals over all records: raw sampled counts, not scaled to estimates,
// and in-use "as of the last completed GC". The runtime adds 1 to
// AllocBytes when it equals InUseBytes (for pprof's sake).
type HeapProfileHeader struct {
	InUseObjects, InUseBytes int64
	AllocObjects, AllocBytes int64
	// MemProfileRate is the sampling rate in bytes. Go prints twice the
	// rate after "heap/" (the old C++ convention); "heap_v2/" prints it as
	// is.
	MemProfileRate int64
}

// ParseHeapProfileHeader parses the first line of a heap?debug=1 page.
func ParseHeapProfileHeader(line string) (HeapProfileHeader, error) {
	var h HeapProfileHeader
	bad := func(why string) error {
		return fmt.Errorf("heap profile header %q: %s; want like %q", clip([]byte(line)), why, "heap profile: 18: 4718592 [18: 4718593] @ heap/1048576")
	}
	rest, ok := strings.CutPrefix(strings.TrimSpace(line), "heap profile:")
	if !ok {
		return h, bad(`no "heap profile:" prefix`)
	}
	counts, sampling, ok := strings.Cut(rest, "@")
	if !ok {
		return h, bad(`no "@"`)
	}
	inuse, alloc, ok := strings.Cut(counts, "[")
	if ok {
		alloc, ok = strings.CutSuffix(strings.TrimSpace(alloc), "]")
	}
	if !ok {
		return h, bad(`no "[alloc objects: alloc bytes]"`)
	}
	var err error
	if h.InUseObjects, h.InUseBytes, err = parseCountPair(inuse); err != nil {
		return h, bad(err.Error())
	}
	if h.AllocObjects, h.AllocBytes, err = parseCountPair(alloc); err != nil {
		return h, bad(err.Error())
	}
	kind, n, ok := strings.Cut(strings.TrimSpace(sampling), "/")
	if !ok {
		return h, bad(`no "heap/rate"`)
	}
	rate, err := strconv.ParseInt(n, 10, 64)
	if err != nil || rate < 0 {
		return h, bad("bad sampling rate")
	}
	switch kind {
	case "heap":
		h.MemProfileRate = rate / 2
	case "heap_v2":
		h.MemProfileRate = rate
	default:
		return h, bad(fmt.Sprintf("unknown sampling kind %q", kind))
	}
	return h, nil
}

// parseCountPair parses "objects: bytes".
func parseCountPair(s string) (objects, bytes int64, err error) {
	a, b, ok := strings.Cut(s, ":")
	if !ok {
		return 0, 0, errors.New(`want "objects: bytes"`)
	}
	if objects, err = strconv.ParseInt(strings.TrimSpace(a), 10, 64); err != nil {
		return 0, 0, unwrapNum(err)
	}
	if bytes, err = strconv.ParseInt(strings.TrimSpace(b), 10, 64); err != nil {
		return 0, 0, unwrapNum(err)
	}
	return objects, bytes, nil
}
