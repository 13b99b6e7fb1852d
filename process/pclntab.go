package process

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
)

// The runtime's pcdata tables and funcdata slots (internal/abi/symtab.go).
const (
	FuncFlagTopFrame = 1 << 0 // the function is at the top of its stack: unwinding stops
	FuncFlagSPWrite  = 1 << 1 // the function writes SP in a way its pcsp table does not say

	PCDataUnsafePoint  = 0
	PCDataStackMap     = 1
	PCDataInlTreeIndex = 2

	// abi.FuncID values tracebackPCs looks at (the same in every Go release memdoctor reads).
	FuncIDGopanic   = 10
	FuncIDPanicwrap = 15
	FuncIDSigpanic  = 20
	FuncIDWrapper   = 23 // compiler-generated code: method wrappers, go and defer statements' wrappers

	FuncDataArgsPointerMaps   = 0
	FuncDataLocalsPointerMaps = 1
	FuncDataStackObjects      = 2
	FuncDataInlTree           = 3
)

// funcHeaderSize is the size of the runtime's _func before its pcdata and funcdata offsets.
const funcHeaderSize = 44

// maxPclntab bounds each table read from the target.
const maxPclntab = MaxRead

// Pclntab is the runtime's function table, read from the target's memory through its
// moduledata: what the runtime itself reads to unwind stacks, find stack maps and name
// functions.
type Pclntab struct {
	mem         *Memory
	text        uint64
	minpc       uint64
	maxpc       uint64
	gofunc      uint64
	quantum     uint64
	funcnametab []byte
	pctab       []byte
	pclntable   []byte
	ftab        []functab
	cutab       []byte // uint32 file offsets by compile unit; read on first use (Line)
	filetab     []byte
	lineTabs    Tables
	filesRead   bool
	filesErr    error
}

type functab struct{ entryoff, funcoff uint32 }

// Func is one function of the table.
type Func struct {
	t       *Pclntab
	off     uint32 // in pclntable
	Entry   uint64
	Name    string
	Args    int32
	FuncID  uint8
	Flag    uint8 // abi.FuncFlag: FuncFlagTopFrame, FuncFlagSPWrite, FuncFlagAsm
	npcdata uint32
	nfdata  uint8
}

// Slice is where a slice of the target lives: its array and its length.
type Slice struct{ Ptr, Len uint64 }

// Tables are the parts of a module's data (runtime.moduledata) that make its function table.
type Tables struct {
	Text, MinPC, MaxPC, GoFunc             uint64
	FuncNameTab, PCTab, PCLnTable, FuncTab Slice
	CUTab, FileTab                         Slice // for file names: read only when asked (Line)
}

// TablesOf takes the function table's parts from a moduledata read from the target.
func TablesOf(md Value) Tables {
	slice := func(f string) Slice { return Slice{md.Word(f, 0), md.Word(f, 8)} }
	return Tables{Text: md.Word("text", 0), MinPC: md.Word("minpc", 0), MaxPC: md.Word("maxpc", 0), GoFunc: md.Word("gofunc", 0),
		FuncNameTab: slice("funcnametab"), PCTab: slice("pctab"), PCLnTable: slice("pclntable"), FuncTab: slice("ftab"),
		CUTab: slice("cutab"), FileTab: slice("filetab")}
}

// ReadPclntab reads a module's function table.
func ReadPclntab(m *Memory, md Tables, arch string) (*Pclntab, error) {
	p := &Pclntab{mem: m, quantum: 1, lineTabs: md}
	if arch == "arm64" {
		p.quantum = 4
	}
	p.text, p.minpc, p.maxpc, p.gofunc = md.Text, md.MinPC, md.MaxPC, md.GoFunc
	var err error
	read := func(field string, s Slice) []byte {
		if err != nil {
			return nil
		}
		var b []byte
		b, err = readSlice(m, s.Ptr, s.Len, 1)
		if err != nil {
			err = fmt.Errorf("moduledata.%s: %w", field, err)
		}
		return b
	}
	p.funcnametab = read("funcnametab", md.FuncNameTab)
	p.pctab = read("pctab", md.PCTab)
	p.pclntable = read("pclntable", md.PCLnTable)
	if err != nil {
		return nil, err
	}
	n := md.FuncTab.Len
	raw, err := readSlice(m, md.FuncTab.Ptr, n, 8)
	if err != nil {
		return nil, fmt.Errorf("moduledata.ftab: %w", err)
	}
	p.ftab = make([]functab, n)
	for i := range p.ftab {
		p.ftab[i] = functab{binary.LittleEndian.Uint32(raw[i*8:]), binary.LittleEndian.Uint32(raw[i*8+4:])}
	}
	if len(p.ftab) < 2 || p.maxpc <= p.minpc || p.text > p.minpc {
		return nil, errors.New("moduledata: an empty or inconsistent function table")
	}
	return p, nil
}

