package diagnose

import (
	"github.com/memdoctor/memdoctor/agent/breakdown"
)

// Breakdown splits resident memory into where it goes, at the RSS peak and at the end.
type Breakdown struct {
	Peak   *breakdown.At `json:"peak,omitempty"`
	Latest *breakdown.At `json:"latest,omitempty"`
}
