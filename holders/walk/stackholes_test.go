package walk

import (
	"errors"
	"fmt"
	"testing"

	"github.com/memdoctor/memdoctor/process"
	"github.com/memdoctor/memdoctor/snapshot"
)

// holeyMemory reads as zeros but where the copy holds nothing (holes), and records what was
// read.
type holeyMemory struct {
	holes []process.Region
	read  *[]process.Region
}

func (m holeyMemory) ReadMemory(buf []byte, addr uint64) (int, error) {
	for _, h := range m.holes {
		if addr < h.Hi && addr+uint64(len(buf)) > h.Lo {
			return 0, errors.New("the copy holds no memory there")
		}
	}
	clear(buf)
	*m.read = append(*m.read, process.Region{Lo: addr, Hi: addr + uint64(len(buf))})
	return len(buf), nil
}

// TestStackScanGoesAroundHoles: a stack scanned word by word (a goroutine whose frames Delve
// cannot unwind, a frame without a map) is read around what the snapshot could not copy of it
// (Skipped), and whole elsewhere.
func TestStackScanGoesAroundHoles(t *testing.T) {
	const lo, hi = 0x10000, 0x10000 + 8*4096
	snap := &snapshot.Snapshot{Skipped: []process.Region{{Lo: lo - 4096, Hi: lo + 4096}, {Lo: lo + 3*4096, Hi: lo + 5*4096}}}
	var read []process.Region
	h := &heap{r: &rt{mem: process.NewMemory(holeyMemory{snap.Skipped, &read}), arenaBytes: 64 << 20, pageSize: 8192}}
	s := &stackRoots{rs: &rootSet{h: h}}
	if err := s.conservativeRange(0, -1, lo, hi); err == nil {
		t.Fatal("a stack with holes scanned whole without error")
	}
	s.missing, read = snap.Missing, nil
	if err := s.conservativeRange(0, -1, lo, hi); err != nil {
		t.Fatalf("scanning around the holes: %v", err)
	}
	want := []process.Region{{Lo: lo + 4096, Hi: lo + 3*4096}, {Lo: lo + 5*4096, Hi: hi}}
	if fmt.Sprint(read) != fmt.Sprint(want) {
		t.Errorf("read %v, want %v: all of the stack but the holes", read, want)
	}
}
