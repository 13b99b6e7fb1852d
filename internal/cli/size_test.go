package cli

import (
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want uint64
	}{
		// Kubernetes, as in resources.limits.memory: decimal k, M, G, T and binary Ki, Mi, Gi.
		{"512M", 512e6}, {"1G", 1e9}, {"2Gi", 2 << 30}, {"512Mi", 512 << 20}, {"128k", 128e3},
		{"1.5Gi", 1.5 * (1 << 30)}, {"1T", 1e12}, {"1Ti", 1 << 40}, {"1P", 1e15}, {"1Pi", 1 << 50},
		{"1E", 1e18}, {"1Ei", 1 << 60}, {"129e6", 129e6}, {"1K", 1e3},
		// IEC, as GOMEMLIMIT writes it.
		{"2GiB", 2 << 30}, {"512MiB", 512 << 20}, {"64KiB", 64 << 10}, {"1TiB", 1 << 40},
		// SI with a B.
		{"800MB", 800e6}, {"1.5GB", 1.5e9}, {"10kB", 10e3}, {"10KB", 10e3},
		// Plain bytes.
		{"1073741824", 1 << 30}, {"4096B", 4096}, {" 2Gi ", 2 << 30}, {"2 GiB", 2 << 30},
	} {
		got, err := ParseSize(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "0", "-1G", "G", "512m", "1.2.3M", "8EiB", "10E", "1Gb", "inf", "NaN", "2 Gi B", "1GiB1"} {
		if v, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", bad, v)
		} else if !strings.Contains(err.Error(), "M and G are 10^6 and 10^9") {
			t.Errorf("ParseSize(%q): %v: the error does not say what M means", bad, err)
		}
	}
}

func TestFormatBytesExact(t *testing.T) {
	for in, want := range map[uint64]string{2 << 30: "2GiB", 512 << 20: "512MiB", 512e6: "500000KiB", 1000: "1000B"} {
		if got := formatBytesExact(in); got != want {
			t.Errorf("formatBytesExact(%d) = %q, want %q", in, got, want)
		}
	}
}
