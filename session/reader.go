package session

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/memdoctor/memdoctor/gctrace"
	"github.com/memdoctor/memdoctor/infile"
)

// maxLine bounds a metrics.jsonl line; a longer one is skipped as corrupt.
const maxLine = 256 << 10

// Bounds on the files a session is read from (see package infile: each must also be a
// regular file, so that a named pipe or a link to /dev/zero cannot hang the reader).
const (
	// MaxManifestBytes bounds manifest.json, which is read whole (a real one is a few KiB).
	MaxManifestBytes = 16 << 20
	// MaxStreamBytes bounds metrics.jsonl and gctrace.log, which are streamed: 16 GiB is
	// half a year of samples at one a second.
	MaxStreamBytes = 16 << 30
)

// Session is a session directory opened for analysis. Open reads the manifest and lists the
// profiles; the samples and gctrace cycles, which can be hundreds of thousands, are streamed
// from disk by EachSample and EachGC, never held by the Session.
type Session struct {
	Dir      string
	Manifest Manifest
	Profiles []ProfileRef // sorted by time
	// Warnings say what was skipped or repaired while opening.
	Warnings []string

	skip map[string]bool // metrics.jsonl or gctrace.log when Open refused it (see Warnings)
}

// GCEvent is one gctrace cycle placed on the wall clock (Time is zero when the session has no
// GCTraceBase).
type GCEvent struct {
	Time time.Time
	gctrace.Cycle
}

// IsDir reports whether dir is a memdoctor session directory: it holds a manifest, or the
// samples a killed collector left without one, as regular files. Every reader that must tell
// a session from a folder of profiles asks this.
func IsDir(dir string) bool {
	for _, f := range []string{ManifestFile, MetricsFile} {
		if st, err := os.Stat(filepath.Join(dir, f)); err == nil && st.Mode().IsRegular() {
			return true
		}
	}
	return false
}

// Open reads a session directory. It fails only when dir is not a session at all; damage
// inside (a torn last line, a corrupt profile name, a missing gctrace.log) becomes a warning.
func Open(dir string) (*Session, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", dir, unwrapPathError(err))
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("session %s: not a directory (give the session directory, not a file in it)", dir)
	}
	s := &Session{Dir: dir}
	if err := s.readManifest(); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(s.Dir, MetricsFile)); errors.Is(err, fs.ErrNotExist) {
		s.warnf("%s is missing: no samples", MetricsFile)
	}
	s.checkStream(MetricsFile, "no samples")
	s.checkStream(GCTraceFile, "no gctrace cycles")
	if err := s.listProfiles(); err != nil {
		return nil, err
	}
	if s.Manifest.Status == StatusRunning {
		s.warnf("the collector did not finish this session (it was killed or is still running); analysing what it wrote")
	}
	return s, nil
}

// checkStream refuses, with a warning, a streamed file of the session that is not a regular
// file or is larger than MaxStreamBytes: it is then read as absent.
func (s *Session) checkStream(name, consequence string) {
	err := infile.Check(filepath.Join(s.Dir, name), MaxStreamBytes)
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		return
	}
	if s.skip == nil {
		s.skip = map[string]bool{}
	}
	s.skip[name] = true
	s.warnf("%s skipped (%v): %s", name, unwrapPathError(err), consequence)
}

func (s *Session) warnf(format string, args ...any) {
	s.Warnings = append(s.Warnings, fmt.Sprintf(format, args...))
}

func (s *Session) readManifest() error {
	path := filepath.Join(s.Dir, ManifestFile)
	b, err := infile.ReadFile(path, MaxManifestBytes)
	if errors.Is(err, infile.ErrNotRegular) || errors.Is(err, infile.ErrTooLarge) {
		s.warnf("%s skipped (%v); using what the other files say", ManifestFile, unwrapPathError(err))
		return nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		if _, merr := os.Stat(filepath.Join(s.Dir, MetricsFile)); merr != nil {
			return fmt.Errorf("session %s: not a memdoctor session (no %s or %s)", s.Dir, ManifestFile, MetricsFile)
		}
		s.warnf("%s is missing; using what the other files say", ManifestFile)
		return nil
	}
	if err != nil {
		return fmt.Errorf("session %s: %w", path, unwrapPathError(err))
	}
	if err := json.Unmarshal(b, &s.Manifest); err != nil {
		s.warnf("%s is corrupt (%v); using what the other files say", ManifestFile, err)
		s.Manifest = Manifest{}
		return nil
	}
	if !strings.HasPrefix(s.Manifest.Format, "memdoctor/session/") {
		return fmt.Errorf("session %s: %s has format %q, want %q", s.Dir, ManifestFile, s.Manifest.Format, Format)
	}
	if s.Manifest.Format != Format {
		s.warnf("session format %s is newer than this memdoctor's %s; reading what it understands", s.Manifest.Format, Format)
	}
	return nil
}

