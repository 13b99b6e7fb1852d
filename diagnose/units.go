package diagnose

import (
	"fmt"
	"math"
	"time"
)

// bytesStr formats a byte count in IEC units with one decimal.
func bytesStr(v float64) string {
	neg := v < 0
	if neg {
		v = -v
	}
	s := ""
	switch {
	case v < 1<<10:
		s = fmt.Sprintf("%.0f B", v)
	default:
		exp := min(int(math.Log(v)/math.Log(1024)), 5)
		s = fmt.Sprintf("%.1f %ciB", v/math.Pow(1024, float64(exp)), "KMGTP"[exp-1])
	}
	if neg {
		return "-" + s
	}
	return s
}

// humanDuration formats seconds as a rounded duration ("about 42m").
func humanDuration(secs float64) string {
	d := time.Duration(secs * float64(time.Second))
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

// pct formats a fraction as a percentage.
func pct(f float64) string { return fmt.Sprintf("%.0f%%", f*100) }

// mib rounds bytes down to whole MiB, for GOMEMLIMIT values.
func mib(b float64) string { return fmt.Sprintf("%dMiB", int64(b)>>20) }
