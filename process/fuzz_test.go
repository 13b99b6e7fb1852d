package process

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
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

// FuzzPclntab reads a function table whose every byte, and every pointer and length of the
// module data that locates it, is hostile: lookups return a function or nothing, never crash.
func FuzzPclntab(f *testing.F) {
	f.Add(make([]byte, 256), uint64(0x1000), uint64(0x1100), uint8(4))
	seed := make([]byte, 512)
	binary.LittleEndian.PutUint32(seed[0x80:], 0)    // ftab[0].entryoff
	binary.LittleEndian.PutUint32(seed[0x84:], 0x10) // ftab[0].funcoff
	binary.LittleEndian.PutUint32(seed[0x88:], 0x40) // ftab[1] ends the table
	f.Add(seed, uint64(0x1000), uint64(0x1040), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, minpc, maxpc uint64, nftab uint8) {
		const base = 0x1000
		m := newMemory(bufMem{base, data})
		size := uint64(len(data))
		tabs := Tables{Text: base, MinPC: minpc, MaxPC: maxpc, GoFunc: base,
			FuncNameTab: Slice{base, size}, PCTab: Slice{base, size}, PCLnTable: Slice{base, size},
			FuncTab: Slice{base + min(0x80, size), uint64(nftab)}, CUTab: Slice{base, size / 4}, FileTab: Slice{base, size}}
		p, err := ReadPclntab(m, tabs, "amd64")
		if err != nil {
			return
		}
		for pc := minpc; pc < maxpc && pc < minpc+64; pc++ {
			if fn, ok := p.FuncForPC(pc); ok {
				fn.PCData(PCDataStackMap, pc)
				fn.SPDelta(pc)
				fn.FuncData(FuncDataLocalsPointerMaps)
			}
			p.FuncName(pc)
			p.FuncInfo(pc)
			p.Line(pc)
			if pcs := p.LogicalPCs(pc); len(pcs) == 0 || len(pcs) > 65 || pcs[0] != pc {
				t.Fatalf("LogicalPCs(%#x) = %#x", pc, pcs)
			}
		}
	})
}

// FuzzMapsLine reads hostile lines of /proc/PID/maps.
func FuzzMapsLine(f *testing.F) {
	f.Add("7f0000000000-7f0000001000 r-xp 00000000 08:01 123 /usr/bin/x")
	f.Add("0-ffffffffffffffff rw-p 0 0 0")
	f.Add("zz-1 r")
	f.Fuzz(func(t *testing.T, line string) {
		if r, ok := parseMapsLine(line); ok && r.Hi <= r.Lo {
			t.Errorf("%q: an empty region %x-%x", line, r.Lo, r.Hi)
		}
	})
}

// FuzzCoreRegions reads the loadable segments of hostile core files.
func FuzzCoreRegions(f *testing.F) {
	f.Add([]byte("\x7fELF\x02\x01\x01\x00"))
	f.Add(make([]byte, 64))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "core")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		rs, err := coreRegions(path)
		if err != nil {
			return
		}
		for i, r := range rs {
			if r.Hi <= r.Lo || (i > 0 && r.Lo <= rs[i-1].Hi) {
				t.Fatalf("regions not sorted and merged: %v", rs)
			}
		}
		checkCoreFile(path)
	})
}

// FuzzAuxv reads hostile auxiliary vectors.
func FuzzAuxv(f *testing.F) {
	f.Add(binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, 9), 0x401000))
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		auxvEntryOf(b)
	})
}

// layout126 and layout127 are the memory-profile bucket layouts of Go 1.26 (counts and bytes
// per cycle) and Go 1.27 (counts only) on 64-bit, as DWARF gives them
// (TestBucketLayoutOfRecordedCore checks the first against a real executable).
func layout126() *BucketLayout {
	return &BucketLayout{Header: 48, Record: 128, allnext: Field{8, 8}, typ: Field{16, 8}, size: Field{32, 8}, nstk: Field{40, 8},
		active: 0, future: 32, cycle: 32, allocs: Field{0, 8}, frees: Field{8, 8}, allocBytes: Field{16, 8}, freeBytes: Field{24, 8},
		Futures: 3, hasBytes: true}
}

func layout127() *BucketLayout {
	return &BucketLayout{Header: 48, Record: 64, allnext: Field{8, 8}, typ: Field{16, 8}, size: Field{32, 8}, nstk: Field{40, 8},
		active: 0, future: 16, cycle: 16, allocs: Field{0, 8}, frees: Field{8, 8}, Futures: 3}
}

// FuzzReadBucket decodes hostile bucket memory with both releases' layouts: a bucket is read
// whole within its bounds, or refused; never more than MaxBucketStack frames.
func FuzzReadBucket(f *testing.F) {
	seed := make([]byte, 48+3*8+128)
	binary.LittleEndian.PutUint64(seed[16:], 1)  // typ: memProfile
	binary.LittleEndian.PutUint64(seed[32:], 64) // size
	binary.LittleEndian.PutUint64(seed[40:], 3)  // nstk
	binary.LittleEndian.PutUint64(seed[72:], 5)  // active.allocs
	binary.LittleEndian.PutUint64(seed[88:], 320)
	f.Add(seed, uint8(0))
	f.Add(seed[:40], uint8(1))
	huge := append([]byte(nil), seed...)
	binary.LittleEndian.PutUint64(huge[40:], 1<<62)
	f.Add(huge, uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, off uint8) {
		m := newMemory(bufMem{0x1000, data})
		for _, l := range []*BucketLayout{layout126(), layout127()} {
			b, err := l.ReadBucket(m, 0x1000+uint64(off)&^7)
			if err != nil {
				continue
			}
			if len(b.Stack) > MaxBucketStack || uint64(len(b.Stack))*8+uint64(l.Header+l.Record) > uint64(len(data)) {
				t.Fatalf("a bucket of %d frames read from %d bytes", len(b.Stack), len(data))
			}
			if !l.hasBytes && (b.Active.AllocBytes != b.Active.Allocs*b.Size) {
				t.Fatalf("Go 1.27's bytes are not the counts times the size: %+v", b)
			}
		}
	})
}
