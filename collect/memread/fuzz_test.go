package memread

import (
	"compress/gzip"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/memdoctor/memdoctor/process"
)

// bufMem is a target's memory made of one buffer at base.
type bufMem struct {
	base uint64
	b    []byte
}

func (m bufMem) ReadMemory(buf []byte, addr uint64) (int, error) {
	if addr < m.base || addr-m.base >= uint64(len(m.b)) {
		return 0, os.ErrNotExist
	}
	n := copy(buf, m.b[addr-m.base:])
	if n < len(buf) {
		return n, os.ErrNotExist
	}
	return n, nil
}

// The bucket layout of a real Go 1.26 executable (the recorded core's), read once.
var (
	layoutOnce sync.Once
	layout     *process.BucketLayout
	layoutErr  error
)

func realLayout(t testing.TB) *process.BucketLayout {
	layoutOnce.Do(func() {
		dir, err := os.MkdirTemp("", "memread-fuzz")
		if err != nil {
			layoutErr = err
			return
		}
		defer os.RemoveAll(dir)
		var paths []string
		for _, name := range []string{"core", "holders-target"} {
			f, err := os.Open(filepath.Join("../../holders/walk/testdata/cores/amd64", name+".gz"))
			if err != nil {
				layoutErr = err
				return
			}
			zr, _ := gzip.NewReader(f)
			p := filepath.Join(dir, name)
			out, _ := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o700)
			_, err = io.Copy(out, io.LimitReader(zr, 256<<20))
			out.Close()
			f.Close()
			if err != nil {
				layoutErr = err
				return
			}
			paths = append(paths, p)
		}
		tg, err := process.OpenCore(paths[0], paths[1])
		if err != nil {
			layoutErr = err
			return
		}
		defer tg.Close()
		layout, layoutErr = process.NewBucketLayout(tg.Delve.BinInfo())
	})
	if layoutErr != nil {
		t.Fatal(layoutErr)
	}
	return layout
}

const (
	fuzzBase  = 0x10000
	fuzzCycle = fuzzBase     // runtime.mProfCycle
	fuzzHead  = fuzzBase + 8 // runtime.mbuckets
)

// bucket appends a Go 1.26 bucket (48-byte header, nstk PCs, a 128-byte record) to mem at
// its end and returns its address.
func appendBucket(mem []byte, next uint64, nstk int, allocs, frees uint64) ([]byte, uint64) {
	addr := fuzzBase + uint64(len(mem))
	b := make([]byte, 48+8*nstk+128)
	binary.LittleEndian.PutUint64(b[8:], next)
	binary.LittleEndian.PutUint64(b[16:], 1)
	binary.LittleEndian.PutUint64(b[32:], 64)
	binary.LittleEndian.PutUint64(b[40:], uint64(nstk))
	for i := range nstk {
		binary.LittleEndian.PutUint64(b[48+8*i:], 0x401000+uint64(i))
	}
	rec := b[48+8*nstk:]
	binary.LittleEndian.PutUint64(rec[0:], allocs)
	binary.LittleEndian.PutUint64(rec[8:], frees)
	binary.LittleEndian.PutUint64(rec[16:], allocs*64)
	binary.LittleEndian.PutUint64(rec[24:], frees*64)
	return append(mem, b...), addr
}

var loopSeed []byte

// FuzzBucketList walks hostile bucket lists (loops, torn counts, wild links, huge stacks):
// the walk ends, in bounded memory, and every record it keeps is a state the runtime can be in.
func FuzzBucketList(f *testing.F) {
	mem := make([]byte, 16)
	mem, b1 := appendBucket(mem, 0, 3, 10, 4)
	mem, b2 := appendBucket(mem, b1, 2, 5, 5)
	binary.LittleEndian.PutUint64(mem[8:], b2)
	f.Add(mem)
	loop := append([]byte(nil), mem...)
	binary.LittleEndian.PutUint64(loop[int(b1-fuzzBase)+8:], b2) // b1 -> b2 -> b1 ...
	loopSeed = loop
	f.Add(loop)
	torn := append([]byte(nil), mem...)
	binary.LittleEndian.PutUint64(torn[int(b1-fuzzBase)+48+24+16:], 7) // alloc_bytes not allocs*size
	f.Add(torn)
	// CI's crasher: frees of 2^61+5 objects of 64 bytes wrap to the 320 bytes read, and
	// another cycle's allocations let the bucket's total pass; active frees more than it
	// allocated.
	wrapped := append([]byte(nil), mem...)
	rec := wrapped[int(b2-fuzzBase)+48+8*2:]
	binary.LittleEndian.PutUint64(rec[8:], 1<<61+5)
	binary.LittleEndian.PutUint64(rec[24:], 320)
	binary.LittleEndian.PutUint64(rec[32+2*32:], 1<<63)
	f.Add(wrapped)
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 16 {
			return
		}
		r := &Reader{mem: process.NewMemory(bufMem{fuzzBase, data}), bl: realLayout(t), static: true,
			sym: map[string]process.Symbol{symCycle: {Addr: fuzzCycle}, symBuckets: {Addr: fuzzHead}}}
		w, _, err := r.readBuckets()
		if err != nil {
			return
		}
		r.pub.publish(w)
		if len(w.records) > MaxBuckets {
			t.Fatalf("%d records", len(w.records))
		}
		if len(data) == len(loopSeed) && string(data) == string(loopSeed) && (!w.cut || len(w.records) != 2) {
			t.Fatalf("a looping list: %d records, cut %v", len(w.records), w.cut)
		}
		for _, rec := range w.records {
			if rec.view.Frees > rec.view.Allocs || len(rec.stack) > process.MaxBucketStack || rec.view.AllocBytes != rec.view.Allocs*rec.size {
				t.Fatalf("an impossible record kept: %+v", rec)
			}
		}
	})
}

// FuzzExeLine reads hostile lines of /proc/PID/maps.
func FuzzExeLine(f *testing.F) {
	f.Add("00400000-006ce000 r-xp 00000000 08:01 123 /usr/bin/x", "/usr/bin/x")
	f.Add("zz-1 r-xp 0 0 0 /x", "/x")
	f.Fuzz(func(t *testing.T, line, exe string) {
		if m, ok := parseExeLine(line, exe); ok && (m.limit <= m.start || m.file != exe) {
			t.Fatalf("%q: %+v", line, m)
		}
	})
}

// FuzzHeapGoal: the goal is never below the live heap when a memory limit sets it, whatever
// the pacer's figures.
func FuzzHeapGoal(f *testing.F) {
	f.Add(uint64(8<<20), uint64(0), ^uint64(0), int64(1<<62), uint64(1<<20), uint64(4<<20), uint64(16<<20), uint64(4<<20))
	f.Add(uint64(8<<20), uint64(0), ^uint64(0), int64(10<<20), uint64(1<<20), uint64(4<<20), uint64(16<<20), uint64(4<<20))
	f.Fuzz(func(t *testing.T, pct, sweep, trig uint64, limit int64, free, alloc, mapped, marked uint64) {
		in := goalInputs{gcPercentGoal: pct, sweepDistMinTrigger: sweep, triggered: trig, memoryLimit: limit,
			heapFree: free, heapAlloc: alloc, mappedReady: mapped, heapMarked: marked}
		if g, lim := heapGoal(in), memoryLimitGoal(in); lim < pct && g != lim || lim < marked && limit >= 0 {
			t.Fatalf("goal %d, limit's %d, GOGC's %d, live %d", g, lim, pct, marked)
		}
	})
}
