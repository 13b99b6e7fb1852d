package procfs

import (
	"bytes"
	"fmt"
)

// mountLine is one line of /proc/PID/mountinfo. The slices point into the
// line; Root and Point are still octal-escaped (see unescapeOctal).
type mountLine struct {
	Root, Point, FSType, Source, SuperOpts []byte
}

// parseMountinfoLine parses a mountinfo line:
//
//	36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
//
// (mount ID, parent ID, major:minor, root, mount point, mount options, zero or
// more optional fields, "-", filesystem type, source, super options).
func parseMountinfoLine(line []byte) (mountLine, error) {
	var m mountLine
	rest := line
	var f [5][]byte
	for i := range f {
		if f[i], rest = nextField(rest); len(f[i]) == 0 {
			return mountLine{}, fmt.Errorf("bad mountinfo line %q: too few fields", line)
		}
	}
	m.Root, m.Point = f[3], f[4]
	for {
		var opt []byte
		if opt, rest = nextField(rest); len(opt) == 0 {
			return mountLine{}, fmt.Errorf("bad mountinfo line %q: no \" - \" separator", line)
		}
		if string(opt) == "-" {
			break
		}
	}
	m.FSType, rest = nextField(rest)
	m.Source, rest = nextField(rest)
	m.SuperOpts, _ = nextField(rest)
	if len(m.FSType) == 0 {
		return mountLine{}, fmt.Errorf("bad mountinfo line %q: no filesystem type", line)
	}
	return m, nil
}

// unescapeOctal undoes mountinfo's \ooo escapes (space, tab, newline and
// backslash in paths).
func unescapeOctal(b []byte) string {
	if bytes.IndexByte(b, '\\') < 0 {
		return string(b)
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] == '\\' && i+3 < len(b) && b[i+1] >= '0' && b[i+1] <= '3' && isOctal(b[i+2]) && isOctal(b[i+3]) {
			v := (b[i+1]-'0')<<6 | (b[i+2]-'0')<<3 | (b[i+3] - '0')
			out = append(out, v)
			i += 3
			continue
		}
		out = append(out, b[i])
	}
	return string(out)
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }
