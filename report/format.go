package report

import (
	"sort"
	"strings"
	"time"

	"github.com/memdoctor/memdoctor/units"
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
		name, value := units.Evidence(k, ev[k])
		out = append(out, evidenceRow{Name: name, Value: value})
	}
	return out
}

// evidenceText is a finding's evidence on one line: "growth 212.9 MiB/min, ...".
func evidenceText(ev map[string]float64) string {
	rows := evidenceRows(ev)
	parts := make([]string, len(rows))
	for i, r := range rows {
		parts[i] = r.Name + " " + r.Value
	}
	return strings.Join(parts, ", ")
}
