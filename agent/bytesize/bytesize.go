// Package bytesize reads byte sizes: as people and Kubernetes write them ("2GiB", "512Mi",
// "1G", "1.5Gi", "800MB") wherever memdoctor takes a size (flags, the agent's environment),
// and as the Go runtime reads GOMEMLIMIT. It is a leaf that the embeddable agent imports:
// it imports nothing but the standard library.
package bytesize

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Help says which sizes Parse accepts and what M and Mi mean, for flag usage and errors.
const Help = "2GiB, 512Mi, 1G or 800MB; M and G are 10^6 and 10^9 bytes as Kubernetes writes them, Mi and MiB 2^20"

// unit is a suffix and its multiplier. fold: the suffix matches in any case (the IEC forms
// with "iB", whose reading cannot be mistaken); otherwise it matches exactly, so "512m"
// (Kubernetes' milli) and "1Gb" (bits) are refused rather than guessed.
type unit struct {
	suffix string
	mult   float64
	fold   bool
}

// units, longest first: IEC (GOMEMLIMIT's KiB, MiB...), Kubernetes' binary (Ki, Mi...) and
// decimal (k, M, G...: powers of ten, as in a pod's resources.limits.memory), and SI with a
// B (kB, MB...: powers of ten too).
var units = []unit{
	{"KiB", 1 << 10, true}, {"MiB", 1 << 20, true}, {"GiB", 1 << 30, true}, {"TiB", 1 << 40, true}, {"PiB", 1 << 50, true}, {"EiB", 1 << 60, true},
	{"Ki", 1 << 10, false}, {"Mi", 1 << 20, false}, {"Gi", 1 << 30, false}, {"Ti", 1 << 40, false}, {"Pi", 1 << 50, false}, {"Ei", 1 << 60, false},
	{"kB", 1e3, false}, {"KB", 1e3, false}, {"MB", 1e6, false}, {"GB", 1e9, false}, {"TB", 1e12, false}, {"PB", 1e15, false}, {"EB", 1e18, false},
	{"k", 1e3, false}, {"K", 1e3, false}, {"M", 1e6, false}, {"G", 1e9, false}, {"T", 1e12, false}, {"P", 1e15, false}, {"E", 1e18, false},
	{"B", 1, false},
}

// Parse reads a positive byte size such as "2GiB", "512Mi", "1G", "1.5Gi", "800MB" or
// "1073741824". As in Kubernetes, "M" is 10^6 bytes and "Mi" 2^20. Space around the number
// and between it and its unit is allowed; a fraction of a byte is dropped.
func Parse(s string) (uint64, error) {
	t := strings.TrimSpace(s)
	mult := 1.0
	for _, u := range units {
		if hasSuffix(t, u) {
			t, mult = strings.TrimSpace(t[:len(t)-len(u.suffix)]), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	b := v * mult
	if err != nil || !(b >= 1) || b >= 1<<63 || strings.ContainsAny(t, "xXpP_") { // !(b >= 1): NaN too; no hex floats
		return 0, fmt.Errorf("size %q: want a positive size such as %s", s, Help)
	}
	return uint64(b), nil
}

func hasSuffix(s string, u unit) bool {
	if len(s) < len(u.suffix) {
		return false
	}
	tail := s[len(s)-len(u.suffix):]
	if u.fold {
		return strings.EqualFold(tail, u.suffix)
	}
	return tail == u.suffix
}

// GoMemLimit reads a GOMEMLIMIT value as the Go runtime does (runtime/debug.SetMemoryLimit's
// documentation): a whole number of bytes with an optional unit B, KiB, MiB, GiB or TiB
// (case sensitive, no space, no fraction); "" and "off" mean no limit (set is false). The
// runtime refuses anything else at start, Kubernetes' "512Mi" and "1G" included: err says so.
func GoMemLimit(s string) (limit int64, set bool, err error) {
	if s == "" || s == "off" {
		return 0, false, nil
	}
	n, ok := runtimeByteCount(s)
	if !ok {
		return 0, false, fmt.Errorf("GOMEMLIMIT=%q: the Go runtime refuses it: want a whole number of bytes with B, KiB, MiB, GiB or TiB (e.g. 1536MiB), or off", s)
	}
	return n, true, nil
}

// runtimeByteCount is the runtime's byte count syntax (parseByteCount in runtime/string.go).
func runtimeByteCount(s string) (int64, bool) {
	num, mult := s, uint64(1)
	switch {
	case strings.HasSuffix(s, "iB"):
		if len(s) < 4 {
			return 0, false
		}
		switch s[len(s)-3] {
		case 'K':
			mult = 1 << 10
		case 'M':
			mult = 1 << 20
		case 'G':
			mult = 1 << 30
		case 'T':
			mult = 1 << 40
		default:
			return 0, false
		}
		num = s[:len(s)-3]
	case strings.HasSuffix(s, "B"):
		num = s[:len(s)-1]
	}
	if num == "" || num[len(num)-1] < '0' || num[len(num)-1] > '9' {
		return 0, false
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || uint64(n) > math.MaxInt64/mult {
		return 0, false
	}
	return n * int64(mult), true
}
