package pprofdir

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/memdoctor/memdoctor/collect/pprofio"
	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/session"
)

// Mode is the evidence's Mode for what this package reads.
const Mode = "profiles"

// Options tune Load.
type Options struct {
	// MemoryBudgetBytes is what the service may use (0 = unknown: profiles carry no limit).
	MemoryBudgetBytes uint64
	// MainModule is the program's main module path; "" = inferred from the profiles.
	MainModule string
	// MaxProfileBytes bounds a profile's decompressed size (0 = pprofio's default).
	MaxProfileBytes int64
	// Logger receives debug messages; nil = discard.
	Logger *slog.Logger
}

// Limits of a walk: a folder tree is read, not a file system.
const (
	maxDepth   = 16     // folders below a given PATH
	maxEntries = 100000 // directory entries looked at in all
	maxDirs    = 4096   // folders read in all
)

// BadInputError is a PATH given on the command line that cannot be read as asked: its
// message names it and says what to give instead.
type BadInputError struct {
	Path string
	Err  error
}

func (e *BadInputError) Error() string { return fmt.Sprintf("%s: %v", e.Path, e.Err) }
func (e *BadInputError) Unwrap() error { return e.Err }

// ErrNothing is wrapped by Load's error when the inputs hold no profile and no gctrace log.
var ErrNothing = errors.New("no heap, goroutine or goroutineleak profile and no gctrace log found")

// what the inputs may be, for the errors that say what to give instead.
const want = "give a memdoctor session, a folder of profiles, heap/allocs/goroutine/goroutineleak profiles (pprof protobuf, gzipped or not, or their text forms), or GODEBUG=gctrace=1 logs"

