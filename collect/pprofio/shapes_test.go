package pprofio

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/google/pprof/profile"
)

// A minimal protobuf encoder for hand-made profiles.

func pbVarint(b []byte, u uint64) []byte { return binary.AppendUvarint(b, u) }

func pbKey(b []byte, num, typ int) []byte { return pbVarint(b, uint64(num<<3|typ)) }

func pbInt(b []byte, num int, v uint64) []byte { return pbVarint(pbKey(b, num, wireVarint), v) }

func pbBytes(b []byte, num int, payload []byte) []byte {
	b = pbVarint(pbKey(b, num, wireBytes), uint64(len(payload)))
	return append(b, payload...)
}

func pbPacked(b []byte, num int, vs ...uint64) []byte {
	var p []byte
	for _, v := range vs {
		p = pbVarint(p, v)
	}
	return pbBytes(b, num, p)
}

// header is a profile's start: one sample type (strings 1 and 2), the string table
// ("", "x", "y", "z"), one function (ID 1) and one location (ID 1) on it.
func header(types int) []byte {
	var b []byte
	for range types {
		b = pbBytes(b, 1, pbInt(pbInt(nil, 1, 1), 2, 2))
	}
	for _, s := range []string{"", "x", "y", "z"} {
		b = pbBytes(b, 6, []byte(s))
	}
	b = pbBytes(b, 5, pbInt(pbInt(nil, 1, 1), 2, 1))
	b = pbBytes(b, 4, pbBytes(pbInt(nil, 1, 1), 4, pbInt(nil, 1, 1)))
	return b
}

// shape is a named profile encoding.
type shape struct {
	name string
	data []byte
}

// protoShapes are profiles of about n bytes, each made of one kind of message as densely
// as the encoding allows: the worst cases for the parser's memory per byte.
func protoShapes(n int) []shape {
	repeat := func(b, unit []byte) []byte {
		for len(b) < n {
			b = append(b, unit...)
		}
		return b
	}
	sample := func(fields []byte) []byte { return pbBytes(nil, 2, fields) }
	label := func(fields []byte) []byte { return pbBytes(nil, 3, fields) }
	strLabel := label(pbInt(pbInt(nil, 1, 1), 2, 2))
	numLabel := label(pbInt(pbInt(nil, 1, 1), 3, 7))
	unitLabel := label(pbInt(pbInt(pbInt(nil, 1, 1), 3, 7), 4, 3))
	labels := func(k int, l []byte) []byte {
		var b []byte
		for i := range k {
			// distinct keys: strings 1 to 3 in turn, so the maps hold up to three keys
			lab := append([]byte(nil), l...)
			lab[3] = byte(1 + i%3)
			b = append(b, lab...)
		}
		return b
	}
	one := pbPacked(nil, 2, 1) // the value every sample needs
	var deep []uint64
	for range 64 {
		deep = append(deep, 1)
	}
	var out []shape
	add := func(name string, b []byte) { out = append(out, shape{name, b}) }
	add("samples without frames", repeat(header(1), sample(one)))
	add("one-frame samples, packed", repeat(header(1), sample(pbPacked(pbPacked(nil, 1, 1), 2, 1))))
	add("one-frame samples, unpacked", repeat(header(1), sample(pbInt(pbInt(nil, 1, 1), 2, 1))))
	add("64-frame samples, packed", repeat(header(1), sample(pbPacked(pbPacked(nil, 1, deep...), 2, 1))))
	add("64-frame samples, unpacked", repeat(header(1), sample(append(bytes.Repeat(pbInt(nil, 1, 1), 64), one...))))
	add("samples with 8 unpacked values", repeat(header(8), sample(bytes.Repeat(pbInt(nil, 2, 1), 8))))
	add("samples with a string label", repeat(header(1), sample(append(strLabel, one...))))
	add("samples with a numeric label", repeat(header(1), sample(append(numLabel, one...))))
	add("samples with a label and a unit", repeat(header(1), sample(append(unitLabel, one...))))
	add("samples with 3 labels", repeat(header(1), sample(append(labels(3, numLabel), one...))))
	for _, k := range []int{5, 8, 9, 16, 17, 33, 64} {
		add(fmt.Sprintf("samples with %d string labels", k), repeat(header(1), sample(append(labels(k, strLabel), one...))))
		add(fmt.Sprintf("samples with %d numeric labels", k), repeat(header(1), sample(append(labels(k, numLabel), one...))))
	}
	add("samples with 200 labels", repeat(header(1), sample(append(labels(200, unitLabel), one...))))
	add("locations", repeatIDs(header(1), n, func(b []byte, id uint64) []byte { return pbBytes(b, 4, pbInt(nil, 1, id)) }))
	add("locations with 8 lines", repeatIDs(header(1), n, func(b []byte, id uint64) []byte {
		return pbBytes(b, 4, append(pbInt(nil, 1, id), bytes.Repeat(pbBytes(nil, 4, pbInt(nil, 1, 1)), 8)...))
	}))
	add("functions", repeatIDs(header(1), n, func(b []byte, id uint64) []byte { return pbBytes(b, 5, pbInt(pbInt(nil, 1, id), 2, 1)) }))
	add("mappings", repeatIDs(header(1), n, func(b []byte, id uint64) []byte { return pbBytes(b, 3, pbInt(nil, 1, id)) }))
	add("empty strings", repeat(header(1), pbBytes(nil, 6, nil)))
	add("17-byte strings", repeat(header(1), pbBytes(nil, 6, []byte(strings.Repeat("s", 17)))))
	add("4 KiB strings", repeat(header(1), pbBytes(nil, 6, bytes.Repeat([]byte("s"), 4<<10))))
	add("comments, unpacked", repeat(header(1), pbInt(nil, 13, 1)))
	add("sample types", repeat(header(1), pbBytes(nil, 1, nil)))
	add("period types", repeat(header(1), pbBytes(nil, 11, nil)))
	add("unknown fields", repeat(header(1), pbInt(nil, 99, 1)))
	add("a Go heap profile", goHeapShape(max(n, 4<<20)))
	return out
}