// ReadStats says what a streaming read skipped.
type ReadStats struct {
	Lines, Bad int // lines read, and those skipped as corrupt or torn
	FirstBad   int // the line number of the first one skipped (0 = none)
	// Unknown counts the keys skipped because this reader does not know them (a newer
	// writer's, or a field the decoder forgot), and UnknownKeys names the first few ("go.x").
	Unknown     int
	UnknownKeys []string
}

// Warning describes the skipped lines of file, or "" when none were.
func (st ReadStats) Warning(file string) string {
	var parts []string
	if st.Bad > 0 {
		parts = append(parts, fmt.Sprintf("%s: skipped %d corrupt or torn line(s), the first at line %d", file, st.Bad, st.FirstBad))
	}
	if st.Unknown > 0 {
		parts = append(parts, fmt.Sprintf("%s: skipped %d value(s) of key(s) this memdoctor does not know (%s): a newer memdoctor wrote them",
			file, st.Unknown, strings.Join(st.UnknownKeys, ", ")))
	}
	return strings.Join(parts, "; ")
}

// EachSample calls fn with every sample of metrics.jsonl, in file order (which is collection
// order: nearly time order, but an agent's history arrives after the samples taken while it
// was copied). The *Sample and its parts are reused: fn must copy what it keeps. Corrupt or
// torn lines are skipped and counted. A missing metrics.jsonl is no samples, not an error.
func (s *Session) EachSample(fn func(*Sample) error) (ReadStats, error) {
	var st ReadStats
	if s.skip[MetricsFile] {
		return st, nil
	}
	f, err := infile.Open(filepath.Join(s.Dir, MetricsFile), MaxStreamBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("session %s: %w", s.Dir, err)
	}
	defer f.Close()
	var dec sampleDecoder
	var ferr error
	err = eachLine(f, func(n int, line []byte, tooLong bool) bool {
		st.Lines++
		var smp *Sample
		var err error
		if !tooLong {
			smp, err = dec.decode(line)
		}
		if tooLong || err != nil || smp.Time.IsZero() {
			if st.Bad == 0 {
				st.FirstBad = n
			}
			st.Bad++
			return true
		}
		if ferr = fn(smp); ferr != nil {
			return false
		}
		return true
	})
	st.Unknown = dec.unknownN
	for k := range dec.unknown {
		st.UnknownKeys = append(st.UnknownKeys, k)
	}
	sort.Strings(st.UnknownKeys)
	if ferr != nil {
		return st, ferr
	}
	if err != nil {
		return st, fmt.Errorf("session %s: read %s: %w", s.Dir, MetricsFile, err)
	}
	return st, nil
}

// ReadSamples returns every sample of metrics.jsonl in time order. It holds them all: for
// tests and small sessions; analysis streams them with EachSample.
func (s *Session) ReadSamples() ([]Sample, error) {
	var out []Sample
	_, err := s.EachSample(func(smp *Sample) error {
		c := *smp
		if smp.Proc != nil {
			p := *smp.Proc
			c.Proc = &p
		}
		if smp.Cgroup != nil {
			cg := *smp.Cgroup
			c.Cgroup = &cg
		}
		if smp.Go != nil {
			g := *smp.Go
			c.Go = &g
		}
		if smp.Pprof != nil {
			p := *smp.Pprof
			c.Pprof = &p
		}
		out = append(out, c)
		return nil
	})
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out, err
}

