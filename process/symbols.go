package process

import (
	"debug/elf"
	"fmt"
	"os"
	"sort"
)

// Symbol is a package variable found in the executable's symbol table: its address in the
// target (relocated for a position-independent executable) and its size.
type Symbol struct {
	Name       string
	Addr, Size uint64
}

// Symbols finds the named data symbols in the executable's symbol table (absent from a
// binary linked with -s). Names not found are missing from the map.
func (t *Target) Symbols(names ...string) (map[string]Symbol, error) {
	want := make(map[string]bool, len(names))
	for _, n := range names {
		want[n] = true
	}
	out := make(map[string]Symbol, len(names))
	err := t.dataSymbols(func(s Symbol) {
		if want[s.Name] {
			out[s.Name] = s
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// DataSymbols lists the data symbols of the executable's symbol table that have a size, sorted
// by address (relocated): package variables, and the statics the linker names (an interface
// switch's cache...). The compiler's static temporaries for package-level composite literals
// have no symbol. None for a binary linked with -s.
func (t *Target) DataSymbols() ([]Symbol, error) {
	var out []Symbol
	err := t.dataSymbols(func(s Symbol) {
		if s.Size > 0 {
			out = append(out, s)
		}
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Addr < out[j].Addr })
	return out, nil
}

// dataSymbols calls fn with each data object of the executable's symbol table, relocated.
func (t *Target) dataSymbols(fn func(Symbol)) error {
	f, err := os.Open(t.Exe)
	if err != nil && t.Kind == "process" {
		f, err = os.Open(fmt.Sprintf("/proc/%d/exe", t.PID))
	}
	if err != nil {
		return err
	}
	defer f.Close()
	ef, err := elf.NewFile(f)
	if err != nil {
		return fmt.Errorf("%s: %w", t.Exe, err)
	}
	syms, err := ef.Symbols()
	if err != nil {
		return fmt.Errorf("%s: no symbol table (linked with -s?): %w", t.Exe, err)
	}
	var base uint64
	if bi := t.Delve.BinInfo(); len(bi.Images) > 0 {
		base = bi.Images[0].StaticBase
	}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_OBJECT {
			fn(Symbol{Name: s.Name, Addr: s.Value + base, Size: s.Size})
		}
	}
	return nil
}
