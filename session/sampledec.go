package session

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"
)

// sampleDecoder decodes metrics.jsonl lines without reflection: a long session holds hundreds
// of thousands of them, and encoding/json spent most of a 24-hour session's analysis there.
// It reads what Writer.AppendSample writes (encoding/json's output for Sample), skips keys it
// does not know (a newer writer's) and counts them (unknownKeys), and rejects anything that
// is not one JSON object per line.
// The parts of the Sample it returns live in the decoder and are overwritten by the next line.
type sampleDecoder struct {
	b   []byte
	i   int
	smp Sample
	// The parts, reused from line to line.
	proc   Proc
	cgroup Cgroup
	gomem  GoMem
	pprof  PprofCounts
	sched  Sched
	// unknown names the keys skipped for not being known ("go.new_field"), at most
	// maxUnknownNames of them; unknownN counts them all.
	unknown  map[string]bool
	unknownN int
}

// maxUnknownNames bounds the names of unknown keys kept.
const maxUnknownNames = 8

// skipUnknown skips the value of a key the decoder does not know, and counts it under
// part.key.
func (d *sampleDecoder) skipUnknown(part string, key []byte) error {
	d.unknownN++
	name := part + string(key)
	if d.unknown == nil {
		d.unknown = map[string]bool{}
	}
	if len(d.unknown) < maxUnknownNames {
		d.unknown[name] = true
	}
	return d.skip(0)
}

// errSyntax is returned for a line that is not a sample; the reader counts it as corrupt.
var errSyntax = errors.New("not a sample line")

// maxDepth bounds the nesting of values the decoder skips.
const maxDepth = 64

// decode parses one line. The result is valid until the next call.
func (d *sampleDecoder) decode(line []byte) (*Sample, error) {
	d.b, d.i = line, 0
	d.smp = Sample{}
	err := d.object(func(key []byte) error {
		switch string(key) {
		case "t":
			return d.time(&d.smp.Time)
		case "proc":
			return d.part(func() { d.proc = Proc{}; d.smp.Proc = &d.proc }, d.procField)
		case "cgroup":
			return d.part(func() { d.cgroup = Cgroup{}; d.smp.Cgroup = &d.cgroup }, d.cgroupField)
		case "go":
			return d.part(func() { d.gomem = GoMem{}; d.smp.Go = &d.gomem }, d.goField)
		case "pprof":
			return d.part(func() { d.pprof = PprofCounts{}; d.smp.Pprof = &d.pprof }, d.pprofField)
		case "sched":
			return d.part(func() { d.sched = Sched{}; d.smp.Sched = &d.sched }, d.schedField)
		}
		return d.skipUnknown("", key)
	})
	if err != nil {
		return nil, err
	}
	if d.ws(); d.i != len(d.b) {
		return nil, errSyntax
	}
	return &d.smp, nil
}

// part decodes an object-valued part, or null (which leaves the part absent).
func (d *sampleDecoder) part(reset func(), field func(key []byte) error) error {
	if d.ws(); d.literal("null") {
		return nil
	}
	reset()
	return d.object(field)
}

func (d *sampleDecoder) procField(key []byte) error {
	p := &d.proc
	switch string(key) {
	case "pid":
		return d.int(&p.PID)
	case "rss_bytes":
		return d.uint(&p.RSSBytes)
	case "rss_anon_bytes":
		return d.uint(&p.RSSAnonBytes)
	case "rss_file_bytes":
		return d.uint(&p.RSSFileBytes)
	case "rss_shmem_bytes":
		return d.uint(&p.RSSShmemBytes)
	case "hwm_bytes":
		return d.uint(&p.HWMBytes)
	case "lazyfree_bytes":
		return d.uint(&p.LazyFreeBytes)
	case "threads":
		return d.int(&p.Threads)
	case "cpu_seconds":
		return d.float(&p.CPUSeconds)
	case "tree_rss_bytes":
		return d.uint(&p.TreeRSSBytes)
	case "tree_procs":
		return d.int(&p.TreeProcs)
	}
	return d.skipUnknown("proc.", key)
}

func (d *sampleDecoder) cgroupField(key []byte) error {
	c := &d.cgroup
	switch string(key) {
	case "version":
		return d.int(&c.Version)
	case "limit_bytes":
		return d.uint(&c.LimitBytes)
	case "usage_bytes":
		return d.uint(&c.UsageBytes)
	case "working_set_bytes":
		return d.uint(&c.WorkingSetBytes)
	case "anon_bytes":
		return d.uint(&c.AnonBytes)
	case "file_bytes":
		return d.uint(&c.FileBytes)
	case "oom_kills":
		return d.uint(&c.OOMKills)
	}
	return d.skipUnknown("cgroup.", key)
}

