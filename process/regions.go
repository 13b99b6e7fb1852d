package process

import (
	"bufio"
	"debug/elf"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

// Region is a range of the target's address space that can be read.
type Region struct{ Lo, Hi uint64 }

// regions is the target's readable address space, sorted and merged.
type regions []Region

// Readable says whether [addr, addr+size) lies wholly in one readable region.
func (t *Target) Readable(addr, size uint64) bool {
	rs := t.regions
	if rs == nil {
		return true // not known: every read is still checked
	}
	i := sort.Search(len(rs), func(i int) bool { return rs[i].Hi > addr })
	return i < len(rs) && addr >= rs[i].Lo && addr+size <= rs[i].Hi && addr+size >= addr
}

// RegionOf returns the readable region holding addr: false when there is none, or when the
// readable address space is not known.
func (t *Target) RegionOf(addr uint64) (Region, bool) {
	rs := t.regions
	i := sort.Search(len(rs), func(i int) bool { return rs[i].Hi > addr })
	if i < len(rs) && addr >= rs[i].Lo {
		return rs[i], true
	}
	return Region{}, false
}

// NextRegion returns the first readable region above addr: false when there is none, or when
// the readable address space is not known.
func (t *Target) NextRegion(addr uint64) (Region, bool) {
	rs := t.regions
	i := sort.Search(len(rs), func(i int) bool { return rs[i].Lo > addr })
	if i < len(rs) {
		return rs[i], true
	}
	return Region{}, false
}

// ReadRegions reads the readable address space of a live process again now (Stop reads it
// too); a core's does not change.
func (t *Target) ReadRegions() error { return t.refreshRegions() }

// ReadableBytes is the size of the readable address space (0 when not known).
func (t *Target) ReadableBytes() uint64 {
	var n uint64
	for _, r := range t.regions {
		n += r.Hi - r.Lo
	}
	return n
}

func merge(rs []Region) regions {
	sort.Slice(rs, func(i, j int) bool { return rs[i].Lo < rs[j].Lo })
	var out regions
	for _, r := range rs {
		if r.Hi <= r.Lo {
			continue
		}
		if n := len(out); n > 0 && r.Lo <= out[n-1].Hi {
			out[n-1].Hi = max(out[n-1].Hi, r.Hi)
			continue
		}
		out = append(out, r)
	}
	if out == nil {
		out = regions{}
	}
	return out
}

// maxRegions bounds what a hostile maps file or core's program headers can list.
const maxRegions = 1 << 20

// readableRegions is the readable address space the mappings make, merged.
func readableRegions(ms []mapping) regions {
	var rs []Region
	for _, m := range ms {
		if m.readable {
			rs = append(rs, m.Region)
		}
	}
	return merge(rs)
}

// mapping is one line of /proc/PID/maps: its range, whether it can be read, and whether it is
// private anonymous memory (where a page that is not there reads as zeros).
type mapping struct {
	Region
	readable, anon bool
}

// readMappings reads /proc/PID/maps, every mapping with its kind.
func readMappings(pid int) ([]mapping, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/maps")
	if err != nil {
		return nil, fmt.Errorf("process %d: reading its memory map: %w", pid, err)
	}
	defer f.Close()
	var ms []mapping
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() && len(ms) < maxRegions {
		if m, ok := parseMapping(sc.Text()); ok {
			ms = append(ms, m)
		}
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Lo < ms[j].Lo })
	return ms, sc.Err()
}

// parseMapping reads one line of /proc/PID/maps: "lo-hi perms offset dev inode [path]".
// Private anonymous memory is a private mapping of no file (inode 0) that is named by nothing
// or by what the kernel names anonymous memory: [heap], [stack], [anon:NAME] (a name given
// with prctl). The kernel's own mappings ([vdso], [vvar]) and shared memory are not.
func parseMapping(line string) (mapping, bool) {
	fields := strings.Fields(line)
	if len(fields) < 2 {
		return mapping{}, false
	}
	lo, hi, ok := mapsRange(fields[0])
	if !ok {
		return mapping{}, false
	}
	m := mapping{Region: Region{lo, hi}, readable: strings.HasPrefix(fields[1], "r")}
	if len(fields) < 5 {
		return m, true // not the kernel's form: not known to be anonymous
	}
	private := len(fields[1]) >= 4 && fields[1][3] == 'p'
	name := ""
	if len(fields) > 5 {
		name = fields[5]
	}
	m.anon = private && fields[4] == "0" && (name == "" || name == "[heap]" ||
		strings.HasPrefix(name, "[stack") || strings.HasPrefix(name, "[anon:"))
	return m, true
}

// mappingAt describes the mapping of a live process that holds addr, as /proc/PID/maps has it
// now (the process stopped: as it was when its memory was read), or its neighbours when none
// does: for an error about memory that could not be read.
func mappingAt(pid int, addr uint64) string {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/maps")
	if err != nil {
		return fmt.Sprintf("its memory map cannot be read (%v)", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 4<<10), 64<<10)
	below := ""
	for n := 0; sc.Scan() && n < maxRegions; n++ {
		line := sc.Text()
		lo, hi, ok := mapsRange(line)
		switch {
		case !ok:
			continue
		case addr < lo && below == "":
			return fmt.Sprintf("no mapping holds it: the first one is %q (/proc/%d/maps)", line, pid)
		case addr < lo:
			return fmt.Sprintf("no mapping holds it: it is between %q and %q (/proc/%d/maps)", below, line, pid)
		case addr < hi:
			return fmt.Sprintf("the mapping that holds it: %q (/proc/%d/maps)", line, pid)
		}
		below = line
	}
	if err := sc.Err(); err != nil {
		return fmt.Sprintf("its memory map cannot be read (%v)", err)
	}
	if below == "" {
		return fmt.Sprintf("its memory map is empty: the process is gone (/proc/%d/maps)", pid)
	}
	return fmt.Sprintf("no mapping holds it: the last one is %q (/proc/%d/maps)", below, pid)
}

// mapsRange reads the address range of one line of /proc/PID/maps.
func mapsRange(line string) (lo, hi uint64, ok bool) {
	field, _, _ := strings.Cut(line, " ")
	a, b, ok := strings.Cut(field, "-")
	if !ok {
		return 0, 0, false
	}
	lo, err1 := strconv.ParseUint(a, 16, 64)
	hi, err2 := strconv.ParseUint(b, 16, 64)
	return lo, hi, err1 == nil && err2 == nil && lo < hi
}

// parseMapsLine reads one line of /proc/PID/maps ("lo-hi perms ..."), keeping it only when
// readable.
func parseMapsLine(line string) (Region, bool) {
	m, ok := parseMapping(line)
	if !ok || !m.readable {
		return Region{}, false
	}
	return m.Region, true
}

// coreRegions reads the memory a core file holds: its loadable segments, each as far as the
// file really holds it (a truncated core holds less than its headers say).
func coreRegions(path string) (regions, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	ef, err := elf.NewFile(f)
	if err != nil {
		return nil, fmt.Errorf("%s: not an ELF core file (%v)", path, err)
	}
	size := uint64(st.Size())
	var rs []Region
	for _, p := range ef.Progs {
		if p.Type != elf.PT_LOAD || p.Flags&elf.PF_R == 0 || p.Filesz == 0 || len(rs) >= maxRegions {
			continue
		}
		n := p.Filesz
		if p.Off >= size {
			continue
		}
		n = min(n, size-p.Off)
		rs = append(rs, Region{p.Vaddr, p.Vaddr + n})
	}
	return merge(rs), nil
}
