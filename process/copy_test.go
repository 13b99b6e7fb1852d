package process

import (
	"bytes"
	"context"
	"errors"
	"os"
	"testing"
)

// TestCopy copies parts of a recorded core into an unlinked file: the directory holds no
// name, the file is the user's alone, what was copied reads as the core, what was not is
// refused, and the executable's code is read from its file.
func TestCopy(t *testing.T) {
	core, exe := makeCoreInternal(t)
	tg, err := OpenCore(core, exe)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	dir := t.TempDir()
	c, err := tg.NewCopy(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Reserve(1 << 20); err != nil {
		t.Fatal(err)
	}
	if st, err := c.f.Stat(); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("the copy's mode: %v (%v), want 0600", st.Mode(), err)
	}
	if names, _ := os.ReadDir(dir); len(names) != 0 {
		t.Fatalf("the copy has a name in %s: %v", dir, names)
	}
	// Two ranges of the first writable segment, one inside the other's neighbour.
	w := c.Executable()
	if len(w) == 0 {
		t.Fatal("the executable has no writable segment")
	}
	lo := w[0].Lo
	parts := []Region{{lo, lo + 8192}, {lo + 4096, lo + 12288}, {lo + 32768, lo + 40960}}
	if err := c.Add(context.Background(), parts); err != nil {
		t.Fatal(err)
	}
	if c.Bytes() != 12288+8192 {
		t.Errorf("copied %d bytes, want %d (the overlap once)", c.Bytes(), 12288+8192)
	}
	want := make([]byte, 12288)
	if err := tg.Memory().Read(want, lo); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 12288)
	if n, err := c.ReadMemory(got, lo); err != nil || n != len(got) || !bytes.Equal(got, want) {
		t.Errorf("read back %d bytes (%v), equal %v", n, err, bytes.Equal(got, want))
	}
	if _, err := c.ReadMemory(got[:16], lo+20000); err == nil {
		t.Error("a range not copied reads")
	}
	if !c.Holds(lo+100, 12000) || c.Holds(lo+12000, 1000) {
		t.Error("Holds is wrong about what was copied")
	}
	// The code comes from the executable.
	if len(c.exe.segs) == 0 {
		t.Fatal("no segment read from the executable")
	}
	s := c.exe.segs[0]
	code := make([]byte, 64)
	if err := tg.Memory().Read(code, s.lo); err != nil {
		t.Fatal(err)
	}
	if n, err := c.ReadMemory(got[:64], s.lo); err != nil || n != 64 || !bytes.Equal(got[:64], code) {
		t.Errorf("the executable's code through the copy: %v", err)
	}
	if m := c.missing([]Region{{s.lo, s.lo + 4096}}); len(m) != 0 {
		t.Errorf("the executable's code would be copied: %v", m)
	}
}

// TestCopyNeedsRoom: a copy larger than its directory's free space is refused before anything
// is written, saying how much it needs and how much there is.
func TestCopyNeedsRoom(t *testing.T) {
	core, exe := makeCoreInternal(t)
	tg, err := OpenCore(core, exe)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	c, err := tg.NewCopy(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	free, ok := freeSpace(c.Dir())
	if !ok {
		t.Skip("no free space figure on this system")
	}
	err = c.Reserve(int64(free) + 1<<30)
	var ns *NoSpaceError
	if !errors.As(err, &ns) || ns.Need <= ns.Free {
		t.Fatalf("reserving more than is free: %v, want a *NoSpaceError", err)
	}
	if st, _ := c.f.Stat(); st.Size() != 0 {
		t.Errorf("the refused copy's file holds %d bytes", st.Size())
	}
}
