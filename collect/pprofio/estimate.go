package pprofio

import (
	"bytes"
	"errors"
	"math/bits"
	"unsafe"

	"github.com/google/pprof/profile"
)

// What profile.ParseData allocates, in bytes, by what the encoded profile holds: every
// allocation made while parsing, the garbage of growing slices included, not only what stays
// live. EstimateProto adds a quarter to their sum for what they miss (map tables rounded up
// to a power of two, size classes); TestEstimateBoundsAllocation checks the result on the
// densest profile of each kind of message and on real ones.
var (
	// A message of the repeated fields of a Profile: the struct, its pointer in a growing
	// slice (append's garbage counted: 5 times the pointer), and for those postDecode
	// indexes by ID, a slot in its ID slice and map.
	costSample   = allocSize(unsafe.Sizeof(profile.Sample{})) + 5*8
	costLocation = allocSize(unsafe.Sizeof(profile.Location{})) + 5*8 + 8 + 40
	costFunction = allocSize(unsafe.Sizeof(profile.Function{})) + 5*8 + 8 + 40
	costMapping  = allocSize(unsafe.Sizeof(profile.Mapping{})) + 5*8 + 8 + 40
	costValue    = allocSize(unsafe.Sizeof(profile.ValueType{})) + 5*8
	// An element of a sample's location IDs: the ID (packed: counted ahead and allocated
	// once; unpacked: appended one by one) and its *Location in the shared location buffer.
	costLocIDPacked   = int64(8 + 8)
	costLocIDUnpacked = int64(5*8 + 8)
	// An element of a sample's values, or of the comments.
	costIntPacked   = int64(8)
	costIntUnpacked = int64(5 * 8)
	// A Line of a location (copied once to its exact size), and its share of the shared
	// decoding buffer.
	costLine = allocSize(unsafe.Sizeof(profile.Line{})) + 8
	// A sample with labels gets three maps (string labels, numeric labels, their units),
	// and each map a first group of 8 slots when a key goes in.
	costLabelMaps  = int64(3 * 48)
	costLabelGroup = int64(340)
	// A label: its decoded form in a growing slice and its value appended to a small slice;
	// past 8 labels, its slots in the three maps.
	costLabel     = int64(2*32 + 32)
	costLabelSlot = int64(3 * 96)
	// A string of the string table: its header in a growing slice and the copy of its bytes
	// (plus the rounding of the copy's allocation, see allocSize).
	costString = int64(5 * 16)
	// The Profile itself and postDecode's fixed allocations.
	costProfile = int64(4 << 10)
)

// allocSize is the size a small allocation of n bytes takes: Go rounds it up to a size class,
// at most 12.5% above it for sizes past 128 bytes, to a multiple of 16 below.
func allocSize(n uintptr) int64 {
	s := int64(n+15) &^ 15
	if s > 128 {
		s += s / 8
	}
	return s
}

// errNotProto says the bytes are not a well-formed protobuf encoding, so profile.ParseData
// would not decode them as a proto profile.
var errNotProto = errors.New("not a protobuf encoding")

// wire types of the protobuf encoding.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

// field is one field of a protobuf message.
type field struct {
	num    uint64
	typ    int
	data   []byte // the payload of a wireBytes field
	varint uint64 // the value of a wireVarint field
}

// nextField decodes the field at the start of b and returns the rest.
func nextField(b []byte) (field, []byte, error) {
	key, b, err := varint(b)
	if err != nil {
		return field{}, nil, err
	}
	f := field{num: key >> 3, typ: int(key & 7)}
	switch f.typ {
	case wireVarint:
		f.varint, b, err = varint(b)
	case wireFixed64:
		if len(b) < 8 {
			return field{}, nil, errNotProto
		}
		b = b[8:]
	case wireFixed32:
		if len(b) < 4 {
			return field{}, nil, errNotProto
		}
		b = b[4:]
	case wireBytes:
		var n uint64
		n, b, err = varint(b)
		if err == nil && n > uint64(len(b)) {
			err = errNotProto
		}
		if err == nil {
			f.data, b = b[:n], b[n:]
		}
	default:
		err = errNotProto
	}
	return f, b, err
}

// varint decodes a base-128 varint, as pprof's decoder does (at most 10 bytes).
func varint(b []byte) (uint64, []byte, error) {
	var u uint64
	for i := 0; i < 10 && i < len(b); i++ {
		u |= uint64(b[i]&0x7f) << (7 * i)
		if b[i] < 0x80 {
			return u, b[i+1:], nil
		}
	}
	return 0, nil, errNotProto
}

// countVarints is how many varints a packed field holds: one per byte without the
// continuation bit.
func countVarints(b []byte) int64 {
	var n int
	for len(b) >= 8 {
		w := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
		n += 8 - bits.OnesCount64(w&0x8080808080808080)
		b = b[8:]
	}
	for _, c := range b {
		if c < 0x80 {
			n++
		}
	}
	return int64(n)
}

// repeated is the cost of a repeated integer field element by element: a packed payload
// holds countVarints elements, anything else one.
func repeated(f field, packed, unpacked int64) int64 {
	if f.typ == wireBytes {
		return countVarints(f.data) * packed
	}
	return unpacked
}

