package culprit

import (
	"errors"
	"fmt"
	"strings"

	"github.com/google/pprof/profile"
)

// ErrNoSampleType is wrapped by the errors of SampleIndex (and so of
// Aggregate and Diff) when a profile lacks the requested sample type.
var ErrNoSampleType = errors.New("sample type not in profile")

// SampleIndex finds a sample type by name ("inuse_space", "alloc_space",
// "inuse_objects", "alloc_objects", "goroutine", ...), optionally with its
// unit ("alloc_space/bytes"). "" selects the profile's default sample type
// (the last one when the profile names none, as pprof does). The error lists
// the available types.
func SampleIndex(p *profile.Profile, typ string) (int, error) {
	if p == nil {
		return -1, errors.New("nil profile")
	}
	if len(p.SampleType) == 0 {
		return -1, fmt.Errorf("%w: the profile has no sample types at all", ErrNoSampleType)
	}
	if typ == "" {
		typ = p.DefaultSampleType
		if typ == "" {
			return len(p.SampleType) - 1, nil
		}
	}
	name, unit, withUnit := strings.Cut(typ, "/")
	for i, st := range p.SampleType {
		if st != nil && st.Type == name && (!withUnit || st.Unit == unit) {
			return i, nil
		}
	}
	return -1, fmt.Errorf("%w: %q (available: %s)", ErrNoSampleType, typ, SampleTypes(p))
}

// SampleTypes lists p's sample types as "type/unit", comma-separated, with
// "(unnamed)" for a sample type without a name.
func SampleTypes(p *profile.Profile) string {
	if p == nil || len(p.SampleType) == 0 {
		return "none"
	}
	var b strings.Builder
	for i, st := range p.SampleType {
		if i > 0 {
			b.WriteString(", ")
		}
		switch {
		case st == nil || st.Type == "" && st.Unit == "":
			b.WriteString("(unnamed)")
		default:
			b.WriteString(st.Type)
			b.WriteByte('/')
			b.WriteString(st.Unit)
		}
	}
	return b.String()
}
