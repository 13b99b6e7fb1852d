package process_test

import (
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/memdoctor/memdoctor/holders/walk"
	"github.com/memdoctor/memdoctor/process"
)

// The recorded amd64 core of the holders target (a global map of records), unpacked once per
// test binary into the temporary directory, keyed by its content, for the fuzz workers to
// share.
var (
	coreOnce          sync.Once
	corePath, coreExe string
	coreErr           error
)

const recorded = "../holders/walk/testdata/cores/amd64"

func makeCore(t testing.TB) (core, exe string) {
	t.Helper()
	coreOnce.Do(func() { corePath, coreExe, coreErr = unpackCore() })
	if coreErr != nil {
		t.Fatal(coreErr)
	}
	return corePath, coreExe
}

func unpackCore() (string, string, error) {
	h := sha256.New()
	for _, name := range []string{"core.gz", "holders-target.gz"} {
		b, err := os.ReadFile(filepath.Join(recorded, name))
		if err != nil {
			return "", "", err
		}
		h.Write(b)
	}
	dir := filepath.Join(os.TempDir(), "memdoctor-hostile-"+hex.EncodeToString(h.Sum(nil)[:8]))
	core, exe := filepath.Join(dir, "core"), filepath.Join(dir, "holders-target")
	if _, err := os.Stat(exe); err == nil {
		return core, exe, nil
	}
	tmp, err := os.MkdirTemp(os.TempDir(), "memdoctor-hostile-tmp")
	if err != nil {
		return "", "", err
	}
	for _, name := range []string{"core", "holders-target"} {
		f, err := os.Open(filepath.Join(recorded, name+".gz"))
		if err != nil {
			return "", "", err
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			return "", "", err
		}
		out, err := os.OpenFile(filepath.Join(tmp, name), os.O_CREATE|os.O_WRONLY, 0o700)
		if err != nil {
			return "", "", err
		}
		_, err = io.Copy(out, io.LimitReader(zr, 256<<20))
		out.Close()
		f.Close()
		if err != nil {
			return "", "", err
		}
	}
	if err := os.Rename(tmp, dir); err != nil && !errors.Is(err, os.ErrExist) {
		if _, serr := os.Stat(exe); serr != nil {
			return "", "", err
		}
	}
	os.RemoveAll(tmp)
	return core, exe, nil
}