func readSlice(m *Memory, ptr, n, elem uint64) ([]byte, error) {
	if n == 0 {
		return nil, nil
	}
	if n > maxPclntab/elem {
		return nil, fmt.Errorf("%d entries, more than memdoctor reads", n)
	}
	b := make([]byte, n*elem)
	return b, m.Read(b, ptr)
}

// FuncForPC finds the function holding pc.
func (p *Pclntab) FuncForPC(pc uint64) (*Func, bool) {
	if pc < p.minpc || pc >= p.maxpc {
		return nil, false
	}
	off := uint32(pc - p.text)
	nf := len(p.ftab) - 1 // the last entry only ends the table
	i := sort.Search(nf, func(i int) bool { return p.ftab[i].entryoff > off }) - 1
	if i < 0 {
		return nil, false
	}
	return p.funcAt(p.ftab[i].funcoff)
}

func (p *Pclntab) funcAt(off uint32) (*Func, bool) {
	if uint64(off)+funcHeaderSize > uint64(len(p.pclntable)) {
		return nil, false
	}
	b := p.pclntable[off:]
	f := &Func{t: p, off: off}
	f.Entry = p.text + uint64(binary.LittleEndian.Uint32(b))
	f.Name = p.name(int32(binary.LittleEndian.Uint32(b[4:])))
	f.Args = int32(binary.LittleEndian.Uint32(b[8:]))
	f.npcdata = binary.LittleEndian.Uint32(b[28:])
	f.FuncID = b[40]
	f.Flag = b[41]
	f.nfdata = b[43]
	if uint64(off)+funcHeaderSize+4*uint64(f.npcdata)+4*uint64(f.nfdata) > uint64(len(p.pclntable)) {
		return nil, false
	}
	return f, true
}

