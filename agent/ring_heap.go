//go:build !unix

package agent

// allocSlots allocates n slots on the Go heap (no anonymous mappings here).
func allocSlots(n int) (slots []stored, release func()) { return make([]stored, n), nil }
