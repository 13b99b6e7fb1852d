package procfs

import "fmt"

// parseSmapsRollup parses the text of /proc/PID/smaps_rollup. The first line
// (the "[rollup]" pseudo-mapping) and unknown keys are skipped. An empty file
// (a kernel thread, or a zombie) gives a zero Rollup.
func parseSmapsRollup(data []byte) (Rollup, error) {
	var r Rollup
	for len(data) > 0 {
		var line []byte
		line, data = cutLine(data)
		key, val, ok := cutKey(line)
		if !ok {
			continue
		}
		var dst *uint64
		switch string(key) {
		case "Rss":
			dst = &r.Rss
		case "Pss":
			dst = &r.Pss
		case "Anonymous":
			dst = &r.Anonymous
		case "LazyFree":
			dst = &r.LazyFree
		case "AnonHugePages":
			dst = &r.AnonHugePages
		case "Swap":
			dst = &r.Swap
		default:
			continue
		}
		if *dst, ok = parseKB(val); !ok {
			return Rollup{}, fmt.Errorf("bad %s line %q", key, line)
		}
	}
	return r, nil
}
