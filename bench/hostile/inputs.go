//go:build linux

package main

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/google/pprof/profile"

	"github.com/memdoctor/memdoctor/collect/pprofio"
	"github.com/memdoctor/memdoctor/session"
)

// gzipZeros returns one gzip member of n MiB of zeros (about n KiB).
func gzipZeros(mib int) []byte {
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	zero := make([]byte, 1<<20)
	for range mib {
		zw.Write(zero)
	}
	zw.Close()
	return b.Bytes()
}

func gzipData(data []byte) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(data)
	zw.Close()
	return b.Bytes()
}

// realistic returns a heap profile shaped like a big Go service's: samples with 32-frame
// stacks over 20000 functions, four values and a "bytes" label, until it encodes to about
// rawBytes (uncompressed).
func realistic(rawBytes int) []byte {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"}, {Type: "inuse_objects", Unit: "count"}, {Type: "inuse_space", Unit: "bytes"}},
		PeriodType: &profile.ValueType{Type: "space", Unit: "bytes"}, Period: 512 << 10,
	}
	const nf = 20000
	for i := range nf {
		f := &profile.Function{ID: uint64(i + 1), Name: "github.com/example/svc/pkg" + strconv.Itoa(i%50) + ".(*T).Method" + strconv.Itoa(i), SystemName: "x", Filename: "/src/svc/pkg" + strconv.Itoa(i%50) + "/file" + strconv.Itoa(i%300) + ".go"}
		p.Function = append(p.Function, f)
		p.Location = append(p.Location, &profile.Location{ID: uint64(i + 1), Address: uint64(0x400000 + i*16), Line: []profile.Line{{Function: f, Line: int64(i % 1000)}}})
	}
	// about 96 bytes per sample once encoded, after 1.2 MiB of functions and locations
	n := max(1, (rawBytes-1200<<10)/96)
	x := uint64(1)
	for i := range n {
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

// dense returns a valid profile of n bytes made of one-frame samples: the most parsed
// memory per byte a plain protobuf profile can ask for without labels (about 25x).
func dense(n int) []byte {
	b := []byte{0x0a, 0x04, 0x08, 0x01, 0x10, 0x02, 0x32, 0x00, 0x32, 0x01, 'x', 0x32, 0x01, 'y', 0x22, 0x02, 0x08, 0x01}
	for len(b) < n {
		b = append(b, 0x12, 0x06, 0x0a, 0x01, 0x01, 0x12, 0x01, 0x01)
	}
	return b
}

// input is a hostile (or huge but valid) profile file.
type input struct {
	name, what string
	data       []byte
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// makeInputs writes the profiles the cases read into dir. validMiB, when positive, sets the
// size of the valid profile instead of the limit.
func makeInputs(dir string, validMiB float64) (map[string]input, error) {
	start := time.Now()
	g1 := gzipZeros(1024)
	forged := bytes.Clone(g1)
	binary.LittleEndian.PutUint32(forged[len(forged)-4:], 100)
	// The largest profile of that shape the limits accept (95% of the memory limit), and one
	// a third larger.
	probe := realistic(8 << 20)
	perByte := float64(pprofio.Estimate(probe)) / float64(len(probe))
	size := int(0.95 * float64(pprofio.Default.Memory) / perByte)
	if validMiB > 0 {
		size = int(validMiB * (1 << 20))
	}
	valid := realistic(size)
	over := realistic(int(1.33 * float64(len(valid))))
	ins := []input{
		{"bomb-20g.pb.gz", "gzip bomb: 20 members of 1 GiB of zeros, 20 GiB in all", bytes.Repeat(g1, 20)},
		{"bomb-1g.pb.gz", "gzip bomb: 1 GiB of zeros", g1},
		{"bomb-forged.pb.gz", "gzip bomb: 1 GiB of zeros, trailer forged to say 100 bytes", forged},
		{"bomb-twice.pb.gz", "the 20 GiB bomb gzipped again", gzipData(bytes.Repeat(g1, 20))},
		{"dense-24m.pb.gz", "valid profile: 24 MiB of one-frame samples (3.1M samples)", gzipData(dense(24 << 20))},
		{"huge-valid.pb.gz", fmt.Sprintf("valid heap profile shaped like a big service's, at the limit: %s raw, %s to parse (estimated)", mib(int64(len(valid))), mib(pprofio.Estimate(valid))), gzipData(valid)},
		{"over-limit.pb.gz", fmt.Sprintf("the same, a third larger: %s raw, %s to parse (estimated)", mib(int64(len(over))), mib(pprofio.Estimate(over))), gzipData(over)},
	}
	real, err := os.ReadFile("collect/pprofio/testdata/real/loki_alloc_objects_merged_big.pb.gz")
	if err != nil {
		return nil, fmt.Errorf("the largest real profile (run from the repository's root): %w", err)
	}
	ins = append(ins, input{"real-loki.pb.gz", "the largest real profile we have: a merged Loki heap profile, 2.6 MiB raw", real})
	out := map[string]input{}
	for _, in := range ins {
		in.what = fmt.Sprintf("%s (%s on disk)", in.what, mib(int64(len(in.data))))
		if err := os.WriteFile(filepath.Join(dir, in.name), in.data, 0o600); err != nil {
			return nil, err
		}
		out[in.name] = in
	}
	fmt.Fprintf(os.Stderr, "inputs made in %v\n", time.Since(start).Round(time.Millisecond))
	return out, nil
}

// makeSession writes a session whose four heap snapshots (as many as the diagnosis keeps
// parsed) are the profile file prof; when memdoctor reads it, snapshot i has its values
// scaled by i+1, so that no snapshot repeats its predecessor (the evidence counts a
// repeated heap profile once, and would parse only one).
func makeSession(dir, prof string) error {
	data, err := os.ReadFile(prof)
	if err != nil {
		return err
	}
	snaps := [][]byte{data, data, data, data}
	if p, err := pprofio.Default.Parse("p", data); err == nil {
		for i := range snaps {
			q := p.Copy()
			q.Scale(float64(i + 1))
			var b bytes.Buffer
			if err := q.Write(&b); err != nil {
				return err
			}
			snaps[i] = b.Bytes()
		}
	}
	t0 := time.Now().UTC().Add(-time.Minute)
	w, err := session.Create(dir, session.Manifest{Mode: "watch", Start: t0})
	if err != nil {
		return err
	}
	for i := range 4 {
		t := t0.Add(time.Duration(i) * 10 * time.Second)
		w.AppendSample(session.Sample{Time: t, Go: &session.GoMem{Source: "runtime/metrics", HeapObjectsBytes: uint64(100+50*i) << 20, TotalBytes: uint64(200+50*i) << 20}})
	}
	for i, snap := range snaps {
		if _, err := w.WriteProfile(session.KindHeap, t0.Add(time.Duration(i)*10*time.Second), "", snap); err != nil {
			return err
		}
	}
	return w.Close(session.StatusComplete, "")
}

// makeTrapSession writes a session of a real profile whose other files are traps: its
// metrics.jsonl is a link to /dev/zero (endless), its gctrace.log and its trace named pipes
// no one writes (opening one for reading waits forever), a second and a third heap snapshot
// a link to /dev/zero and a named pipe.
func makeTrapSession(dir, prof string) error {
	if err := makeSession(dir, prof); err != nil {
		return err
	}
	t0 := time.Now().UTC().Add(-time.Hour)
	traces := filepath.Join(dir, session.TracesDir)
	if err := os.MkdirAll(traces, 0o755); err != nil {
		return err
	}
	profiles := filepath.Join(dir, session.ProfilesDir)
	for _, trap := range []struct {
		path string
		fifo bool
	}{
		{filepath.Join(dir, session.MetricsFile), false},
		{filepath.Join(dir, session.GCTraceFile), true},
		{filepath.Join(traces, "trace-20261124T100000.000Z-heap-jump.trace"), true},
		{filepath.Join(profiles, session.ProfileFileName(session.KindHeap, t0, "")), false},
		{filepath.Join(profiles, session.ProfileFileName(session.KindHeap, t0.Add(time.Second), "")), true},
	} {
		os.Remove(trap.path)
		var err error
		if trap.fifo {
			err = syscall.Mkfifo(trap.path, 0o600)
		} else {
			err = os.Symlink("/dev/zero", trap.path)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
