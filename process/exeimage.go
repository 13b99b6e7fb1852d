package process

import (
	"debug/elf"
	"fmt"
	"os"
	"sort"
)

// exeImage is what a copy reads from the executable's file rather than from the process: the
// segments the process cannot have changed. Code (read and execute) never changes; read-only
// data does not either in an executable loaded at the address it was linked for (ET_EXEC),
// but a position-independent one's is relocated when loaded (Go's type data holds pointers),
// so there only the code is read from the file.
type exeImage struct {
	f    *os.File
	segs []exeSegment // sorted by address
	// fromProcess are the executable's segments a copy takes from the process, at their
	// addresses there: its data and bss, and a position-independent executable's read-only
	// data (relocated when it was loaded).
	fromProcess []Region
}

type exeSegment struct {
	lo, hi uint64
	off    int64
}

// maxSegments bounds the program headers read from an executable.
const maxSegments = 1024

// openExeImage reads the loadable segments of the executable at path, loaded bias bytes above
// the addresses it was linked for.
func openExeImage(path string, bias uint64) (*exeImage, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	img, err := readExeImage(f, bias)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return img, nil
}

func readExeImage(f *os.File, bias uint64) (*exeImage, error) {
	ef, err := elf.NewFile(f)
	if err != nil {
		return nil, fmt.Errorf("not an ELF executable (%v)", err)
	}
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	pie := ef.Type == elf.ET_DYN
	img := &exeImage{f: f}
	for i, p := range ef.Progs {
		if i >= maxSegments {
			break
		}
		if p.Type != elf.PT_LOAD || p.Flags&elf.PF_R == 0 {
			continue
		}
		lo := p.Vaddr + bias
		if p.Flags&elf.PF_W != 0 || pie && p.Flags&elf.PF_X == 0 {
			if p.Memsz > 0 && p.Memsz < 1<<40 && lo+p.Memsz > lo {
				img.fromProcess = append(img.fromProcess, Region{lo, lo + p.Memsz})
			}
			continue
		}
		n := min(p.Filesz, p.Memsz)
		if p.Off >= uint64(st.Size()) || n == 0 || lo+n < lo {
			continue
		}
		n = min(n, uint64(st.Size())-p.Off)
		img.segs = append(img.segs, exeSegment{lo: lo, hi: lo + n, off: int64(p.Off)})
	}
	sort.Slice(img.segs, func(i, j int) bool { return img.segs[i].lo < img.segs[j].lo })
	for i := 1; i < len(img.segs); i++ {
		if img.segs[i].lo < img.segs[i-1].hi {
			return nil, fmt.Errorf("its loadable segments overlap")
		}
	}
	return img, nil
}

func (img *exeImage) close() {
	if img != nil {
		img.f.Close()
	}
}

// find returns the segment holding addr.
func (img *exeImage) find(addr uint64) (exeSegment, bool) {
	if img == nil {
		return exeSegment{}, false
	}
	i := sort.Search(len(img.segs), func(i int) bool { return img.segs[i].hi > addr })
	if i < len(img.segs) && img.segs[i].lo <= addr {
		return img.segs[i], true
	}
	return exeSegment{}, false
}

// nextStart is the address of the first segment starting after addr (the top of the address
// space when there is none).
func (img *exeImage) nextStart(addr uint64) uint64 {
	if img == nil {
		return ^uint64(0)
	}
	i := sort.Search(len(img.segs), func(i int) bool { return img.segs[i].lo > addr })
	if i < len(img.segs) {
		return img.segs[i].lo
	}
	return ^uint64(0)
}
