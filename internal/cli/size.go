package cli

import (
	"fmt"

	"github.com/memdoctor/memdoctor/agent/bytesize"
)

// sizeHelp says which sizes ParseSize accepts and what M and Mi mean.
const sizeHelp = bytesize.Help

// ParseSize parses a byte size such as "2GiB", "512Mi", "1G", "1.5Gi", "800MB" or
// "1073741824" (bytesize.Parse: as in Kubernetes, "M" is 10^6 bytes and "Mi" 2^20).
func ParseSize(s string) (uint64, error) { return bytesize.Parse(s) }

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