// eachLine calls fn for every non-blank line of r until fn returns false. A line longer than
// maxLine is not buffered: fn gets tooLong instead, and the caller counts it as corrupt.
func eachLine(r io.Reader, fn func(n int, line []byte, tooLong bool) bool) error {
	br := bufio.NewReaderSize(r, maxLine)
	for n := 1; ; n++ {
		line, err := br.ReadSlice('\n')
		tooLong := false
		for errors.Is(err, bufio.ErrBufferFull) {
			tooLong = true
			_, err = br.ReadSlice('\n')
		}
		if line = trimNewline(line); tooLong || len(line) > 0 {
			if !fn(n, line, tooLong) {
				return nil
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func trimNewline(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// EachGC calls fn with every cycle of gctrace.log, in file order, placed on the wall clock
// when the manifest has the time base (GCTraceBase; Time is zero otherwise). It returns how
// many gc lines could not be parsed. A missing gctrace.log is no cycles, not an error.
func (s *Session) EachGC(fn func(GCEvent) error) (skipped int, err error) {
	if s.skip[GCTraceFile] {
		return 0, nil
	}
	f, err := infile.Open(filepath.Join(s.Dir, GCTraceFile), MaxStreamBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("session %s: %w", s.Dir, err)
	}
	defer f.Close()
	sc := gctrace.NewScanner(f)
	base := s.Manifest.GCTraceBase
	for sc.Scan() {
		ev := GCEvent{Cycle: sc.Cycle()}
		if !base.IsZero() {
			ev.Time = base.Add(ev.At)
		}
		if err := fn(ev); err != nil {
			return sc.Skipped(), err
		}
	}
	if err := sc.Err(); err != nil {
		return sc.Skipped(), fmt.Errorf("session %s: read %s: %w", s.Dir, GCTraceFile, err)
	}
	return sc.Skipped(), nil
}

// ReadGC returns every gctrace cycle, in file order. It holds them all: for tests and small
// sessions; analysis streams them with EachGC.
func (s *Session) ReadGC() ([]GCEvent, error) {
	var out []GCEvent
	_, err := s.EachGC(func(ev GCEvent) error { out = append(out, ev); return nil })
	return out, err
}

func (s *Session) listProfiles() error {
	dir := filepath.Join(s.Dir, ProfilesDir)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("session %s: %w", s.Dir, err)
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") {
			continue // temporary files of an interrupted write
		}
		ref, err := ParseProfileFileName(name)
		if err != nil {
			s.warnf("%s: ignored %s", ProfilesDir, name)
			continue
		}
		ref.Path = filepath.Join(dir, name)
		if !e.Type().IsRegular() { // a link, a pipe, a device: only a link to a regular file is read
			if err := infile.Check(ref.Path, 0); err != nil {
				s.warnf("%s: ignored %s (%v)", ProfilesDir, name, unwrapPathError(err))
				continue
			}
		}
		s.Profiles = append(s.Profiles, ref)
	}
	sort.SliceStable(s.Profiles, func(i, j int) bool { return s.Profiles[i].Time.Before(s.Profiles[j].Time) })
	return nil
}

// NeverCollected returns, sorted, the kinds of data (Manifest.Attempts keys) the collector
// tried to read and never obtained: what an analysis of this session cannot judge.
func (s *Session) NeverCollected() []string {
	var out []string
	for kind, a := range s.Manifest.Attempts {
		if a.Never() {
			out = append(out, kind)
		}
	}
	sort.Strings(out)
	return out
}

// ProfilesOf returns the stored profiles of one kind, in time order. With periodic set, only
// unlabelled (periodic) snapshots are returned.
func (s *Session) ProfilesOf(kind string, periodicOnly bool) []ProfileRef {
	var out []ProfileRef
	for _, p := range s.Profiles {
		if p.Kind == kind && (!periodicOnly || p.Label == "") {
			out = append(out, p)
		}
	}
	return out
}

// Window returns the span the manifest records: its start, and its end (zero when the
// collector was killed before writing it: the data's own times tell then).
func (s *Session) Window() (start, end time.Time) {
	return s.Manifest.Start, s.Manifest.End
}

// unwrapPathError drops the *fs.PathError wrapper whose path the caller already names.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
