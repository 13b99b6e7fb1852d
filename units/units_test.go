package units

import (
	"testing"
	"time"
)

func TestBytes(t *testing.T) {
	for v, want := range map[float64]string{
		0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1.5 * (1 << 20): "1.5 MiB",
		412.3 * (1 << 20): "412.3 MiB", 3 << 30: "3.0 GiB", -(2 << 20): "-2.0 MiB", 1 << 60: "1024.0 PiB",
	} {
		if got := Bytes(v); got != want {
			t.Errorf("Bytes(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestPercent(t *testing.T) {
	for f, want := range map[float64]string{0: "0.0%", 0.0004: "<0.1%", 0.123: "12.3%", 1: "100.0%"} {
		if got := Percent(f); got != want {
			t.Errorf("Percent(%v) = %q, want %q", f, got, want)
		}
	}
}

func TestDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		22 * time.Millisecond:   "22ms",
		1234 * time.Millisecond: "1.2s",
		95 * time.Second:        "1m35s",
		90 * time.Minute:        "1h30m0s",
		72 * time.Hour:          "3 days",
	} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%v) = %q, want %q", d, got, want)
		}
	}
}
