package report

import (
	"fmt"
	"math"
	"time"
)

// Bytes formats a byte count in IEC units with one decimal: "412.3 MiB".
func Bytes(b uint64) string {
	return bytesFloat(float64(b))
}

// SignedBytes formats a signed byte count with an explicit sign: "+12.0 MiB".
func SignedBytes(b int64) string {
	if b < 0 {
		return "-" + bytesFloat(float64(-b))
	}
	return "+" + bytesFloat(float64(b))
}

func bytesFloat(v float64) string {
	const unit = 1024
	if v < unit {
		return fmt.Sprintf("%.0f B", v)
	}
	exp := int(math.Log(v) / math.Log(unit))
	exp = min(exp, 5)
	return fmt.Sprintf("%.1f %ciB", v/math.Pow(unit, float64(exp)), "KMGTP"[exp-1])
}

// Percent formats a fraction as a percentage: 0.123 -> "12.3%".
func Percent(f float64) string {
	if f > 0 && f < 0.001 {
		return "<0.1%"
	}
	return fmt.Sprintf("%.1f%%", f*100)
}

// Duration rounds a duration for display.
func Duration(d time.Duration) string {
	switch {
	case d >= time.Hour:
		return d.Round(time.Minute).String()
	case d >= time.Minute:
		return d.Round(time.Second).String()
	case d >= time.Second:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Millisecond).String()
}