// goHeapShape is a heap profile as the Go runtime writes one for a big service, about n
// bytes: samples with 32-frame stacks over 2000 functions, the four heap values and the
// "bytes" numeric label, encoded by the pprof library itself.
func goHeapShape(n int) []byte {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"}, {Type: "inuse_objects", Unit: "count"}, {Type: "inuse_space", Unit: "bytes"}},
		PeriodType: &profile.ValueType{Type: "space", Unit: "bytes"}, Period: 512 << 10,
	}
	const nf = 2000
	for i := range nf {
		f := &profile.Function{ID: uint64(i + 1), Name: fmt.Sprintf("github.com/example/svc/pkg%d.(*T).Method%d", i%50, i), SystemName: "x", Filename: fmt.Sprintf("/src/svc/pkg%d/file%d.go", i%50, i%300)}
		p.Function = append(p.Function, f)
		p.Location = append(p.Location, &profile.Location{ID: uint64(i + 1), Address: uint64(0x400000 + i*16), Line: []profile.Line{{Function: f, Line: int64(i % 1000)}}})
	}
	x := uint64(1)
	for i := 0; i < max(1, (n-200<<10)/96); i++ {
		s := &profile.Sample{Value: []int64{int64(i), int64(i * 100), 3, 400}, NumLabel: map[string][]int64{"bytes": {512}}}
		for range 32 {
			x = x*6364136223846793005 + 1442695040888963407
			s.Location = append(s.Location, p.Location[(x>>33)%nf])
		}
		p.Sample = append(p.Sample, s)
	}
	var b bytes.Buffer
	p.WriteUncompressed(&b)
	return b.Bytes()
}

// repeatIDs appends messages with IDs 2, 3, ... until b reaches n bytes.
func repeatIDs(b []byte, n int, msg func([]byte, uint64) []byte) []byte {
	for id := uint64(2); len(b) < n; id++ {
		b = msg(b, id)
	}
	return b
}

// legacyShapes are the densest inputs each legacy parser accepts, about n bytes each.
func legacyShapes(n int) []shape {
	text := func(head, line string, tail ...string) []byte {
		var b bytes.Buffer
		b.WriteString(head)
		for i := 0; b.Len() < n; i++ {
			fmt.Fprintf(&b, line, i)
		}
		for _, t := range tail {
			b.WriteString(t)
		}
		return b.Bytes()
	}
	cpu := func(newPC bool) []byte {
		b := binary.LittleEndian.AppendUint64(nil, 0)
		for _, w := range []uint64{3, 0, 10000, 0} {
			b = binary.LittleEndian.AppendUint64(b, w)
		}
		for i := 0; len(b) < n; i++ {
			pc := uint64(0x1000)
			if newPC {
				pc += uint64(i)
			}
			for _, w := range []uint64{1, 1, pc} {
				b = binary.LittleEndian.AppendUint64(b, w)
			}
		}
		for _, w := range []uint64{0, 1, 0} { // the trailer
			b = binary.LittleEndian.AppendUint64(b, w)
		}
		return b
	}
	return []shape{
		{"legacy heap, one frame, same address", text("heap profile: 1: 1 [1: 1] @ heap/1048576\n", "1: 1 [1: 1] @ 0x1 %.0d\n")},
		{"legacy heap, one frame, new addresses", text("heap profile: 1: 1 [1: 1] @ heap/1048576\n", "1: 1 [1: 1] @ 0x%x\n")},
		{"legacy goroutine counts, same address", text("goroutine profile: total 1\n", "1 @ 0x1%.0d\n")},
		{"legacy goroutine counts, new addresses", text("goroutine profile: total 1\n", "1 @ 0x%x\n")},
		{"legacy contention", text("--- contention:\ncycles/second=1\n", "1 1 @ 0x%x\n")},
		{"legacy threads", text("--- threadz 1 ---\n", "--- Thread 1 (name: a/1) stack: ---\n  0x%x\n", "--- Memory map: ---\n")},
		{"legacy Java heap, new addresses", text("--- heapz 1 ---\nformat = java\nresolution = bytes\n", "1 1 @ 0x%x\n")},
		{"legacy Java heap, same address", text("--- heapz 1 ---\nformat = java\nresolution = bytes\n", "1 1 @ 0x1%.0d\n")},
		{"legacy Java contention", text("--- contentionz 1 ---\nformat = java\nresolution = microseconds\nsampling period = 100\nms since reset = 1\n", "1 1 @ 0x%x\n")},
		{"legacy binary CPU, same address", cpu(false)},
		{"legacy binary CPU, new addresses", cpu(true)},
	}
}
