package modproxy

import (
	"fmt"
	"strings"
	"time"
)

// pseudoTime is the time stamp of a pseudo-version: the commit's time in UTC.
const pseudoTime = "20060102150405"

// PseudoVersion is the version the go command gives a commit that no tag names, for a module
// that has no tag yet: v0.0.0-<commit time, UTC>-<the hash's first 12 digits>.
func PseudoVersion(t time.Time, hash string) string {
	if len(hash) > 12 {
		hash = hash[:12]
	}
	return "v0.0.0-" + t.UTC().Format(pseudoTime) + "-" + hash
}

// ParsePseudoVersion is the inverse of PseudoVersion: the commit's time and its hash prefix.
func ParsePseudoVersion(v string) (time.Time, string, error) {
	rest, ok := strings.CutPrefix(v, "v0.0.0-")
	stamp, hash, ok2 := strings.Cut(rest, "-")
	if !ok || !ok2 || len(stamp) != len(pseudoTime) || len(hash) != 12 || strings.Trim(hash, "0123456789abcdef") != "" {
		return time.Time{}, "", fmt.Errorf("version %q: want v0.0.0-YYYYMMDDhhmmss-<12 hex digits of a commit>", v)
	}
	t, err := time.Parse(pseudoTime, stamp)
	if err != nil {
		return time.Time{}, "", fmt.Errorf("version %q: time stamp: %w", v, err)
	}
	return t, hash, nil
}

// IsPseudoVersion reports whether v is a version PseudoVersion writes.
func IsPseudoVersion(v string) bool {
	_, _, err := ParsePseudoVersion(v)
	return err == nil
}
