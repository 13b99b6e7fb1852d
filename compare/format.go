package compare

import (
	"fmt"

	"github.com/memdoctor/memdoctor/units"
)

// FormatValue writes a value in a metric's unit as the tables show it.
func FormatValue(unit string, v float64) string {
	switch unit {
	case "bytes":
		return units.Bytes(v)
	case "bytes_per_second":
		return units.Bytes(v) + "/s"
	case "fraction":
		return fmt.Sprintf("%.1f%%", v*100)
	case "per_second":
		return fmt.Sprintf("%.2f/s", v)
	case "count":
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%g", v)
}