func (d *sampleDecoder) schedField(key []byte) error {
	s := &d.sched
	switch string(key) {
	case "run_seconds":
		return d.float(&s.RunSeconds)
	case "wait_seconds":
		return d.float(&s.WaitSeconds)
	case "tasks":
		return d.int(&s.Tasks)
	}
	return d.skipUnknown("sched.", key)
}

func (d *sampleDecoder) goField(key []byte) error {
	g := &d.gomem
	if p := goUintField(g, string(key)); p != nil {
		return d.uint(p)
	}
	if p := goFloatField(g, string(key)); p != nil {
		return d.float(p)
	}
	switch string(key) {
	case "source":
		return d.string(&g.Source)
	case "goroutines":
		return d.int(&g.Goroutines)
	case "gogc":
		return d.int(&g.GOGC)
	case "gomaxprocs":
		return d.int(&g.GOMAXPROCS)
	}
	return d.skipUnknown("go.", key)
}

// goUintField returns the uint64 field of g named key in the JSON form, or nil.
func goUintField(g *GoMem, key string) *uint64 {
	switch key {
	case "heap_objects_bytes":
		return &g.HeapObjectsBytes
	case "heap_unused_bytes":
		return &g.HeapUnusedBytes
	case "heap_free_bytes":
		return &g.HeapFreeBytes
	case "heap_released_bytes":
		return &g.HeapReleasedBytes
	case "heap_stacks_bytes":
		return &g.HeapStacksBytes
	case "os_stacks_bytes":
		return &g.OSStacksBytes
	case "metadata_bytes":
		return &g.MetadataBytes
	case "other_bytes":
		return &g.OtherBytes
	case "total_bytes":
		return &g.TotalBytes
	case "heap_live_bytes":
		return &g.HeapLiveBytes
	case "heap_goal_bytes":
		return &g.HeapGoalBytes
	case "stack_scan_bytes":
		return &g.StackScanBytes
	case "globals_scan_bytes":
		return &g.GlobalsScanBytes
	case "alloc_bytes_total":
		return &g.AllocBytesTotal
	case "alloc_objects_total":
		return &g.AllocObjectsTotal
	case "gc_cycles":
		return &g.GCCycles
	case "gc_forced_cycles":
		return &g.GCForcedCycles
	case "last_gc_unix_nano":
		return &g.LastGCUnixNano
	case "gomemlimit_bytes":
		return &g.GOMemLimitBytes
	}
	return nil
}

// goFloatField returns the float64 field of g named key in the JSON form, or nil.
func goFloatField(g *GoMem, key string) *float64 {
	switch key {
	case "gc_total_seconds":
		return &g.GCTotalSeconds
	case "gc_assist_seconds":
		return &g.GCAssistSeconds
	case "gc_idle_seconds":
		return &g.GCIdleSeconds
	case "gc_pause_seconds":
		return &g.GCPauseSeconds
	case "cpu_total_seconds":
		return &g.CPUTotalSeconds
	case "gc_cpu_fraction":
		return &g.GCCPUFraction
	case "pause_total_seconds":
		return &g.PauseTotalSeconds
	}
	return nil
}

func (d *sampleDecoder) pprofField(key []byte) error {
	p := &d.pprof
	switch string(key) {
	case "goroutines":
		return d.int(&p.Goroutines)
	case "goroutineleak":
		return d.int(&p.GoroutineLeak)
	case "threadcreate":
		return d.int(&p.Threads)
	case "heap_records":
		return d.int(&p.HeapRecords)
	}
	return d.skipUnknown("pprof.", key)
}

// object reads {"key": value, ...}, calling field for each key with the position at its value.
func (d *sampleDecoder) object(field func(key []byte) error) error {
	if d.ws(); !d.consume('{') {
		return errSyntax
	}
	if d.ws(); d.consume('}') {
		return nil
	}
	for {
		key, err := d.rawString()
		if err != nil {
			return err
		}
		if d.ws(); !d.consume(':') {
			return errSyntax
		}
		d.ws()
		if err := field(key); err != nil {
			return err
		}
		d.ws()
		if d.consume(',') {
			d.ws()
			continue
		}
		if d.consume('}') {
			return nil
		}
		return errSyntax
	}
}

