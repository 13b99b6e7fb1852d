package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Writer appends to a session directory while it is being collected. It is safe for
// concurrent use. Every write is a single append or an atomic rename, so the directory can be
// read at any moment, and after the writer's process is killed.
type Writer struct {
	dir string
	fs  FS

	mu       sync.Mutex
	manifest Manifest
	metrics  appendFile
	gctrace  appendFile
	buf      bytes.Buffer
}

// appendFile is an append-only file that survives a failed write: after a short write (a full
// disk) the next record starts on a new line, so one failure costs at most one record.
type appendFile struct {
	f    File
	torn bool
}

func (a *appendFile) writeLine(b []byte) error {
	if a.torn {
		if _, err := a.f.Write([]byte{'\n'}); err != nil {
			return err
		}
		a.torn = false
	}
	if n, err := a.f.Write(b); err != nil {
		a.torn = n > 0
		return err
	}
	return nil
}

// Create makes a new session directory (its parents too) and writes the first manifest. It
// refuses a directory that already holds a session, and reports an unwritable location with
// the path in the message.
func Create(dir string, m Manifest) (*Writer, error) {
	return CreateFS(OSFS{}, dir, m)
}

// CreateFS is Create on the file system fsys.
func CreateFS(fsys FS, dir string, m Manifest) (*Writer, error) {
	if err := fsys.MkdirAll(filepath.Join(dir, ProfilesDir), 0o755); err != nil {
		return nil, fmt.Errorf("session directory %s: %w", dir, unwrapPathError(err))
	}
	if _, err := fsys.Stat(filepath.Join(dir, ManifestFile)); err == nil {
		return nil, fmt.Errorf("session directory %s already holds a session: choose another --out", dir)
	}
	w := &Writer{dir: dir, fs: fsys, manifest: m}
	w.manifest.Format = Format
	if w.manifest.Status == "" {
		w.manifest.Status = StatusRunning
	}
	if err := w.writeManifestLocked(); err != nil {
		return nil, err
	}
	var err error
	if w.metrics.f, err = openAppend(fsys, filepath.Join(dir, MetricsFile)); err != nil {
		return nil, err
	}
	if w.gctrace.f, err = openAppend(fsys, filepath.Join(dir, GCTraceFile)); err != nil {
		w.metrics.f.Close()
		return nil, err
	}
	return w, nil
}

func openAppend(fsys FS, path string) (File, error) {
	f, err := fsys.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600) // like the profiles and the manifest
	if err != nil {
		return nil, fmt.Errorf("session file %s: %w", path, unwrapPathError(err))
	}
	return f, nil
}

// unwrapPathError drops the *fs.PathError wrapper whose path the caller already names.
func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Dir returns the session directory.
func (w *Writer) Dir() string { return w.dir }

// AppendSample appends one line to metrics.jsonl.
func (w *Writer) AppendSample(s Sample) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Reset()
	if err := json.NewEncoder(&w.buf).Encode(s); err != nil { // Encode adds the newline
		return fmt.Errorf("encode sample: %w", err)
	}
	if err := w.metrics.writeLine(w.buf.Bytes()); err != nil {
		return fmt.Errorf("append to %s: %w", MetricsFile, unwrapPathError(err))
	}
	return nil
}

// AppendGCTrace appends one raw gctrace line (without its newline) to gctrace.log.
func (w *Writer) AppendGCTrace(line string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Reset()
	w.buf.WriteString(line)
	w.buf.WriteByte('\n')
	if err := w.gctrace.writeLine(w.buf.Bytes()); err != nil {
		return fmt.Errorf("append to %s: %w", GCTraceFile, unwrapPathError(err))
	}
	return nil
}

