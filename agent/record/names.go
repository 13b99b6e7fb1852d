package record

import (
	"fmt"
	"strings"
	"time"
)

// timeLayout is the time stamp in profile file names: UTC, sortable, no colons.
const timeLayout = "20060102T150405.000Z"

// MaxLabelLen bounds a profile label.
const MaxLabelLen = 64

// CheckLabel reports whether label may be part of a profile file name: "" (a periodic
// snapshot) or 1 to 64 of [a-z0-9-], starting with a letter or digit ("before-heap-jump").
// Labels come from targets (an agent's profile list): nothing else may reach a file name, so
// no path separator, "..", NUL or control character ever does.
func CheckLabel(label string) error {
	if label == "" {
		return nil
	}
	if len(label) > MaxLabelLen {
		return fmt.Errorf("profile label %q: longer than %d characters", clip(label), MaxLabelLen)
	}
	for i := 0; i < len(label); i++ {
		c := label[i]
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' && i > 0 {
			continue
		}
		return fmt.Errorf("profile label %q: want [a-z0-9][a-z0-9-]*", clip(label))
	}
	return nil
}

// CheckKind reports whether kind is one a session stores: heap, goroutine or goroutine-text.
func CheckKind(kind string) error {
	switch kind {
	case KindHeap, KindGoroutine, KindGoroutineText, KindGoroutineLeak:
		return nil
	}
	return fmt.Errorf("profile kind %q: want %s, %s, %s or %s", clip(kind), KindHeap, KindGoroutine, KindGoroutineLeak, KindGoroutineText)
}

// MaxTraceNameLen bounds a trace file name.
const MaxTraceNameLen = 128

// CheckTraceName reports whether name may be the file name of a stored trace: 1 to 128 of
// [A-Za-z0-9._-], starting with a letter or digit, without "..", ending in ".trace", as an
// agent names its snapshots ("trace-20261122T064512.345Z-heap-jump.trace").
func CheckTraceName(name string) error {
	bad := len(name) > MaxTraceNameLen || !strings.HasSuffix(name, ".trace") || strings.Contains(name, "..")
	for i := 0; i < len(name) && !bad; i++ {
		c := name[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		bad = !alnum && (i == 0 || c != '.' && c != '-' && c != '_')
	}
	if bad {
		return fmt.Errorf("trace file name %q: want up to %d of [A-Za-z0-9._-] ending in .trace, starting with a letter or digit, without a double dot", clip(name), MaxTraceNameLen)
	}
	return nil
}

// clip shortens a name quoted in an error; %q escapes what is left.
func clip(s string) string {
	const max = 80
	if len(s) > max {
		return s[:max] + "..."
	}
	return s
}

// ProfileFileName returns the file name of a profile snapshot, for example
// "heap-20261122T064512.345Z.pb.gz", "heap-20261122T064512.345Z-before-spike.pb.gz" or
// "goroutineleak-20261122T064512.345Z.pb.gz". kind and label must pass CheckKind and
// CheckLabel (WriteProfile checks them).
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
	if err := CheckLabel(label); err != nil {
		return ProfileRef{}, fmt.Errorf("profile file %q: %w", name, err)
	}
	if ProfileFileName(kind, t, label) != name { // e.g. "12,345" for "12.345", or no "-" before the label
		return ProfileRef{}, fmt.Errorf("profile file %q: not a name memdoctor writes", name)
	}
	return ProfileRef{Kind: kind, Time: t, Label: label, Path: name}, nil
}