// readCore opens the core, applies patch, and reads its holders (through a copy planned and
// made as a live process's is, when copied): the error, if any. It fails t if the reading
// allocated more than bound bytes.
func readCore(t testing.TB, core, exe string, copied bool, patch func(t testing.TB, tg *process.Target)) error {
	t.Helper()
	tg, err := process.OpenCore(core, exe)
	if err != nil {
		return err
	}
	defer tg.Close()
	if patch != nil {
		patch(t, tg)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = walk.Read(context.Background(), tg, walk.Options{Sites: []string{"main.build"}, CopyCore: copied, TempDir: t.TempDir()})
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 512<<20 {
		t.Errorf("reading allocated %d MiB", grew>>20)
	}
	return err
}

// layoutOf finds a global's address and a field's offset in its type.
func globalField(t testing.TB, tg *process.Target, global, typ, field string) uint64 {
	t.Helper()
	ix, err := process.BuildIndex(tg.Delve.BinInfo())
	if err != nil {
		t.Fatal(err)
	}
	g, ok := ix.Global(global)
	if !ok {
		t.Fatalf("no %s", global)
	}
	if typ == "" {
		return g.Addr
	}
	s, err := process.StructOf(tg.Delve.BinInfo(), typ)
	if err != nil {
		t.Fatal(err)
	}
	off, err := s.Off(field)
	if err != nil {
		t.Fatal(err)
	}
	return g.Addr + uint64(off)
}

func word(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

func readWord(t testing.TB, tg *process.Target, addr uint64) uint64 {
	v, err := tg.Memory().Uint64(addr)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestHostileCores: a corrupt core (absurd counts and sizes in the runtime's structures, lists
// that loop, a truncated file) gets a clear error or a partial reading, in bounded memory, and
// never a crash.
func TestHostileCores(t *testing.T) {
	core, exe := makeCore(t)
	for _, copied := range []bool{false, true} {
		if err := readCore(t, core, exe, copied, nil); err != nil {
			t.Fatalf("the intact core (copied: %v): %v", copied, err)
		}
	}
	cases := map[string]func(t testing.TB, tg *process.Target){
		"allspans claims 2^40 spans": func(t testing.TB, tg *process.Target) {
			process.Patch(tg, globalField(t, tg, "runtime.mheap_", "runtime.mheap", "allspans")+8, word(1<<40))
		},
		"allgs claims 2^40 goroutines": func(t testing.TB, tg *process.Target) {
			process.Patch(tg, globalField(t, tg, "runtime.allgs", "", "")+8, word(1<<40))
		},
		"allglen disagrees with allgs": func(t testing.TB, tg *process.Target) {
			process.Patch(tg, globalField(t, tg, "runtime.allglen", "", ""), word(1<<30))
		},
		"a span claims a terabyte": func(t testing.TB, tg *process.Target) {
			all := readWord(t, tg, globalField(t, tg, "runtime.mheap_", "runtime.mheap", "allspans"))
			span := readWord(t, tg, all)
			s, _ := process.StructOf(tg.Delve.BinInfo(), "runtime.mspan")
			off, _ := s.Off("npages")
			process.Patch(tg, span+uint64(off), word(1<<27))
		},
		"the function table claims 2^40 entries": func(t testing.TB, tg *process.Target) {
			process.Patch(tg, globalField(t, tg, "runtime.firstmoduledata", "runtime.moduledata", "ftab")+8, word(1<<40))
		},
		"the data segment's pointer mask is elsewhere": func(t testing.TB, tg *process.Target) {
			process.Patch(tg, globalField(t, tg, "runtime.firstmoduledata", "runtime.moduledata", "gcdatamask.bytedata"), word(0x10))
		},
	}
	for name, patch := range cases {
		t.Run(name, func(t *testing.T) {
			for _, copied := range []bool{false, true} {
				err := readCore(t, core, exe, copied, patch)
				t.Logf("copied %v: %v", copied, err) // an error or a partial reading are both fine; a crash is not
			}
		})
	}
	t.Run("truncated", func(t *testing.T) {
		b, err := os.ReadFile(core)
		if err != nil {
			t.Fatal(err)
		}
		for _, frac := range []int{10, 50, 90} {
			cut := filepath.Join(t.TempDir(), "core")
			os.WriteFile(cut, b[:len(b)*frac/100], 0o600)
			for _, copied := range []bool{false, true} {
				err := readCore(t, cut, exe, copied, nil)
				t.Logf("%d%% (copied %v): %v", frac, copied, err)
			}
		}
	})
}

// FuzzHostileCore overlays a word anywhere in the runtime's own structures or the heap of a
// real core and reads it, as it is or through a copy (region's top bit): never a crash,
// always bounded.
func FuzzHostileCore(f *testing.F) {
	core, exe := makeCore(f)
	for _, s := range []struct {
		region uint8
		off    uint32
		val    uint64
	}{{0, 8, 1 << 40}, {1, 16, 0}, {2, 0, 0xffffffff}, {3, 64, 1}, {4, 24, 1 << 33}, {0x80, 8, 1 << 40}, {0x83, 64, 1}, {0x84, 24, 1 << 33}} {
		f.Add(s.region, s.off, s.val)
	}
	f.Fuzz(func(t *testing.T, region uint8, off uint32, val uint64) {
		readCore(t, core, exe, region&0x80 != 0, func(t testing.TB, tg *process.Target) {
			var base uint64
			switch region % 5 {
			case 0:
				base = globalField(t, tg, "runtime.mheap_", "", "")
			case 1:
				base = globalField(t, tg, "runtime.firstmoduledata", "", "")
			case 2:
				base = readWord(t, tg, globalField(t, tg, "runtime.allgs", "", ""))
			case 3:
				base = readWord(t, tg, readWord(t, tg, globalField(t, tg, "runtime.mheap_", "runtime.mheap", "allspans")))
			case 4:
				base = readWord(t, tg, readWord(t, tg, globalField(t, tg, "runtime.allgs", "", "")))
			}
			process.Patch(tg, base+uint64(off%4096)&^7, word(val))
		})
	})
}