func (d *sampleDecoder) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *sampleDecoder) consume(c byte) bool {
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

func (d *sampleDecoder) literal(s string) bool {
	if len(d.b)-d.i >= len(s) && string(d.b[d.i:d.i+len(s)]) == s {
		d.i += len(s)
		return true
	}
	return false
}

// rawString reads a string token and returns its bytes between the quotes. Keys and values
// memdoctor writes need no escapes; a string with escapes is returned still escaped, which
// matches no known key and is skipped (or, as a value, decoded by string).
func (d *sampleDecoder) rawString() ([]byte, error) {
	if !d.consume('"') {
		return nil, errSyntax
	}
	start := d.i
	for d.i < len(d.b) {
		switch c := d.b[d.i]; {
		case c == '"':
			s := d.b[start:d.i]
			d.i++
			return s, nil
		case c == '\\':
			d.i += 2
		case c < 0x20:
			return nil, errSyntax
		default:
			d.i++
		}
	}
	return nil, errSyntax
}

// string reads a string value, unescaping it when needed.
func (d *sampleDecoder) string(dst *string) error {
	start := d.i
	raw, err := d.rawString()
	if err != nil {
		return err
	}
	for _, c := range raw {
		if c == '\\' {
			s, err := strconv.Unquote(string(d.b[start:d.i]))
			if err != nil {
				return errSyntax
			}
			*dst = strings.ToValidUTF8(s, "\uFFFD")
			return nil
		}
	}
	*dst = string(raw)
	if !utf8.Valid(raw) { // as encoding/json does
		*dst = strings.ToValidUTF8(*dst, "\uFFFD")
	}
	return nil
}

func (d *sampleDecoder) time(dst *time.Time) error {
	var s string
	if err := d.string(&s); err != nil {
		return err
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return errSyntax
	}
	*dst = t
	return nil
}

// number returns the bytes of a JSON number token.
func (d *sampleDecoder) number() ([]byte, error) {
	start := d.i
	for d.i < len(d.b) {
		c := d.b[d.i]
		if c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' {
			d.i++
			continue
		}
		break
	}
	if d.i == start {
		return nil, errSyntax
	}
	return d.b[start:d.i], nil
}

func (d *sampleDecoder) uint(dst *uint64) error {
	b, err := d.number()
	if err != nil {
		return err
	}
	v, ok := parseDigits(b)
	if !ok {
		return errSyntax
	}
	*dst = v
	return nil
}

func (d *sampleDecoder) int(dst *int) error {
	b, err := d.number()
	if err != nil {
		return err
	}
	neg := len(b) > 1 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	v, ok := parseDigits(b)
	if !ok || v > math.MaxInt64 {
		return errSyntax
	}
	*dst = int(v)
	if neg {
		*dst = -*dst
	}
	return nil
}

func (d *sampleDecoder) float(dst *float64) error {
	b, err := d.number()
	if err != nil {
		return err
	}
	if v, ok := parseDigits(b); ok && v < 1<<53 {
		*dst = float64(v)
		return nil
	}
	// The string does not outlive the call: only the number is kept.
	v, err := strconv.ParseFloat(unsafe.String(&b[0], len(b)), 64)
	if err != nil {
		return errSyntax
	}
	*dst = v
	return nil
}

// parseDigits parses a JSON unsigned integer (no sign, no leading zeros, no fraction).
func parseDigits(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 1 && b[0] == '0' {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}

// skip skips one value of any kind.
func (d *sampleDecoder) skip(depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("%w: nested too deep", errSyntax)
	}
	d.ws()
	if d.i >= len(d.b) {
		return errSyntax
	}
	switch c := d.b[d.i]; {
	case c == '"':
		_, err := d.rawString()
		return err
	case c == '{':
		return d.object(func([]byte) error { return d.skip(depth + 1) })
	case c == '[':
		d.i++
		if d.ws(); d.consume(']') {
			return nil
		}
		for {
			if err := d.skip(depth + 1); err != nil {
				return err
			}
			d.ws()
			if d.consume(',') {
				continue
			}
			if d.consume(']') {
				return nil
			}
			return errSyntax
		}
	case d.literal("true"), d.literal("false"), d.literal("null"):
		return nil
	case c == '-' || c >= '0' && c <= '9':
		_, err := d.number()
		return err
	}
	return errSyntax
}
