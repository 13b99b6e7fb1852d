package report

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// evidenceRow is one number of a finding's evidence, named and formatted for people.
type evidenceRow struct {
	Name, Value string
}

// evidenceRows formats a finding's evidence by the unit its name carries, in name order.
func evidenceRows(ev map[string]float64) []evidenceRow {
	keys := make([]string, 0, len(ev))
	for k := range ev {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]evidenceRow, 0, len(keys))
	for _, k := range keys {
		name, value := evidenceValue(k, ev[k])
		out = append(out, evidenceRow{Name: name, Value: value})
	}
	return out
}

// evidenceValue turns "rss_growth_bytes", 1.5e8 into "rss growth", "143.1 MiB".
func evidenceValue(key string, v float64) (name, value string) {
	cut := func(suffix string) (string, bool) { return strings.CutSuffix(key, suffix) }
	human := func(s string) string { return strings.ReplaceAll(s, "_", " ") }
	if n, ok := cut("_bytes_per_second"); ok {
		return human(n), signedBytesFloat(v) + "/s"
	}
	if n, ok := cut("_bytes"); ok {
		return human(n), signedBytesFloat(v)
	}
	if n, ok := cut("_seconds"); ok {
		return human(n), Seconds(v)
	}
	if n, ok := cut("_ratio"); ok {
		return human(n), strconv.FormatFloat(v, 'f', 2, 64) + "×"
	}
	for _, suffix := range []string{"_fraction", "_share"} {
		if n, ok := cut(suffix); ok {
			return human(n), Percent(v)
		}
	}
	if n, ok := cut("_percent"); ok {
		return human(n), strconv.FormatFloat(v, 'f', 1, 64) + "%"
	}
	if n, ok := cut("_per_second"); ok {
		return human(n), number(v) + "/s"
	}
	if n, ok := cut("_count"); ok {
		return human(n), strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	}
	return human(key), number(v)
}

func signedBytesFloat(v float64) string {
	if v < 0 {
		return "-" + Bytes(uint64(-v))
	}
	return Bytes(uint64(v))
}

// Seconds formats a number of seconds: "0.35 s", "12.5 s", "95 s", "7200 s (2h0m0s)".
func Seconds(v float64) string {
	var s string
	switch a := math.Abs(v); {
	case a == 0:
		return "0 s"
	case a < 0.01:
		s = strconv.FormatFloat(v*1000, 'f', 2, 64) + " ms"
	case a < 10:
		s = strconv.FormatFloat(v, 'f', 2, 64) + " s"
	case a < 100:
		s = strconv.FormatFloat(v, 'f', 1, 64) + " s"
	default:
		s = strconv.FormatFloat(v, 'f', 0, 64) + " s"
	}
	if math.Abs(v) >= 120 {
		s += " (" + Duration(time.Duration(v*float64(time.Second))) + ")"
	}
	return s
}

// number formats a plain number with at most 3 significant decimals.
func number(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1000 || a == math.Trunc(a):
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// clock formats instants in loc: the time of day, with the date when the span crosses days.
type clock struct {
	loc      *time.Location
	withDate bool
}

func newClock(loc *time.Location, start, end time.Time) clock {
	a, b := start.In(loc), end.In(loc)
	return clock{loc: loc, withDate: a.YearDay() != b.YearDay() || a.Year() != b.Year()}
}

func (c clock) at(t time.Time) string {
	if c.withDate {
		return t.In(c.loc).Format("Jan 2 15:04:05")
	}
	return t.In(c.loc).Format("15:04:05")
}

// span formats a time span: "07:13:30 – 07:13:40 (10s)", or one instant.
func (c clock) span(start, end time.Time) string {
	switch {
	case start.IsZero() && end.IsZero():
		return ""
	case end.IsZero() || end.Equal(start):
		return c.at(start)
	case start.IsZero():
		return "until " + c.at(end)
	}
	return fmt.Sprintf("%s – %s (%s)", c.at(start), c.at(end), Duration(end.Sub(start)))
}

// shellQuote quotes an argument for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-./:@%+=,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// zone describes loc over [start, end]: its name and each offset in force.
func zone(loc *time.Location, name string, start, end, t0 time.Time) Zone {
	z := Zone{}
	t := start
	for range 8 { // a window crosses at most a few zone changes
		abbrev, off := t.In(loc).Zone()
		z.Offsets = append(z.Offsets, ZoneOffset{From: t.Sub(t0).Seconds(), Offset: off, Abbrev: abbrev})
		_, next := t.In(loc).ZoneBounds()
		if next.IsZero() || !next.Before(end) {
			break
		}
		t = next
	}
	first := z.Offsets[0]
	if name == "" && loc.String() != "Local" {
		name = loc.String()
	}
	desc := utcOffset(first.Offset)
	if first.Abbrev != "" && first.Abbrev != name && !strings.HasPrefix(desc, first.Abbrev) {
		desc = first.Abbrev + ", " + desc
	}
	if name == "" {
		z.Name = desc
	} else {
		z.Name = name + " (" + desc + ")"
	}
	if len(z.Offsets) > 1 {
		last := z.Offsets[len(z.Offsets)-1]
		z.Name += fmt.Sprintf(", %s from %s", utcOffset(last.Offset), t.In(loc).Format("Jan 2 15:04"))
	}
	return z
}

func utcOffset(sec int) string {
	sign := '+'
	if sec < 0 {
		sign, sec = '-', -sec
	}
	return fmt.Sprintf("UTC%c%02d:%02d", sign, sec/3600, sec%3600/60)
}
