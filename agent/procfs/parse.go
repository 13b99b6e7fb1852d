package procfs

import "bytes"

// Small allocation-free helpers shared by the text parsers.

// cutLine returns the first line of data (without '\n') and the rest.
func cutLine(data []byte) (line, rest []byte) {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return data[:i], data[i+1:]
	}
	return data, nil
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func trimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// nextField returns the first run of non-space bytes in b and what follows it.
// field is empty when b holds only spaces.
func nextField(b []byte) (field, rest []byte) {
	i := 0
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	j := i
	for j < len(b) && !isSpace(b[j]) {
		j++
	}
	return b[i:j], b[j:]
}

// parseUint parses a non-empty decimal number that fits in a uint64.
func parseUint(b []byte) (uint64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if n > (1<<64-1-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// parseInt parses a decimal number, optionally negative, that fits in an int.
func parseInt(b []byte) (int, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	n, ok := parseUint(b)
	if !ok || n > uint64(maxInt) {
		return 0, false
	}
	if neg {
		return -int(n), true
	}
	return int(n), true
}

const maxInt = int(^uint(0) >> 1)

// parseHex parses a non-empty hexadecimal number of at most 16 digits.
func parseHex(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 16 {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		n = n<<4 | uint64(d)
	}
	return n, true
}

// parseKB parses the value of a "Key:   1234 kB" line (the part after the
// colon) into bytes. A value without the kB unit is taken as a plain number.
func parseKB(v []byte) (uint64, bool) {
	num, rest := nextField(v)
	n, ok := parseUint(num)
	if !ok {
		return 0, false
	}
	unit := trimSpace(rest)
	switch string(unit) {
	case "kB":
		if n > (1<<64-1)/1024 {
			return 0, false
		}
		return n * 1024, true
	case "":
		return n, true
	}
	return 0, false
}

// cutKey splits a "Key: value" line at its first colon.
func cutKey(line []byte) (key, val []byte, ok bool) {
	i := bytes.IndexByte(line, ':')
	if i < 0 {
		return nil, nil, false
	}
	return line[:i], line[i+1:], true
}
