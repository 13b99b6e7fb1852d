package memread

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/google/pprof/profile"

	"github.com/memdoctor/memdoctor/process"
)

// HeapProfile reads the heap profile from the target's memory, while it runs, and returns it
// as /debug/pprof/heap would serve it: the same sample types, values (scaled by the rate as
// runtime/pprof scales them), stacks, functions, files and lines, and the "bytes" label.
func (r *Reader) HeapProfile() (*profile.Profile, *HeapReading, error) {
	start := time.Now()
	read0 := r.mem.BytesRead()
	rate, err := r.MemProfileRate()
	if err != nil {
		return nil, nil, err
	}
	w, retries, err := r.readBuckets()
	if err != nil {
		return nil, nil, err
	}
	r.pub.publish(w)
	hr := &HeapReading{Records: len(w.records), Skipped: w.skipped, Rate: rate, Retries: retries, Notes: w.notes}
	p := r.buildHeap(w.records, rate, start)
	hr.Took, hr.Bytes = time.Since(start), r.mem.BytesRead()-read0
	return p, hr, nil
}

// buildHeap is writeHeapProto over the records, in the list's order (newest bucket first).
func (r *Reader) buildHeap(recs []record, rate int64, at time.Time) *profile.Profile {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"},
			{Type: "inuse_objects", Unit: "count"}, {Type: "inuse_space", Unit: "bytes"}},
		PeriodType: &profile.ValueType{Type: "space", Unit: "bytes"},
		Period:     rate,
		TimeNanos:  at.UnixNano(),
	}
	m := r.exe.mapping()
	if m != nil {
		p.Mapping = []*profile.Mapping{m}
	}
	locs := newLocations(r.syms, p, m)
	for _, rec := range recs {
		v := rec.view
		s := &profile.Sample{Location: locs.heapStack(rec.stack), Value: make([]int64, 4)}
		s.Value[0], s.Value[1] = scaleHeapSample(int64(v.Allocs), int64(v.AllocBytes), rate)
		s.Value[2], s.Value[3] = scaleHeapSample(int64(v.Allocs-v.Frees), int64(v.AllocBytes-v.FreeBytes), rate)
		// Go 1.26 labels the average size of the allocations (when there were any), Go 1.27
		// the bucket's object size always: the same number where both say one.
		if size := labelSize(rec, r.bl.HasBytes()); size != 0 {
			s.NumLabel = map[string][]int64{"bytes": {size}}
		}
		p.Sample = append(p.Sample, s)
	}
	return p
}

func labelSize(rec record, hasBytes bool) int64 {
	if !hasBytes {
		return int64(rec.size)
	}
	if rec.view.Allocs > 0 {
		return int64(rec.view.AllocBytes / rec.view.Allocs)
	}
	return 0
}

// scaleHeapSample is runtime/pprof's: each sample of a Poisson process of mean rate bytes
// stands for 1/(1-e^(-avg/rate)) allocations of its average size.
func scaleHeapSample(count, size, rate int64) (int64, int64) {
	if count == 0 || size == 0 {
		return 0, 0
	}
	if rate <= 1 {
		return count, size
	}
	avg := float64(size) / float64(count)
	scale := 1 / (1 - math.Exp(-avg/float64(rate)))
	return int64(float64(count) * scale), int64(float64(size) * scale)
}

// exeMapping is the executable's text mapping, which every location of a profile falls in:
// pprof's tools then take its functions as already symbolized.
type exeMapping struct {
	start, limit, offset uint64
	file                 string
}

func (e exeMapping) mapping() *profile.Mapping {
	if e.limit == 0 {
		return nil
	}
	return &profile.Mapping{ID: 1, Start: e.start, Limit: e.limit, Offset: e.offset, File: e.file,
		HasFunctions: true, HasFilenames: true, HasLineNumbers: true, HasInlineFrames: true}
}

// exeMappingOf finds the executable's text in a live process's /proc/PID/maps; a core's
// profile has no mapping.
func exeMappingOf(t *process.Target) exeMapping {
	if t.Kind != "process" {
		return exeMapping{}
	}
	f, err := os.Open("/proc/" + strconv.Itoa(t.PID) + "/maps")
	if err != nil {
		return exeMapping{}
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 0; sc.Scan() && n < 1<<16; n++ {
		if m, ok := parseExeLine(sc.Text(), t.Exe); ok {
			return m
		}
	}
	return exeMapping{}
}

// parseExeLine reads a line of /proc/PID/maps ("lo-hi perms offset dev inode path"), keeping
// the executable's text.
func parseExeLine(line, exe string) (exeMapping, bool) {
	fs := strings.Fields(line)
	if len(fs) < 6 || !strings.Contains(fs[1], "x") || strings.Join(fs[5:], " ") != exe {
		return exeMapping{}, false
	}
	lo, hi, ok := strings.Cut(fs[0], "-")
	if !ok {
		return exeMapping{}, false
	}
	a, err1 := strconv.ParseUint(lo, 16, 64)
	b, err2 := strconv.ParseUint(hi, 16, 64)
	off, err3 := strconv.ParseUint(fs[2], 16, 64)
	if err1 != nil || err2 != nil || err3 != nil || b <= a {
		return exeMapping{}, false
	}
	return exeMapping{start: a, limit: b, offset: off, file: exe}, true
}

// String says what a reading found, for logs.
func (h *HeapReading) String() string {
	return fmt.Sprintf("%d buckets (%d left out), rate %d, %d retries, %s, %d bytes read", h.Records, h.Skipped, h.Rate, h.Retries, h.Took.Round(time.Microsecond), h.Bytes)
}
