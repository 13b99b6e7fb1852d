package bytesize

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in   string
		want uint64
	}{
		// Kubernetes, as in resources.limits.memory: decimal k, M, G, T and binary Ki, Mi, Gi.
		{"512M", 512e6}, {"1G", 1e9}, {"2Gi", 2 << 30}, {"512Mi", 512 << 20}, {"128k", 128e3},
		{"1.5Gi", 1.5 * (1 << 30)}, {"1T", 1e12}, {"1Ti", 1 << 40}, {"1P", 1e15}, {"1Pi", 1 << 50},
		{"1E", 1e18}, {"1Ei", 1 << 60}, {"129e6", 129e6}, {"1K", 1e3},
		// IEC, as GOMEMLIMIT writes it, in any case.
		{"2GiB", 2 << 30}, {"512MiB", 512 << 20}, {"64KiB", 64 << 10}, {"1TiB", 1 << 40}, {"64kib", 64 << 10}, {"3 MIB", 3 << 20},
		// SI with a B.
		{"800MB", 800e6}, {"1.5GB", 1.5e9}, {"10kB", 10e3}, {"10KB", 10e3},
		// Plain bytes.
		{"1073741824", 1 << 30}, {"4096B", 4096}, {" 2Gi ", 2 << 30}, {"2 GiB", 2 << 30}, {"1.9", 1},
	} {
		got, err := Parse(c.in)
		if err != nil || got != c.want {
			t.Errorf("Parse(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "0", "0.5", "-1G", "G", "GiB", "512m", "1.2.3M", "8EiB", "10E", "1Gb", "1mb", "inf", "Inf", "NaN",
		"2 Gi B", "1GiB1", "two", "0x10", "0x1p20", "1_000", "1e30GiB", "1e400"} {
		if v, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) = %d, want an error", bad, v)
		} else if !strings.Contains(err.Error(), "M and G are 10^6 and 10^9") || !strings.Contains(err.Error(), strconv.Quote(bad)) {
			t.Errorf("Parse(%q): %v: the error does not name the input and say what M means", bad, err)
		}
	}
}

// TestGoMemLimit checks the runtime's own syntax: what the runtime accepts at start and what
// makes it throw "malformed GOMEMLIMIT" (cases from runtime.TestParseByteCount, and
// Kubernetes' forms, which the runtime refuses).
func TestGoMemLimit(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		set  bool
	}{
		{"", 0, false}, {"off", 0, false},
		{"1", 1, true}, {"012345", 12345, true}, {"9223372036854775807", math.MaxInt64, true},
		{"1B", 1, true}, {"9223372036854775807B", math.MaxInt64, true},
		{"1KiB", 1 << 10, true}, {"05KiB", 5 << 10, true}, {"10MiB", 10 << 20, true}, {"100GiB", 100 << 30, true}, {"99TiB", 99 << 40, true},
		{"-0", 0, true}, {"0", 0, true}, {"0TiB", 0, true}, {"+5", 5, true},
	} {
		got, set, err := GoMemLimit(c.in)
		if err != nil || got != c.want || set != c.set {
			t.Errorf("GoMemLimit(%q) = %d, %v, %v; want %d, %v", c.in, got, set, err, c.want, c.set)
		}
	}
	for _, bad := range []string{"-1", "a12345", "12345x", "0x12345", "9223372036854775808", "18446744073709551616",
		"9223372036854775808B", "1Ki", "10Mi", "22iB", "B", "iB", "KiB", "-120KiB", "99999999999999999999KiB", "99999999999TiB",
		"555EiB", "1KB", "10MB", "1GB", "1K", "10M", "100G", "512Mi", "1.5GiB", "1 GiB", " 1GiB", "OFF", "1kib"} {
		if n, set, err := GoMemLimit(bad); err == nil || set || n != 0 {
			t.Errorf("GoMemLimit(%q) = %d, %v, %v; want the runtime's refusal", bad, n, set, err)
		} else if !strings.Contains(err.Error(), "GOMEMLIMIT=") {
			t.Errorf("GoMemLimit(%q): %v: the error does not name GOMEMLIMIT", bad, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"2GiB", "512Mi", "1G", "1.5Gi", "800MB", "512", "0.5KiB", "-1", "1e400", "GiB", " 3 mib ", "0x1p3", "1EiB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := Parse(s)
		if err == nil && (n == 0 || n >= 1<<63) {
			t.Fatalf("Parse(%q) = %d without an error", s, n)
		}
		if err != nil && n != 0 {
			t.Fatalf("Parse(%q) = %d with an error", s, n)
		}
		if err == nil {
			// A plain number of bytes reads back as itself.
			if m, err := Parse(strconv.FormatUint(n, 10)); err != nil || m != n {
				t.Fatalf("Parse(%q) = %d, but Parse(%d) = %d, %v", s, n, n, m, err)
			}
		}
	})
}

func FuzzGoMemLimit(f *testing.F) {
	for _, s := range []string{"1536MiB", "off", "", "1GiB", "10B", "-0", "1Ki", "99999999999TiB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, set, err := GoMemLimit(s)
		switch {
		case err != nil && (set || n != 0):
			t.Fatalf("GoMemLimit(%q) = %d, %v with an error", s, n, set)
		case err == nil && !set && n != 0, n < 0:
			t.Fatalf("GoMemLimit(%q) = %d, %v", s, n, set)
		case set && strings.ContainsAny(s, " .eE_xX"):
			t.Fatalf("GoMemLimit(%q) accepted what the runtime's integer syntax refuses", s)
		case set:
			// The same number with the runtime's units reads back the same.
			if m, ok, _ := GoMemLimit(strconv.FormatInt(n, 10) + "B"); !ok || m != n {
				t.Fatalf("GoMemLimit(%q) = %d, but %dB reads %d", s, n, n, m)
			}
		}
	})
}
