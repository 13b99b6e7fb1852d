package gctrace_test

import (
	"bufio"
	"errors"
	"io"
	"runtime/metrics"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/memdoctor/memdoctor/gctrace"
)

// scanAll returns the cycle numbers a Scanner yields for r.
func scanAll(t *testing.T, r io.Reader) (ns []int, s *gctrace.Scanner) {
	t.Helper()
	s = gctrace.NewScanner(r)
	for s.Scan() {
		ns = append(ns, s.Cycle().N)
	}
	return ns, s
}

func line(n string) string {
	return "gc " + n + " @0.100s 1%: 0.1+0.2+0.3 ms clock, 0.2+0.1/0.2/0+0.3 ms cpu, 4->4->2 MB, 5 MB goal, 2 P"
}

func TestScanner(t *testing.T) {
	in := strings.Join([]string{
		"listening on :8080",
		line("1"),
		"scav 0 KiB work (bg), 0 KiB work (eager), 4792 KiB now, 99% util",
		line("2") + "\r",
		"gc 3 @0.2s 1%: truncated",
		"",
		"pacer: assist ratio=1 (scan 0 MB in 3->4 MB) workers=0+0.25",
		line("4"),
		line("5"), // no newline at the end
	}, "\n")
	ns, s := scanAll(t, strings.NewReader(in))
	if want := []int{1, 2, 4, 5}; !slices.Equal(ns, want) {
		t.Errorf("cycles %v, want %v", ns, want)
	}
	if s.Skipped() != 1 {
		t.Errorf("Skipped = %d, want 1 (the truncated gc 3)", s.Skipped())
	}
	if s.Err() != nil {
		t.Errorf("Err = %v", s.Err())
	}
	if s.Scan() {
		t.Error("Scan after the end returned true")
	}
	// One byte at a time, the same result.
	ns, _ = scanAll(t, iotest.OneByteReader(strings.NewReader(in)))
	if want := []int{1, 2, 4, 5}; !slices.Equal(ns, want) {
		t.Errorf("one byte at a time: cycles %v, want %v", ns, want)
	}
}

func TestScannerLongLines(t *testing.T) {
	const limit = 64 << 10
	// A gc line padded in front to exactly 64 KiB is still read.
	fits := line("2")
	fits = strings.Repeat("x", limit-len(fits)) + fits
	in := strings.Join([]string{
		line("1"),
		strings.Repeat("y", limit+1), // program output: skipped
		strings.Repeat("z", 3*limit) + line("99"), // gc past the first 64 KiB: skipped, not seen
		fits,
		line("3"),
	}, "\n") + "\n"
	// A caller's own large bufio.Reader must not lift the limit.
	ns, s := scanAll(t, bufio.NewReaderSize(strings.NewReader(in), 1<<20))
	if want := []int{1, 2, 3}; !slices.Equal(ns, want) {
		t.Errorf("cycles %v, want %v", ns, want)
	}
	if s.Skipped() != 0 {
		// Only a gc marker within an over-long line's first 64 KiB counts.
		t.Errorf("Skipped = %d, want 0", s.Skipped())
	}
	gcFirst := line("7") + strings.Repeat("z", 2*limit) + "\n" + line("8") + "\n"
	ns, s = scanAll(t, strings.NewReader(gcFirst))
	if !slices.Equal(ns, []int{8}) || s.Skipped() != 1 {
		t.Errorf("gc-looking over-long line: cycles %v, Skipped %d; want [8], 1", ns, s.Skipped())
	}
	// An over-long last line with no newline ends the stream cleanly.
	ns, s = scanAll(t, strings.NewReader(line("1")+"\n"+strings.Repeat("w", 2*limit)))
	if !slices.Equal(ns, []int{1}) || s.Err() != nil {
		t.Errorf("over-long last line: cycles %v, Err %v", ns, s.Err())
	}
}

// TestScannerBounded reads one 32 MiB line and checks the Scanner did not
// buffer it: far fewer bytes are allocated than the line holds.
func TestScannerBounded(t *testing.T) {
	const size = 32 << 20
	r := io.MultiReader(
		io.LimitReader(repeatReader('x'), size),
		strings.NewReader("\n"+line("1")+"\n"),
	)
	sample := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(sample)
	before := sample[0].Value.Uint64()
	ns, s := scanAll(t, r)
	metrics.Read(sample)
	allocated := sample[0].Value.Uint64() - before
	if !slices.Equal(ns, []int{1}) || s.Err() != nil {
		t.Fatalf("cycles %v, Err %v", ns, s.Err())
	}
	if allocated > 4<<20 {
		t.Errorf("scanning a %d-byte line allocated %d bytes; want it bounded by the 64 KiB buffer", size, allocated)
	}
}

type repeatReader byte

func (b repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

func TestScannerReadError(t *testing.T) {
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader(line("1")+"\n"+line("2")+"\n"), iotest.ErrReader(boom))
	ns, s := scanAll(t, r)
	if !slices.Equal(ns, []int{1, 2}) {
		t.Errorf("cycles before the error: %v, want [1 2]", ns)
	}
	if !errors.Is(s.Err(), boom) {
		t.Errorf("Err = %v, want %v", s.Err(), boom)
	}
	// An error in the middle of an over-long line is reported too.
	r = io.MultiReader(strings.NewReader(strings.Repeat("q", 70<<10)), iotest.ErrReader(boom))
	if _, s = scanAll(t, r); !errors.Is(s.Err(), boom) {
		t.Errorf("Err after a long line = %v, want %v", s.Err(), boom)
	}
}
