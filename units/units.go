// Package units formats quantities the way people read them: bytes in IEC units (MiB, GiB),
// durations rounded to what matters, fractions as percentages. The diagnosis (its titles and
// details) and the reports share it, so a figure reads the same everywhere. It is a leaf of
// memdoctor's layers (docs/development.md): it imports nothing of memdoctor's, and the
// readers (process, snapshot), the holders, the words, the diagnosis and the report print
// through it.
package units

import (
	"fmt"
	"math"
	"time"
)

// Bytes formats a byte count in IEC units with one decimal: "412.3 MiB"; a negative count
// gets a minus sign.
func Bytes(v float64) string {
	if v < 0 {
		return "-" + Bytes(-v)
	}
	const unit = 1024
	if v < unit {
		return fmt.Sprintf("%.0f B", v)
	}
	exp := min(int(math.Log(v)/math.Log(unit)), 5)
	return fmt.Sprintf("%.1f %ciB", v/math.Pow(unit, float64(exp)), "KMGTP"[exp-1])
}

// Percent formats a fraction as a percentage with one decimal: 0.123 -> "12.3%".
func Percent(f float64) string {
	if f > 0 && f < 0.001 {
		return "<0.1%"
	}
	return fmt.Sprintf("%.1f%%", f*100)
}

// Duration rounds a duration for display: whole days past two days, minutes past an hour,
// seconds past a minute, tenths of a second past a second, else milliseconds.
func Duration(d time.Duration) string {
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%.0f days", d.Hours()/24)
	case d >= time.Hour:
		return d.Round(time.Minute).String()
	case d >= time.Minute:
		return d.Round(time.Second).String()
	case d >= time.Second:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Millisecond).String()
}
