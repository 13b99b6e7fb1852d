package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/memdoctor/memdoctor/units"
)

// Seconds formats a number of seconds: "0.35 s", "12.5 s", "95 s", "7200 s (2h0m0s)".
func Seconds(v float64) string { return units.Seconds(v) }

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
