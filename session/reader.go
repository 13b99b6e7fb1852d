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
)

// maxLine bounds a metrics.jsonl line; a longer one is skipped as corrupt.
const maxLine = 256 << 10

// Session is a session directory loaded for analysis. Profiles are listed, not loaded.
type Session struct {
	Dir      string
	Manifest Manifest
	Samples  []Sample // in file order, which is time order
	GC       []GCEvent
	Profiles []ProfileRef // sorted by time
	// Warnings say what was skipped or repaired while reading.
	Warnings []string
}

// GCEvent is one gctrace cycle placed on the wall clock (Time is zero when the session has no
// GCTraceBase).
type GCEvent struct {
	Time time.Time
	gctrace.Cycle
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
	if err := s.readMetrics(); err != nil {
		return nil, err
	}
	if err := s.readGCTrace(); err != nil {
		return nil, err
	}
	if err := s.listProfiles(); err != nil {
		return nil, err
	}
	if s.Manifest.Status == StatusRunning {
		s.warnf("the collector did not finish this session (it was killed or is still running); analysing what it wrote")
	}
	return s, nil
}

func (s *Session) warnf(format string, args ...any) {
	s.Warnings = append(s.Warnings, fmt.Sprintf(format, args...))
}

func (s *Session) readManifest() error {
	path := filepath.Join(s.Dir, ManifestFile)
	b, err := os.ReadFile(path)
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

func (s *Session) readMetrics() error {
	f, err := os.Open(filepath.Join(s.Dir, MetricsFile))
	if errors.Is(err, fs.ErrNotExist) {
		s.warnf("%s is missing: no samples", MetricsFile)
		return nil
	}
	if err != nil {
		return fmt.Errorf("session %s: %w", s.Dir, err)
	}
	defer f.Close()
	bad, first := 0, 0
	err = eachLine(f, func(n int, line []byte, tooLong bool) {
		var smp Sample
		if tooLong || json.Unmarshal(line, &smp) != nil || smp.Time.IsZero() {
			if bad == 0 {
				first = n
			}
			bad++
			return
		}
		s.Samples = append(s.Samples, smp)
	})
	if err != nil {
		return fmt.Errorf("session %s: read %s: %w", s.Dir, MetricsFile, err)
	}
	if bad > 0 {
		s.warnf("%s: skipped %d corrupt or torn line(s), the first at line %d", MetricsFile, bad, first)
	}
	sort.SliceStable(s.Samples, func(i, j int) bool { return s.Samples[i].Time.Before(s.Samples[j].Time) })
	return nil
}

// eachLine calls fn for every non-blank line of r. A line longer than maxLine is not
// buffered: fn gets tooLong instead, and the caller counts it as corrupt.
func eachLine(r io.Reader, fn func(n int, line []byte, tooLong bool)) error {
	br := bufio.NewReaderSize(r, maxLine)
	for n := 1; ; n++ {
		line, err := br.ReadSlice('\n')
		tooLong := false
		for errors.Is(err, bufio.ErrBufferFull) {
			tooLong = true
			_, err = br.ReadSlice('\n')
		}
		if line = trimNewline(line); tooLong || len(line) > 0 {
			fn(n, line, tooLong)
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

func (s *Session) readGCTrace() error {
	f, err := os.Open(filepath.Join(s.Dir, GCTraceFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("session %s: %w", s.Dir, err)
	}
	defer f.Close()
	sc := gctrace.NewScanner(f)
	base := s.Manifest.GCTraceBase
	for sc.Scan() {
		c := sc.Cycle()
		ev := GCEvent{Cycle: c}
		if !base.IsZero() {
			ev.Time = base.Add(c.At)
		}
		s.GC = append(s.GC, ev)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("session %s: read %s: %w", s.Dir, GCTraceFile, err)
	}
	if n := sc.Skipped(); n > 0 {
		s.warnf("%s: skipped %d unparsable gc line(s)", GCTraceFile, n)
	}
	return nil
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

// Window returns the span the session covers: the manifest's start and end, falling back to
// the first and last sample (a killed collector never wrote its end).
func (s *Session) Window() (start, end time.Time) {
	start, end = s.Manifest.Start, s.Manifest.End
	if n := len(s.Samples); n > 0 {
		if start.IsZero() || s.Samples[0].Time.Before(start) {
			start = s.Samples[0].Time
		}
		if end.IsZero() || s.Samples[n-1].Time.After(end) {
			end = s.Samples[n-1].Time
		}
	}
	if n := len(s.GC); n > 0 && !s.GC[n-1].Time.IsZero() && s.GC[n-1].Time.After(end) && end.IsZero() {
		end = s.GC[n-1].Time
	}
	return start, end
}

// Until returns a copy of the session that ends at t: samples, gctrace cycles and profiles
// after t are left out, as if collection had stopped then. Cycles without a wall-clock time
// are kept.
func (s *Session) Until(t time.Time) *Session {
	c := *s
	c.Samples = nil
	for _, smp := range s.Samples {
		if !smp.Time.After(t) {
			c.Samples = append(c.Samples, smp)
		}
	}
	c.GC = nil
	for _, ev := range s.GC {
		if ev.Time.IsZero() || !ev.Time.After(t) {
			c.GC = append(c.GC, ev)
		}
	}
	c.Profiles = nil
	for _, p := range s.Profiles {
		if !p.Time.After(t) {
			c.Profiles = append(c.Profiles, p)
		}
	}
	if c.Manifest.End.IsZero() || c.Manifest.End.After(t) {
		c.Manifest.End = t
	}
	return &c
}
