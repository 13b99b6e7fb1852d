package report

import (
	"strings"
	"testing"
	"time"
)

func TestEvidenceValue(t *testing.T) {
	for _, c := range []struct {
		key         string
		v           float64
		name, value string
	}{
		{"rss_growth_bytes", 150 * mib, "rss growth", "150.0 MiB"},
		{"shrink_bytes", -2048, "shrink", "-2.0 KiB"},
		{"alloc_bytes_per_second", 60 * mib, "alloc", "60.0 MiB/s"},
		{"pause_seconds", 0.35, "pause", "0.35 s"},
		{"window_seconds", 7200, "window", "7200 s (2h0m0s)"},
		{"gc_cpu_fraction", 0.123, "gc cpu", "12.3%"},
		{"gc_per_second", 8.5, "gc", "8.5/s"},
		{"goroutines_count", 41.6, "goroutines", "42"},
		{"p_value", 0.00012, "p value", "0.00012"},
	} {
		name, value := evidenceValue(c.key, c.v)
		if name != c.name || value != c.value {
			t.Errorf("%s=%v: %q %q, want %q %q", c.key, c.v, name, value, c.name, c.value)
		}
	}
}

func TestZone(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Skipf("no time zone database: %v", err)
	}
	// The window crosses the change to summer time (2026-03-29 01:00 UTC).
	start := time.Date(2026, 3, 29, 0, 30, 0, 0, time.UTC)
	z := zone(paris, "Europe/Paris", start, start.Add(time.Hour), start)
	if len(z.Offsets) != 2 || z.Offsets[0].Offset != 3600 || z.Offsets[1].Offset != 7200 || z.Offsets[1].From != 1800 {
		t.Fatalf("offsets %+v, want +1h then +2h from 1800 s", z.Offsets)
	}
	if !strings.HasPrefix(z.Name, "Europe/Paris (CET, UTC+01:00)") || !strings.Contains(z.Name, "UTC+02:00") {
		t.Errorf("name %q", z.Name)
	}
	if z := zone(time.UTC, "", start, start.Add(time.Hour), start); z.Name != "UTC (UTC+00:00)" {
		t.Errorf("UTC named %q", z.Name)
	}
}
