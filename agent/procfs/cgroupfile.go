package procfs

import (
	"bytes"
	"fmt"
)

// procCgroup is what /proc/PID/cgroup says about memory: the path in the v1
// hierarchy that has the memory controller, and the path in the v2 unified
// hierarchy ("0::/path"). A hybrid host has both.
type procCgroup struct {
	v1Path, v2Path string
	hasV1, hasV2   bool
}

// parseProcCgroup parses /proc/PID/cgroup: lines "ID:controllers:path", where
// controllers is a comma-separated list for v1 (e.g. "memory" or
// "cpu,memory") and empty with ID 0 for v2. A path of a removed cgroup ends
// in " (deleted)", which is dropped.
func parseProcCgroup(data []byte) (procCgroup, error) {
	var pc procCgroup
	for len(data) > 0 {
		var line []byte
		line, data = cutLine(data)
		if len(trimSpace(line)) == 0 {
			continue
		}
		id, rest, ok1 := bytes.Cut(line, []byte{':'})
		ctrls, path, ok2 := bytes.Cut(rest, []byte{':'})
		if !ok1 || !ok2 || len(path) == 0 || path[0] != '/' {
			return procCgroup{}, fmt.Errorf("bad line %q (want ID:controllers:/path)", line)
		}
		path = bytes.TrimSuffix(path, []byte(" (deleted)"))
		switch {
		case string(id) == "0" && len(ctrls) == 0:
			if !pc.hasV2 {
				pc.v2Path, pc.hasV2 = string(path), true
			}
		case hasListItem(ctrls, "memory"):
			if !pc.hasV1 {
				pc.v1Path, pc.hasV1 = string(path), true
			}
		}
	}
	return pc, nil
}

// hasListItem reports whether the comma-separated list contains item.
func hasListItem(list []byte, item string) bool {
	for len(list) > 0 {
		var f []byte
		f, list, _ = bytes.Cut(list, []byte{','})
		if string(f) == item {
			return true
		}
	}
	return false
}
