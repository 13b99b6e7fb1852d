package words

import (
	"fmt"
	"time"

	"github.com/memdoctor/memdoctor/units"
)

// bytesStr formats a byte count in IEC units with one decimal.
func bytesStr(v float64) string { return units.Bytes(v) }

// humanDuration formats seconds as a rounded duration.
func humanDuration(secs float64) string {
	return units.Duration(time.Duration(secs * float64(time.Second)))
}

// pct formats a fraction as a percentage.
func pct(f float64) string { return fmt.Sprintf("%.0f%%", f*100) }

// mib rounds bytes down to whole MiB, for GOMEMLIMIT values.
func mib(b float64) string { return fmt.Sprintf("%dMiB", int64(b)>>20) }

// sizeStr formats a size read with a resolution of quantum bytes: a value under it reads as
// "under" it (gctrace prints whole MiB: 0 MB is anything under 1 MiB).
func sizeStr(v, quantum float64) string {
	if quantum > 0 && v < quantum {
		return "under " + bytesStr(quantum)
	}
	return bytesStr(v)
}