// WriteProfile stores a profile snapshot exactly as given (for proto profiles: the gzipped
// bytes the endpoint served) under a name that carries its kind, time and label. The file
// appears whole or not at all. kind and label must pass CheckKind and CheckLabel: a name from
// a target never reaches the file system unchecked.
func (w *Writer) WriteProfile(kind string, t time.Time, label string, data []byte) (ProfileRef, error) {
	pf, err := w.CreateProfile(kind, t, label)
	if err != nil {
		return ProfileRef{}, err
	}
	if _, err := pf.Write(data); err != nil {
		pf.Abort()
		return ProfileRef{}, err
	}
	return pf.Commit()
}

// ProfileFile is a profile being written, for one too large to hold in memory (a goroutine
// dump streamed as it arrives): Write to it, then Commit to put it in place whole, or Abort
// to drop it.
type ProfileFile struct {
	fs   FS
	f    File
	tmp  string
	path string
	ref  ProfileRef
}

// CreateProfile starts a profile snapshot file, named as WriteProfile names it (kind and
// label are checked the same way), under a temporary name until Commit.
func (w *Writer) CreateProfile(kind string, t time.Time, label string) (*ProfileFile, error) {
	if err := errors.Join(CheckKind(kind), CheckLabel(label)); err != nil {
		return nil, fmt.Errorf("write profile: %w", err)
	}
	ref := ProfileRef{Kind: kind, Time: t.UTC(), Label: label, Path: filepath.Join(ProfilesDir, ProfileFileName(kind, t, label))}
	path := filepath.Join(w.dir, ref.Path)
	f, tmp, err := createTemp(w.fs, path)
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", path, unwrapPathError(err))
	}
	return &ProfileFile{fs: w.fs, f: f, tmp: tmp, path: path, ref: ref}, nil
}

// Write appends to the profile.
func (p *ProfileFile) Write(b []byte) (int, error) {
	n, err := p.f.Write(b)
	if err != nil {
		err = fmt.Errorf("write %s: %w", p.path, unwrapPathError(err))
	}
	return n, err
}

// Commit closes the file and renames it into place.
func (p *ProfileFile) Commit() (ProfileRef, error) {
	err := p.f.Close()
	if err == nil {
		err = p.fs.Rename(p.tmp, p.path)
	}
	if err != nil {
		p.fs.Remove(p.tmp)
		return ProfileRef{}, fmt.Errorf("write %s: %w", p.path, unwrapPathError(err))
	}
	return p.ref, nil
}

// Abort drops the file.
func (p *ProfileFile) Abort() {
	p.f.Close()
	p.fs.Remove(p.tmp)
}

// UpdateManifest applies fn to the manifest and rewrites it atomically.
func (w *Writer) UpdateManifest(fn func(*Manifest)) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	fn(&w.manifest)
	return w.writeManifestLocked()
}

// Manifest returns a copy of the current manifest.
func (w *Writer) Manifest() Manifest {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.manifest
}

// WriteDiagnosis atomically replaces diagnosis.json with v encoded as indented JSON.
func (w *Writer) WriteDiagnosis(v any) error {
	return WriteDiagnosis(w.dir, v)
}

// WriteDiagnosis atomically replaces dir/diagnosis.json with v encoded as indented JSON.
func WriteDiagnosis(dir string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode diagnosis: %w", err)
	}
	return writeFileAtomic(OSFS{}, filepath.Join(dir, DiagnosisFile), append(b, '\n'))
}

// Close records how the session ended and closes its files. The manifest is written even if
// closing a file failed.
func (w *Writer) Close(status, detail string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.manifest.Status = status
	w.manifest.StatusDetail = detail
	if w.manifest.End.IsZero() {
		w.manifest.End = time.Now().UTC()
	}
	err := errors.Join(w.metrics.f.Close(), w.gctrace.f.Close())
	return errors.Join(w.writeManifestLocked(), err)
}

func (w *Writer) writeManifestLocked() error {
	w.manifest.Updated = time.Now().UTC()
	b, err := json.MarshalIndent(&w.manifest, "", "  ")
	if err != nil {
		return fmt.Errorf("encode manifest: %w", err)
	}
	return writeFileAtomic(w.fs, filepath.Join(w.dir, ManifestFile), append(b, '\n'))
}
