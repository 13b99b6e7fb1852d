package procfs

import (
	"bytes"
	"errors"
	"fmt"
)

// parseStatus parses the text of /proc/PID/status. Name and Pid are required;
// the other fields are zero when absent (kernel threads have no Vm* lines).
func parseStatus(data []byte) (Status, error) {
	var st Status
	var haveName, havePID bool
	for len(data) > 0 {
		var line []byte
		line, data = cutLine(data)
		key, val, ok := cutKey(line)
		if !ok {
			continue
		}
		var dst *uint64
		switch string(key) {
		case "Name":
			// The kernel prints comm with only '\n' and '\\' escaped, after one tab.
			val = bytes.TrimPrefix(val, []byte{'\t'})
			st.Name = unescapeComm(val)
			haveName = true
			continue
		case "Pid":
			st.PID, ok = parseInt(trimSpace(val))
			havePID = true
		case "PPid":
			st.PPID, ok = parseInt(trimSpace(val))
		case "Threads":
			st.Threads, ok = parseInt(trimSpace(val))
		case "VmRSS":
			dst = &st.VmRSS
		case "RssAnon":
			dst = &st.RssAnon
		case "RssFile":
			dst = &st.RssFile
		case "RssShmem":
			dst = &st.RssShmem
		case "VmHWM":
			dst = &st.VmHWM
		case "VmSize":
			dst = &st.VmSize
		default:
			continue
		}
		if dst != nil {
			*dst, ok = parseKB(val)
		}
		if !ok {
			return Status{}, fmt.Errorf("bad %s line %q", key, line)
		}
	}
	if !haveName || !havePID {
		return Status{}, errors.New("no Name or Pid line (not a /proc/PID/status file?)")
	}
	return st, nil
}

// unescapeComm undoes the kernel's escaping of '\n' and '\\' in a task name.
func unescapeComm(b []byte) string {
	if bytes.IndexByte(b, '\\') < 0 {
		return string(b)
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] == '\\' && i+1 < len(b) {
			switch b[i+1] {
			case 'n':
				out = append(out, '\n')
				i++
				continue
			case '\\':
				out = append(out, '\\')
				i++
				continue
			}
		}
		out = append(out, b[i])
	}
	return string(out)
}
