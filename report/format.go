package report

import (
	"time"

	"github.com/memdoctor/memdoctor/internal/units"
)

// Bytes formats a byte count in IEC units with one decimal: "412.3 MiB".
func Bytes(b uint64) string { return units.Bytes(float64(b)) }

// SignedBytes formats a signed byte count with an explicit sign: "+12.0 MiB".
func SignedBytes(b int64) string {
	if b < 0 {
		return units.Bytes(float64(b))
	}
	return "+" + units.Bytes(float64(b))
}

// Percent formats a fraction as a percentage: 0.123 -> "12.3%".
func Percent(f float64) string { return units.Percent(f) }

// Duration rounds a duration for display.
func Duration(d time.Duration) string { return units.Duration(d) }