// EstimateProto returns how many bytes profile.ParseData allocates to decode data, an
// uncompressed protobuf profile, without decoding it: one pass over the encoding that
// counts what each message will become. It fails on bytes that are not a protobuf
// encoding (profile.ParseData would then try the legacy formats), and then returns the
// estimate for the part before the error, which the decoder allocates before it fails.
func EstimateProto(data []byte) (int64, error) {
	n, err := sumProto(data)
	return n + n/4, err
}

// sumProto sums the costs of what data holds.
func sumProto(data []byte) (int64, error) {
	total := costProfile
	for len(data) > 0 {
		f, rest, err := nextField(data)
		if err != nil {
			return total, err
		}
		data = rest
		var c int64
		switch f.num {
		case 1, 11: // sample_type, period_type
			c = costValue
		case 2:
			c, err = estimateSample(f)
		case 3:
			c = costMapping
		case 4:
			c, err = estimateLocation(f)
		case 5:
			c = costFunction
		case 6:
			c = costString + allocSize(uintptr(len(f.data)))
		case 13: // comments: their IDs, then the strings' headers
			c = repeated(f, costIntPacked+5*16, costIntUnpacked+5*16)
		}
		total += c
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// estimateSample is the cost of a Sample message: its location IDs, values and labels.
func estimateSample(f field) (int64, error) {
	c := costSample
	if f.typ != wireBytes {
		return c, nil // the decoder refuses it
	}
	var labels int64
	var str, num, unit bool // the kinds of labels, and so the maps that get a group
	for b := f.data; len(b) > 0; {
		sf, rest, err := nextField(b)
		if err != nil {
			return c, err
		}
		b = rest
		switch sf.num {
		case 1:
			c += repeated(sf, costLocIDPacked, costLocIDUnpacked)
		case 2:
			c += repeated(sf, costIntPacked, costIntUnpacked)
		case 3:
			labels++
			s, n, u := labelKinds(sf)
			str, num, unit = str || s, num || n, unit || u
		}
	}
	if labels > 0 {
		c += costLabelMaps + labels*costLabel
		for _, has := range []bool{str, num, unit} {
			if has {
				c += costLabelGroup
			}
		}
		if labels > 8 {
			c += labels * costLabelSlot
		}
	}
	return c, nil
}

// labelKinds reports whether a Label message has a string value, a numeric value (or a
// unit), a unit. Malformed ones count as all three.
func labelKinds(f field) (str, num, unit bool) {
	if f.typ != wireBytes {
		return true, true, true
	}
	for b := f.data; len(b) > 0; {
		lf, rest, err := nextField(b)
		if err != nil {
			return true, true, true
		}
		b = rest
		switch lf.num {
		case 2:
			str = true
		case 3:
			num = true
		case 4:
			num, unit = true, true
		}
	}
	return str, num, unit
}

// estimateLocation is the cost of a Location message and its lines.
func estimateLocation(f field) (int64, error) {
	c := costLocation
	if f.typ != wireBytes {
		return c, nil
	}
	for b := f.data; len(b) > 0; {
		lf, rest, err := nextField(b)
		if err != nil {
			return c, err
		}
		b = rest
		if lf.num == 4 {
			c += costLine
		}
	}
	return c, nil
}

// What the legacy formats' parsers allocate per byte of input, at most: measured on the
// densest input each accepts (one-frame samples, see TestEstimateBoundsAllocation), plus a
// margin.
const (
	legacyTextRatio = 72  // text: heap, goroutine counts, contention (at most 61)
	legacyJavaRatio = 120 // Java heap and contention text (at most 94)
	legacyCPURatio  = 24  // the binary CPU format (at most 19)
	// What the legacy parsers allocate whatever the input, when ParseData tries them (the
	// protobuf decoding failed) and they give up: each of four parsers' line scanner, whose
	// buffer grows up to 64 KiB for a long line.
	legacyProbe = 512 << 10
)

// Estimate returns about how many bytes profile.ParseData allocates to parse data, a
// profile's decoded (not gzipped) bytes: EstimateProto's figure, and when the bytes may be
// one of the legacy formats (ParseData tries them when the protobuf decoding fails), the
// legacy parsers' if that is more; plus what the legacy parsers cost to give up.
func Estimate(data []byte) int64 {
	est, _ := EstimateProto(data)
	if r := legacyRatio(data); r > 0 {
		est = max(est, costProfile+r*int64(len(data)))
	}
	return est + legacyProbe
}

// legacyRatio is what a legacy parser may allocate per byte of data, 0 when data is not one
// of the legacy formats: the binary CPU format (whose header starts with a zero word) or text
// whose first line that is not blank or a comment holds a legacy header ("heap profile:
// ...", "goroutine profile: total N", "--- ...").
func legacyRatio(data []byte) int64 {
	if len(data) >= 4 && data[0] == 0 && data[1] == 0 && data[2] == 0 && data[3] == 0 {
		return legacyCPURatio
	}
	for rest := data; len(rest) > 0; {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		t := bytes.TrimSpace(line)
		if len(t) == 0 || t[0] == '#' {
			continue
		}
		switch {
		case bytes.HasPrefix(t, []byte("--- heapz")) || bytes.HasPrefix(t, []byte("--- contentionz")):
			return legacyJavaRatio
		case bytes.Contains(t, []byte("profile:")) || bytes.HasPrefix(t, []byte("---")):
			return legacyTextRatio
		}
		return 0
	}
	return 0
}
