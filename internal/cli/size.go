package cli

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// sizeUnits are the byte-size suffixes ParseSize accepts, longest first: IEC (GOMEMLIMIT's
// KiB, MiB...), Kubernetes' binary (Ki, Mi...) and decimal (k, M, G...: powers of ten, as
// in a pod's resources.limits.memory), and SI with a B (kB, MB...: powers of ten too).
var sizeUnits = []struct {
	suffix string
	mult   float64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"PiB", 1 << 50}, {"EiB", 1 << 60},
	{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"Ti", 1 << 40}, {"Pi", 1 << 50}, {"Ei", 1 << 60},
	{"kB", 1e3}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"PB", 1e15}, {"EB", 1e18},
	{"k", 1e3}, {"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}, {"P", 1e15}, {"E", 1e18},
	{"B", 1},
}

// sizeHelp says which sizes ParseSize accepts and what M and Mi mean.
const sizeHelp = "2GiB, 512Mi, 1G or 800MB; M and G are 10^6 and 10^9 bytes as Kubernetes writes them, Mi and MiB 2^20"

// ParseSize parses a byte size such as "2GiB", "512Mi", "1G", "1.5Gi", "800MB" or
// "1073741824". As in Kubernetes, "M" is 10^6 bytes and "Mi" 2^20.
func ParseSize(s string) (uint64, error) {
	t := strings.TrimSpace(s)
	mult := 1.0
	for _, u := range sizeUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || !(v > 0) || math.IsInf(v, 0) || v*mult >= 1<<63 { // !(v > 0): NaN too
		return 0, fmt.Errorf("size %q: want a positive size such as %s", s, sizeHelp)
	}
	return uint64(v * mult), nil
}

// sizeFlag is a flag.Value holding a byte size.
type sizeFlag struct{ bytes uint64 }

func (f *sizeFlag) String() string {
	if f == nil || f.bytes == 0 {
		return ""
	}
	return formatBytesExact(f.bytes)
}

func (f *sizeFlag) Set(s string) error {
	v, err := ParseSize(s)
	if err != nil {
		return err
	}
	f.bytes = v
	return nil
}

// formatBytesExact writes a size in the largest IEC unit that divides it.
func formatBytesExact(b uint64) string {
	for _, u := range []struct {
		s string
		m uint64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if b%u.m == 0 {
			return fmt.Sprintf("%d%s", b/u.m, u.s)
		}
	}
	return fmt.Sprintf("%dB", b)
}
