package procfs

import "fmt"

// noLimit is the threshold at or above which a v1 limit means "unlimited":
// the kernel reports an unset limit as PAGE_COUNTER_MAX pages in bytes,
// 9223372036854771712 on 4 KiB pages (other values with other page sizes).
const noLimit = 1 << 62

// parseLimit parses a memory limit file (v2 memory.max or memory.high, v1
// memory.limit_in_bytes): "max", "-1" and huge values mean no limit (0).
func parseLimit(data []byte) (uint64, error) {
	v := trimSpace(data)
	switch string(v) {
	case "max", "-1":
		return 0, nil
	}
	n, ok := parseUint(v)
	if !ok {
		return 0, fmt.Errorf("bad limit %q", v)
	}
	if n >= noLimit {
		return 0, nil
	}
	return n, nil
}

// parseValue parses a file holding one decimal number.
func parseValue(data []byte) (uint64, error) {
	v := trimSpace(data)
	n, ok := parseUint(v)
	if !ok {
		return 0, fmt.Errorf("bad value %q", v)
	}
	return n, nil
}

// lookupKV returns the value of key in a "key value" per line file
// (memory.stat, memory.events, memory.oom_control).
func lookupKV(data []byte, key string) (uint64, bool) {
	for len(data) > 0 {
		var line []byte
		line, data = cutLine(data)
		k, rest := nextField(line)
		if string(k) != key {
			continue
		}
		v, _ := nextField(rest)
		return parseUint(v)
	}
	return 0, false
}

// memStat holds the memory.stat fields Cgroup reports.
type memStat struct {
	anon, file, inactiveFile, kernel, sock uint64
	hierLimit                              uint64 // v1 hierarchical_memory_limit, 0 = none
	hasHierLimit                           bool
}

// parseMemoryStat parses memory.stat of a v1 (version 1) or v2 cgroup; see
// Cgroup for which keys feed which field. Lines it does not use are skipped.
func parseMemoryStat(data []byte, version int) (memStat, error) {
	var ms memStat
	var local, total [3]uint64 // v1: rss, cache, inactive_file
	var haveTotal, haveKernel bool
	var kernelParts uint64 // v2 before Linux 5.18
	for len(data) > 0 {
		var line []byte
		line, data = cutLine(data)
		k, rest := nextField(line)
		if len(k) == 0 {
			continue
		}
		vb, _ := nextField(rest)
		v, ok := parseUint(vb)
		if !ok {
			continue // not a counter we use (or a new format): skip
		}
		if version == 1 {
			switch string(k) {
			case "rss":
				local[0] = v
			case "cache":
				local[1] = v
			case "inactive_file":
				local[2] = v
			case "total_rss":
				total[0], haveTotal = v, true
			case "total_cache":
				total[1] = v
			case "total_inactive_file":
				total[2] = v
			case "hierarchical_memory_limit":
				ms.hasHierLimit = true
				if v < noLimit {
					ms.hierLimit = v
				}
			}
			continue
		}
		switch string(k) {
		case "anon":
			ms.anon = v
		case "file":
			ms.file = v
		case "inactive_file":
			ms.inactiveFile = v
		case "sock":
			ms.sock = v
		case "kernel":
			ms.kernel, haveKernel = v, true
		case "kernel_stack", "pagetables", "sec_pagetables", "percpu", "slab":
			kernelParts += v
		}
	}
	switch version {
	case 1:
		src := local
		if haveTotal {
			src = total
		}
		ms.anon, ms.file, ms.inactiveFile = src[0], src[1], src[2]
	case 2:
		if !haveKernel {
			ms.kernel = kernelParts
		}
	default:
		return memStat{}, fmt.Errorf("bad cgroup version %d", version)
	}
	return ms, nil
}
