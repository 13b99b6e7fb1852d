package culprit

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
)

// dumpGen streams a synthetic debug=2 goroutine dump of a given size, made of
// the goroutines of a real captured dump repeated with fresh goroutine IDs
// and varying argument values, without holding the dump in memory.
type dumpGen struct {
	blocks [][]byte // goroutine blocks without their "goroutine N" prefix
	left   int64
	next   int
	id     int
	block  []byte // the current goroutine block
	off    int    // bytes of block already read
}

func newDumpGen(t testing.TB, size int64) *dumpGen {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "goroutines.debug2.txt"))
	if err != nil {
		t.Fatal(err)
	}
	g := &dumpGen{left: size}
	for block := range bytes.SplitSeq(bytes.TrimSpace(data), []byte("\n\n")) {
		// "goroutine 19 [chan receive]:..." -> " [chan receive]:..."
		rest := block[len("goroutine "):]
		i := bytes.IndexByte(rest, ' ')
		g.blocks = append(g.blocks, rest[i:])
	}
	return g
}

func (g *dumpGen) Read(p []byte) (int, error) {
	if g.left <= 0 {
		return 0, io.EOF
	}
	if g.off == len(g.block) {
		g.id++
		b := g.block[:0]
		b = append(b, "goroutine "...)
		b = strconv.AppendInt(b, int64(g.id), 10)
		b = append(b, g.blocks[g.next%len(g.blocks)]...)
		b = append(b, "\n\n"...)
		// Vary the argument values as a real dump would.
		if i := bytes.Index(b, []byte("(0x")); i >= 0 && i+6 < len(b) {
			b[i+5] = "0123456789abcdef"[g.id%16]
		}
		g.block, g.off = b, 0
		g.next++
	}
	n := copy(p, g.block[g.off:])
	if int64(n) > g.left {
		n = int(g.left)
	}
	g.off += n
	g.left -= int64(n)
	return n, nil
}

// allocatedBytes returns the bytes allocated while running f.
func allocatedBytes(f func()) uint64 {
	// runtime.ReadMemStats stops the world: fine in a test, never on a hot path.
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestParseGoroutineTextBoundedMemory(t *testing.T) {
	parse := func(size int64) ([]GoroutineGroup, uint64) {
		var groups []GoroutineGroup
		n := allocatedBytes(func() {
			var err error
			groups, err = ParseGoroutineText(newDumpGen(t, size), Options{MainModule: testModule})
			if err != nil {
				t.Fatal(err)
			}
		})
		return groups, n
	}
	small, smallBytes := parse(1 << 20)
	big, bigBytes := parse(16 << 20)
	if totalCount(big) < 10*totalCount(small) {
		t.Fatalf("the big dump has %d goroutines, the small one %d", totalCount(big), totalCount(small))
	}
	if len(big) > len(small)+2 {
		t.Errorf("groups: %d for 1 MiB, %d for 16 MiB: keys must not depend on goroutine IDs or arguments", len(small), len(big))
	}
	// 16 times the input must not mean much more memory: allow 2x for noise.
	if bigBytes > 2*smallBytes+1<<20 {
		t.Errorf("allocated %d bytes for 1 MiB, %d for 16 MiB of dump: memory scales with the input", smallBytes, bigBytes)
	}
	t.Logf("allocated %d bytes for 1 MiB, %d for 16 MiB; %d groups, %d goroutines", smallBytes, bigBytes, len(big), totalCount(big))
}
