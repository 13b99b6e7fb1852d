package session

import (
	"fmt"
	"strings"
	"time"
)

// timeLayout is the time stamp in profile file names: UTC, sortable, no colons.
const timeLayout = "20060102T150405.000Z"

// ProfileFileName returns the file name of a profile snapshot, for example
// "heap-20261122T064512.345Z.pb.gz", "heap-20261122T064512.345Z-before-spike.pb.gz" or
// "goroutineleak-20261122T064512.345Z.pb.gz".
func ProfileFileName(kind string, t time.Time, label string) string {
	ext := ".pb.gz"
	base := kind
	if kind == KindGoroutineText {
		base, ext = KindGoroutine, ".txt"
	}
	name := base + "-" + t.UTC().Format(timeLayout)
	if label != "" {
		name += "-" + label
	}
	return name + ext
}

// ParseProfileFileName is the inverse of ProfileFileName.
func ParseProfileFileName(name string) (ProfileRef, error) {
	var kind, ext string
	switch {
	case strings.HasSuffix(name, ".pb.gz"):
		ext = ".pb.gz"
	case strings.HasSuffix(name, ".txt"):
		ext = ".txt"
	default:
		return ProfileRef{}, fmt.Errorf("profile file %q: unknown extension", name)
	}
	rest := strings.TrimSuffix(name, ext)
	kind, rest, ok := strings.Cut(rest, "-")
	if !ok || (kind != KindHeap && kind != KindGoroutine && kind != KindGoroutineLeak) {
		return ProfileRef{}, fmt.Errorf("profile file %q: want heap-<time>, goroutine-<time> or goroutineleak-<time>", name)
	}
	if kind == KindGoroutine && ext == ".txt" {
		kind = KindGoroutineText
	} else if ext == ".txt" {
		return ProfileRef{}, fmt.Errorf("profile file %q: only goroutine text is stored as .txt", name)
	}
	if len(rest) < len(timeLayout) {
		return ProfileRef{}, fmt.Errorf("profile file %q: no time stamp", name)
	}
	t, err := time.Parse(timeLayout, rest[:len(timeLayout)])
	if err != nil {
		return ProfileRef{}, fmt.Errorf("profile file %q: time stamp: %w", name, err)
	}
	label := strings.TrimPrefix(rest[len(timeLayout):], "-")
	if ProfileFileName(kind, t, label) != name { // e.g. "12,345" for "12.345", or no "-" before the label
		return ProfileRef{}, fmt.Errorf("profile file %q: not a name memdoctor writes", name)
	}
	return ProfileRef{Kind: kind, Time: t, Label: label, Path: name}, nil
}