func (p *Pclntab) name(off int32) string {
	if off < 0 || int(off) >= len(p.funcnametab) {
		return "?"
	}
	b := p.funcnametab[off:]
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// HasFunc reports whether the executable has a function called name (linked in: the
// function name table lists every function of the binary, inlined ones included).
func (p *Pclntab) HasFunc(name string) bool {
	if name == "" {
		return false
	}
	t := p.funcnametab
	return bytes.HasPrefix(t, append([]byte(name), 0)) || bytes.Contains(t, append(append([]byte{0}, name...), 0))
}

// PCData returns the value of a pcdata table at pc, or -1.
func (f *Func) PCData(table int, pc uint64) int32 {
	if table >= int(f.npcdata) {
		return -1
	}
	off := binary.LittleEndian.Uint32(f.t.pclntable[f.off+funcHeaderSize+4*uint32(table):])
	return f.t.pcvalue(f, off, pc)
}

// SPDelta returns the frame's size at pc (the pcsp table).
func (f *Func) SPDelta(pc uint64) int32 {
	off := binary.LittleEndian.Uint32(f.t.pclntable[f.off+16:])
	return f.t.pcvalue(f, off, pc)
}

// FuncData returns the address of a funcdata item, or 0.
func (f *Func) FuncData(i int) uint64 {
	if i >= int(f.nfdata) {
		return 0
	}
	off := binary.LittleEndian.Uint32(f.t.pclntable[f.off+funcHeaderSize+4*f.npcdata+4*uint32(i):])
	if off == ^uint32(0) {
		return 0
	}
	return f.t.gofunc + uint64(off)
}

// pcvalue decodes a pc-value table up to pc, as the runtime's pcvalue does.
func (p *Pclntab) pcvalue(f *Func, off uint32, target uint64) int32 {
	if off == 0 || int(off) >= len(p.pctab) {
		return -1
	}
	b := p.pctab[off:]
	pc, val := f.Entry, int32(-1)
	for first := true; ; first = false {
		uv, n := binary.Uvarint(b)
		if n <= 0 || (uv == 0 && !first) {
			return -1
		}
		b = b[n:]
		if uv&1 != 0 {
			uv = ^(uv >> 1)
		} else {
			uv >>= 1
		}
		val += int32(uv)
		d, n := binary.Uvarint(b)
		if n <= 0 {
			return -1
		}
		b = b[n:]
		pc += d * p.quantum
		if target < pc {
			return val
		}
	}
}

// FuncName names the logical function at pc, an inlined call's own name where pc is inside
// one. The runtime records one pc per logical frame, return address style, so give pc-1.
func (p *Pclntab) FuncName(pc uint64) string {
	fi, _ := p.FuncInfo(pc)
	return fi.Name
}

// FuncInfo is the logical function at a pc: an inlined call's own function where the pc is
// inside one, as runtime.CallersFrames names it.
type FuncInfo struct {
	Name      string
	StartLine int32  // the line of its func keyword
	Entry     uint64 // the entry of the physical function that holds the pc
	Inlined   bool
	FuncID    uint8 // abi.FuncID: FuncIDWrapper for compiler-generated wrappers
}

// FuncInfo describes the logical function at pc (give a return PC minus one).
func (p *Pclntab) FuncInfo(pc uint64) (FuncInfo, bool) {
	f, ok := p.FuncForPC(pc)
	if !ok {
		return FuncInfo{}, false
	}
	fi := FuncInfo{Name: f.Name, StartLine: f.startLine(), Entry: f.Entry, FuncID: f.FuncID}
	tree := f.FuncData(FuncDataInlTree)
	if ix := f.PCData(PCDataInlTreeIndex, pc); ix >= 0 && tree != 0 {
		var ic [16]byte // inlinedCall: funcID, pad, nameOff int32, parentPc int32, startLine int32
		if p.mem.Read(ic[:], tree+uint64(ix)*16) == nil {
			fi.Name = p.name(int32(binary.LittleEndian.Uint32(ic[4:])))
			fi.StartLine = int32(binary.LittleEndian.Uint32(ic[12:]))
			fi.Inlined, fi.FuncID = true, ic[0]
		}
	}
	return fi, true
}

func (f *Func) startLine() int32 {
	return int32(binary.LittleEndian.Uint32(f.t.pclntable[f.off+36:]))
}

// Line returns the file and line of pc as the runtime reports them (funcline1): the position
// of the innermost inlined call's code where pc is inside one. "?" and 0 when the table
// does not say.
func (p *Pclntab) Line(pc uint64) (string, int) {
	f, ok := p.FuncForPC(pc)
	if !ok {
		return "?", 0
	}
	if !p.filesRead {
		p.filesRead = true
		p.filesErr = p.readFileTables()
	}
	if p.filesErr != nil {
		return "?", 0
	}
	b := p.pclntable[f.off:]
	pcfile, pcln := binary.LittleEndian.Uint32(b[20:]), binary.LittleEndian.Uint32(b[24:])
	cu := uint64(binary.LittleEndian.Uint32(b[32:]))
	fileno := p.pcvalue(f, pcfile, pc)
	line := p.pcvalue(f, pcln, pc)
	if fileno < 0 || line < 0 {
		return "?", 0
	}
	i := (cu + uint64(fileno)) * 4
	if i+4 > uint64(len(p.cutab)) {
		return "?", 0
	}
	off := uint64(binary.LittleEndian.Uint32(p.cutab[i:]))
	if off >= uint64(len(p.filetab)) {
		return "?", 0
	}
	name := p.filetab[off:]
	for j, c := range name {
		if c == 0 {
			name = name[:j]
			break
		}
	}
	return string(name), int(line)
}

// readFileTables reads moduledata.cutab and filetab, once.
func (p *Pclntab) readFileTables() error {
	cutab, err := readSlice(p.mem, p.lineTabs.CUTab.Ptr, p.lineTabs.CUTab.Len, 4)
	if err != nil {
		return fmt.Errorf("moduledata.cutab: %w", err)
	}
	filetab, err := readSlice(p.mem, p.lineTabs.FileTab.Ptr, p.lineTabs.FileTab.Len, 1)
	if err != nil {
		return fmt.Errorf("moduledata.filetab: %w", err)
	}
	p.cutab, p.filetab = cutab, filetab
	return nil
}

// LogicalPCs expands the return PC of one physical frame into one PC per logical frame,
// innermost first, as the runtime's tracebackPCs records a stack: pc itself, then for each
// call inlined at pc-1 the pc of its inline mark in the caller plus one. An unknown pc is
// itself alone.
func (p *Pclntab) LogicalPCs(pc uint64) []uint64 {
	out := []uint64{pc}
	f, ok := p.FuncForPC(pc - 1)
	if !ok {
		return out
	}
	tree := f.FuncData(FuncDataInlTree)
	if tree == 0 {
		return out
	}
	at := pc - 1
	for range 64 { // inlining depth is bounded by the compiler; a corrupt tree is cut here
		ix := f.PCData(PCDataInlTreeIndex, at)
		if ix < 0 {
			break
		}
		var ic [16]byte
		if p.mem.Read(ic[:], tree+uint64(ix)*16) != nil {
			break
		}
		parent := f.Entry + uint64(int64(int32(binary.LittleEndian.Uint32(ic[8:]))))
		if parent == at || parent < f.Entry {
			break
		}
		at = parent
		out = append(out, at+1)
	}
	return out
}
