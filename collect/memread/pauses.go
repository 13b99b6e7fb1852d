package memread

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/go-delve/delve/pkg/dwarf/godwarf"
	"github.com/go-delve/delve/pkg/proc"
)

// The runtime's stop-the-world pauses, as it records them for runtime/metrics'
// /sched/pauses/{stopping,total}/{gc,other}:seconds: four time histograms in runtime.sched
// (stwStoppingTimeGC, stwStoppingTimeOther, stwTotalTimeGC, stwTotalTimeOther; Go 1.22 and
// later), each an HDR histogram of nanoseconds (runtime/histogram.go: buckets by the highest
// set bit from 2^9 to 2^47, four sub-buckets each, then an overflow count). Reading them costs
// the process nothing: what its pauses were while memdoctor's requests ran, in its own words.

// Time histogram geometry (runtime/histogram.go, the same in Go 1.22 to 1.27).
const (
	timeHistMinBucketBits = 9
	timeHistMaxBucketBits = 48
	timeHistSubBucketBits = 2
	timeHistNumSubBuckets = 1 << timeHistSubBucketBits
	timeHistNumBuckets    = timeHistMaxBucketBits - timeHistMinBucketBits + 1
	timeHistCounts        = timeHistNumBuckets * timeHistNumSubBuckets
)

// Pauses is one reading of the runtime's stop-the-world pause histograms: Total is each
// pause from the stop's request to the world's restart; Stopping the part spent stopping
// it. GC's are the collector's own; Other's every other cause (runtime.ReadMemStats,
// goroutine profiles, debug.SetGCPercent, ...).
type Pauses struct {
	TotalGC, TotalOther, StoppingGC, StoppingOther PauseHistogram
}

// PauseHistogram is a cumulative count of pauses by duration bucket: Counts[i] counts the
// pauses between PauseBucketLow(i) and PauseBucketLow(i+1); Overflow those longer still.
type PauseHistogram struct {
	Counts   [timeHistCounts]uint64
	Overflow uint64
}

// PauseBucketLow is the lower bound of bucket i of a PauseHistogram (i in 0..len(Counts)); the
// bound of the last is where the overflow starts.
func PauseBucketLow(i int) time.Duration {
	b, j := i/timeHistNumSubBuckets, uint64(i%timeHistNumSubBuckets)
	if b == 0 {
		return time.Duration(j << (timeHistMinBucketBits - 1 - timeHistSubBucketBits))
	}
	bit := uint(b + timeHistMinBucketBits - 1)
	return time.Duration(uint64(1)<<(bit-1) | j<<(bit-1-timeHistSubBucketBits))
}

// Since is what happened between an earlier reading and h: how many pauses, and the upper
// bound of the longest one's bucket (0 when none).
func (h PauseHistogram) Since(before PauseHistogram) (n uint64, longest time.Duration) {
	for i := range h.Counts {
		if d := h.Counts[i] - before.Counts[i]; h.Counts[i] > before.Counts[i] {
			n += d
			longest = PauseBucketLow(i + 1)
		}
	}
	if h.Overflow > before.Overflow {
		n += h.Overflow - before.Overflow
		longest = PauseBucketLow(timeHistCounts) // the histogram's end: a day or more
	}
	return n, longest
}

// pauseLayout is where runtime.sched keeps its four pause histograms.
type pauseLayout struct {
	totalGC, totalOther, stoppingGC, stoppingOther int64 // offsets of the counts in runtime.schedt
	overflow                                       int64 // offset of overflow in runtime.timeHistogram, from its counts
}

func newPauseLayout(bi *proc.BinaryInfo) (*pauseLayout, error) {
	sched := newFieldSet(bi, "runtime.schedt")
	if sched.err != nil {
		return nil, sched.err
	}
	h := newFieldSet(bi, "runtime.timeHistogram")
	if h.err != nil {
		return nil, h.err
	}
	counts, err := h.s.Off("counts")
	if err != nil {
		return nil, err
	}
	overflow, err := h.s.Off("overflow")
	if err != nil {
		return nil, err
	}
	t, err := h.s.FieldType("counts")
	if err != nil {
		return nil, err
	}
	if at, ok := godwarf.ResolveTypedef(t).(*godwarf.ArrayType); !ok || at.Count != timeHistCounts {
		return nil, fmt.Errorf("runtime.timeHistogram.counts is not an array of %d counts", timeHistCounts)
	}
	l := &pauseLayout{overflow: overflow - counts}
	for _, f := range []struct {
		name string
		off  *int64
	}{{"stwTotalTimeGC", &l.totalGC}, {"stwTotalTimeOther", &l.totalOther}, {"stwStoppingTimeGC", &l.stoppingGC}, {"stwStoppingTimeOther", &l.stoppingOther}} {
		off, err := sched.s.Off(f.name)
		if err != nil {
			return nil, err
		}
		*f.off = off + counts
	}
	return l, nil
}

// Pauses reads the runtime's stop-the-world pause histograms, while the process runs (each
// count is a word the runtime adds to atomically: a reading may miss a pause recorded
// meanwhile, never invent one). It fails on a runtime without them (before Go 1.22).
func (r *Reader) Pauses() (Pauses, error) {
	var p Pauses
	if r.pl == nil && r.noPauses == nil {
		if r.t == nil {
			return p, ErrDetached
		}
		if r.pl, r.noPauses = newPauseLayout(r.t.Delve.BinInfo()); r.noPauses != nil {
			r.pl = nil
		}
	}
	if r.noPauses != nil {
		return p, fmt.Errorf("the runtime's pause histograms: %w", r.noPauses)
	}
	sched := r.sym[symSched].Addr
	buf := make([]byte, (timeHistCounts+3)*8)
	for _, h := range []struct {
		off int64
		out *PauseHistogram
	}{{r.pl.totalGC, &p.TotalGC}, {r.pl.totalOther, &p.TotalOther}, {r.pl.stoppingGC, &p.StoppingGC}, {r.pl.stoppingOther, &p.StoppingOther}} {
		n := max(int64(timeHistCounts*8), r.pl.overflow+8)
		if n > int64(len(buf)) {
			return p, fmt.Errorf("runtime.timeHistogram: overflow at %d, past its counts", r.pl.overflow)
		}
		if err := r.mem.Read(buf[:n], sched+uint64(h.off)); err != nil {
			return p, fmt.Errorf("runtime.sched's pause histograms: %w", err)
		}
		for i := range h.out.Counts {
			h.out.Counts[i] = binary.LittleEndian.Uint64(buf[i*8:])
		}
		h.out.Overflow = binary.LittleEndian.Uint64(buf[r.pl.overflow:])
	}
	return p, nil
}