// Load reads profiles and gctrace logs into one evidence: each path is a folder (read with
// its subfolders), a profile or a gctrace log. A PATH that cannot be read as asked is an
// error (*BadInputError); inside folders, files that are not profiles or logs, profiles that
// cannot be read and profiles not about memory are skipped, and the notes say so.
func Load(paths []string, opts Options) (*evidence.Evidence, error) {
	if len(paths) == 0 {
		return nil, errors.New("no PATH given: " + want)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	l := &loader{
		ev:   evidence.New(Mode, evidence.Target{}, evidence.Options{MemoryBudgetBytes: opts.MemoryBudgetBytes, MaxProfileBytes: opts.MaxProfileBytes}),
		log:  log,
		seen: map[string]bool{},
	}
	if abs, err := filepath.Abs(paths[0]); err == nil {
		l.name = filepath.Base(abs)
	}
	for _, p := range paths {
		if err := l.input(p); err != nil {
			return nil, err
		}
	}
	if len(l.profiles) == 0 && len(l.logs) == 0 {
		return nil, l.nothing(paths)
	}
	l.build(opts)
	return l.ev, nil
}

// loader is the state of one Load.
type loader struct {
	ev   *evidence.Evidence
	log  *slog.Logger
	seen map[string]bool // files read, by resolved path
	dirs []os.FileInfo   // folders read, against loops
	// entries counts directory entries looked at; cut says when a limit stopped the walk.
	entries int
	cut     []string

	profiles []item
	logs     []*gcLog
	skip     skipped
	name     string // the first input's name
}

// item is a profile to add.
type item struct {
	path  string
	info  evidence.ProfileInfo
	mtime time.Time
}

// input reads one PATH given by the user.
func (l *loader) input(p string) error {
	st, err := os.Stat(p)
	if err != nil {
		return &BadInputError{p, fmt.Errorf("%w: %s", unwrapPath(err), want)}
	}
	if st.IsDir() {
		if session.IsDir(p) {
			return &BadInputError{p, errors.New("a memdoctor session is analysed on its own: memdoctor analyze " + p)}
		}
		l.dir(p, st, 0)
		return nil
	}
	return l.file(p, st, true)
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// dir reads a folder and its subfolders (symbolic links followed, each folder once, so that
// a loop ends), skipping hidden entries (".git") and memdoctor sessions inside.
func (l *loader) dir(path string, st os.FileInfo, depth int) {
	for _, d := range l.dirs {
		if os.SameFile(d, st) {
			l.skip.loops++
			return
		}
	}
	if len(l.dirs) >= maxDirs {
		l.stop(fmt.Sprintf("more than %d folders", maxDirs))
		return
	}
	l.dirs = append(l.dirs, st)
	f, err := os.Open(path)
	if err != nil {
		l.skip.add(&l.skip.unreadable, path, err)
		return
	}
	defer f.Close()
	for {
		entries, err := f.ReadDir(256)
		for _, e := range entries {
			if l.entries++; l.entries > maxEntries {
				l.stop(fmt.Sprintf("more than %d entries", maxEntries))
				return
			}
			if strings.HasPrefix(e.Name(), ".") {
				continue
			}
			l.entry(filepath.Join(path, e.Name()), depth)
		}
		if err == io.EOF || len(entries) == 0 {
			if err != nil && err != io.EOF {
				l.skip.add(&l.skip.unreadable, path, err)
			}
			return
		}
	}
}

// entry reads one entry of a folder.
func (l *loader) entry(path string, depth int) {
	st, err := os.Stat(path) // follows a symbolic link
	switch {
	case err != nil:
		l.skip.add(&l.skip.unreadable, path, unwrapPath(err))
	case st.IsDir() && session.IsDir(path):
		l.skip.add(&l.skip.sessions, path, nil)
	case st.IsDir() && depth+1 > maxDepth:
		l.stop(fmt.Sprintf("folders deeper than %d", maxDepth))
	case st.IsDir():
		l.dir(path, st, depth+1)
	default:
		if err := l.file(path, st, false); err != nil {
			l.log.Debug("skipped", "path", path, "err", err)
		}
	}
}

// stop records why the walk did not read everything.
func (l *loader) stop(why string) {
	if !slices.Contains(l.cut, why) {
		l.cut = append(l.cut, why)
	}
}

// file reads one file: a profile, a gctrace log, or something else. explicit is true for a
// PATH the user named: what cannot be read is then an error, not a note.
func (l *loader) file(path string, st os.FileInfo, explicit bool) error {
	fail := func(counter *skipList, err error) error {
		if explicit {
			return &BadInputError{path, err}
		}
		l.skip.add(counter, path, err)
		return nil
	}
	if !st.Mode().IsRegular() {
		return fail(&l.skip.special, fmt.Errorf("not a regular file (%s): %s", st.Mode().Type(), want))
	}
	key := path
	if abs, err := filepath.EvalSymlinks(path); err == nil {
		key = abs
	}
	if l.seen[key] {
		return nil
	}
	l.seen[key] = true
	kind, gzipped, err := sniffFile(path)
	if err != nil {
		return fail(&l.skip.unreadable, unwrapPath(err))
	}
	switch kind {
	case kindProfile:
		return l.profile(path, st, explicit, fail)
	case kindText:
		lg, err := scanLog(path, filepath.Base(path), gzipped, st.ModTime())
		if err != nil {
			return fail(&l.skip.unreadable, err)
		}
		if all, _ := lg.cycles(); all == 0 {
			return fail(&l.skip.other, errors.New("text without GODEBUG=gctrace=1 lines: "+want))
		}
		l.logs = append(l.logs, lg)
		return nil
	}
	return fail(&l.skip.other, errors.New("not a profile or a gctrace log: "+want))
}

// profile reads a profile's kind, time and totals.
func (l *loader) profile(path string, st os.FileInfo, explicit bool, fail func(*skipList, error) error) error {
	info, err := l.ev.ReadProfileInfo(path)
	if err != nil {
		if explicit && errors.Is(err, pprofio.ErrTooLarge) {
			return &BadInputError{path, err}
		}
		return fail(&l.skip.bad, err)
	}
	if info.Kind == "" {
		return fail(&l.skip.notMemory, fmt.Errorf("a %s, not about memory: give heap, allocs, goroutine or goroutineleak profiles", info.What))
	}
	l.profiles = append(l.profiles, item{path: path, info: info, mtime: st.ModTime()})
	return nil
}

// nothing is the error of inputs without any profile or log.
func (l *loader) nothing(paths []string) error {
	why := l.skip.summary()
	if why == "" {
		why = "it is empty"
	}
	return &BadInputError{strings.Join(paths, " "), fmt.Errorf("%w (%s): %s", ErrNothing, why, want)}
}
