package report

import (
	"bytes"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the zone test runs on systems without a zone database too
)

// TestEvidenceWithUnits: the text and the HTML reports show each evidence figure with its
// unit, formatted the same way (the formatter's table test is units.TestEvidence).
func TestEvidenceWithUnits(t *testing.T) {
	s := openFixture(t)
	d := fixtureDiagnosis(s)
	d.Findings[0].Evidence = map[string]float64{"growth_bytes_per_minute": 223192254, "gc_cpu_fraction": 0.123, "spikes_count": 3}
	var text bytes.Buffer
	if err := Text(&text, d, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	const want = "evidence: GC CPU 12.3%, growth 212.9 MiB/min, spikes 3"
	if !strings.Contains(text.String(), want) {
		t.Errorf("the text report lacks %q:\n%s", want, text.String())
	}
	var page bytes.Buffer
	if err := HTML(&page, s, evidenceOf(t, s), d, HTMLOptions{Location: time.UTC}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"212.9 MiB/min", "12.3%"} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("the HTML report lacks %q", want)
		}
	}
	if strings.Contains(page.String(), "223192254") || strings.Contains(text.String(), "223192254") {
		t.Error("a report shows the raw figure 223192254")
	}
}

func TestZone(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris") // from time/tzdata when the system has none
	if err != nil {
		t.Fatal(err)
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
