package leaktest

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"runtime/pprof"
)

// funcStarts returns, for every function on the stack of a goroutine now, the file and line
// where it is defined, as the goroutine profile's protocol buffer records it (its functions'
// start_line, which the runtime keeps for inlined functions too, where runtime.FuncForPC
// names the function they were inlined in). A closure's name ("pkg.(*T).Start.func1") is
// found by grep only with the line of its definition. It returns nil when the profile cannot
// be read.
func funcStarts() map[string]frame {
	defer unprofiled()()
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 0); err != nil {
		return nil
	}
	zr, err := gzip.NewReader(&buf)
	if err != nil {
		return nil
	}
	raw, err := io.ReadAll(io.LimitReader(zr, maxProfileBytes+1))
	if err != nil || len(raw) > maxProfileBytes {
		return nil
	}
	starts, err := parseFuncStarts(raw)
	if err != nil {
		return nil
	}
	return starts
}

// maxProfileBytes bounds the goroutine profile funcStarts reads, unpacked: the goroutines are
// aggregated by stack, so even a process of a million goroutines has a few megabytes.
const maxProfileBytes = 64 << 20

// The fields of profile.proto (github.com/google/pprof/proto/profile.proto) funcStarts reads:
// Profile's function (5) and string_table (6); Function's name (2), filename (4) and
// start_line (5), the strings being indices in the table.
const (
	fieldFunction, fieldStrings                      = 5, 6
	fieldFuncName, fieldFuncFile, fieldFuncStartLine = 2, 4, 5
)

var errProto = errors.New("malformed profile")

// parseFuncStarts reads an unpacked profile's functions: name -> file and start line.
func parseFuncStarts(b []byte) (map[string]frame, error) {
	type fn struct{ name, file, line uint64 }
	var fns []fn
	var strs []string
	err := protoFields(b, func(field uint64, v uint64, data []byte) error {
		switch field {
		case fieldStrings:
			strs = append(strs, string(data))
		case fieldFunction:
			var f fn
			err := protoFields(data, func(field uint64, v uint64, _ []byte) error {
				switch field {
				case fieldFuncName:
					f.name = v
				case fieldFuncFile:
					f.file = v
				case fieldFuncStartLine:
					f.line = v
				}
				return nil
			})
			if err != nil {
				return err
			}
			fns = append(fns, f)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make(map[string]frame, len(fns))
	for _, f := range fns {
		if f.name >= uint64(len(strs)) || f.file >= uint64(len(strs)) || f.line == 0 || f.line > 1<<31 {
			continue
		}
		out[strs[f.name]] = frame{fn: strs[f.name], file: strs[f.file], line: int(f.line)}
	}
	return out, nil
}

// protoFields calls each for every field of a protocol buffer message: its number, and its
// value (a varint) or its bytes (a length-delimited field); it skips fixed-width fields.
func protoFields(b []byte, each func(field, v uint64, data []byte) error) error {
	for len(b) > 0 {
		key, n := protoVarint(b)
		if n == 0 {
			return errProto
		}
		b = b[n:]
		field := key >> 3
		var v uint64
		var data []byte
		switch key & 7 {
		case 0:
			if v, n = protoVarint(b); n == 0 {
				return errProto
			}
			b = b[n:]
		case 1, 5:
			w := 8
			if key&7 == 5 {
				w = 4
			}
			if len(b) < w {
				return errProto
			}
			b = b[w:]
			continue
		case 2:
			l, n := protoVarint(b)
			if n == 0 || l > uint64(len(b)-n) {
				return errProto
			}
			data, b = b[n:n+int(l)], b[n+int(l):]
		default:
			return errProto
		}
		if err := each(field, v, data); err != nil {
			return err
		}
	}
	return nil
}

// protoVarint reads a varint, returning its length (0 when it is malformed or cut).
func protoVarint(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < len(b) && i < 10; i++ {
		v |= uint64(b[i]&0x7f) << (7 * i)
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	return 0, 0
}
