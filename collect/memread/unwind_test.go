package memread

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memdoctor/memdoctor/process"
)

// openCore opens holders' recorded core of arch (Go 1.26.8) for reading.
func openCore(t *testing.T, arch string) *Reader {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for _, name := range []string{"core", "holders-target"} {
		f, err := os.Open(filepath.Join("../../holders/walk/testdata/cores", arch, name+".gz"))
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		out, _ := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o700)
		_, err = io.Copy(out, io.LimitReader(zr, 256<<20))
		out.Close()
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	tg, err := process.OpenCore(paths[0], paths[1])
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(tg)
	if err != nil {
		tg.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// names turns stacks of PCs into sorted lists of their logical frames' functions.
func (r *Reader) names(stacks []gstack) []string {
	var out []string
	for _, st := range stacks {
		var fs []string
		for _, pc := range st.pcs {
			fs = append(fs, r.syms.frameOf(pc).name)
		}
		out = append(out, strings.Join(fs, " <- ")+" (created by "+r.creator(st.gopc)+")")
	}
	slices.Sort(out)
	return out
}

// TestUnwinderIsDelves: the goroutines unwound as the runtime unwinds them (from what they
// saved) have the stacks Delve's unwinder gives, on an amd64 and an arm64 core.
func TestUnwinderIsDelves(t *testing.T) {
	for _, arch := range []string{"amd64", "arm64"} {
		t.Run(arch, func(t *testing.T) {
			r := openCore(t, arch)
			if r.gl == nil {
				t.Fatal("no layout of runtime.g")
			}
			c := process.NewCache(r.mem, goroutineCacheBytes)
			parked, _, err := r.listGoroutines(c)
			if err != nil {
				t.Fatal(err)
			}
			ids := map[uint64]bool{}
			var ours []gstack
			for _, g := range parked {
				if r.systemStart(g.startpc) {
					continue
				}
				pcs, done := r.unwind(c, g)
				if !done {
					t.Errorf("goroutine %d: the unwinder stopped early: %v", g.goid, r.names([]gstack{{pcs, g.gopc}}))
					continue
				}
				ids[g.goid] = true
				ours = append(ours, gstack{pcs, g.gopc})
			}
			theirs, skipped, err := r.delveStacks(ids)
			if err != nil || skipped > 0 {
				t.Fatalf("Delve: %v, %d skipped", err, skipped)
			}
			got, want := r.names(ours), r.names(theirs)
			if len(got) < 2 || !slices.Equal(got, want) {
				t.Errorf("unwound:\n%s\nDelve:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// fakeStack is a goroutine's stack of a few words, for the unwinder.
type fakeStack struct {
	sp    uint64
	words []uint64
}

func (f fakeStack) Read(buf []byte, addr uint64) error {
	for i := range buf {
		a := addr + uint64(i)
		if a < f.sp || a >= f.sp+8*uint64(len(f.words)) {
			return io.ErrUnexpectedEOF
		}
		buf[i] = byte(f.words[(a-f.sp)/8] >> (8 * ((a - f.sp) % 8)))
	}
	return nil
}

// TestUnwindAGoroutineThatNeverRan: a goroutine made and not yet run has its start
// function's entry as its saved pc, under goexit's return address (gostartcall). Its stack is
// its start function, as the runtime's traceback gives it, not the function before that entry.
func TestUnwindAGoroutineThatNeverRan(t *testing.T) {
	r := openCore(t, "amd64")
	c := process.NewCache(r.mem, goroutineCacheBytes)
	parked, _, err := r.listGoroutines(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range parked {
		if r.systemStart(g.startpc) {
			continue
		}
		start, ok := r.tab.FuncForPC(g.startpc)
		pcs, done := r.unwind(c, g)
		if !ok || !done || len(pcs) < 2 {
			continue
		}
		goexit := pcs[len(pcs)-1] // the return PC into runtime.goexit, the bottom frame
		if name := r.syms.frameOf(goexit).name; name != "runtime.goexit" {
			t.Fatalf("the bottom frame is %s, want runtime.goexit", name)
		}
		const sp = 0x10000
		fresh := parkedG{pc: start.Entry, sp: sp, hi: sp + 8, startpc: g.startpc}
		got, done := r.unwind(fakeStack{sp, []uint64{goexit}}, fresh)
		names := r.names([]gstack{{got, 0}})
		if want := start.Name + " <- runtime.goexit (created by )"; !done || len(names) != 1 || names[0] != want {
			t.Errorf("a goroutine that never ran, started at %s: %v (done %v), want %s", start.Name, names, done, want)
		}
		return
	}
	t.Fatal("no goroutine of the core to start from")
}
