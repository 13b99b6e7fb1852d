package webui

import (
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"sync"
	"time"

	"github.com/google/pprof/driver"
	"github.com/google/pprof/profile"

	"github.com/memdoctor/memdoctor/collect/pprofio"
)

// uiLimits bound the profiles pprof's web UI opens. Its views take far more than parsing:
// the flame graph and the diff of the largest real profile we have (a merged Loki heap
// profile, estimated at 33 MiB to parse) took serve to 832 MiB of RSS (bench/hostile), 20 to
// 25 times the estimate, before profiles were trimmed to maxUIFrames (218 MiB after). Serve
// accepts profiles up to 40 MiB of parsing, where memdoctor's other commands accept
// pprofio.Default's 128 MiB: reading and trimming happen before the bound on frames applies.
// A larger one gets the error that says so.
var uiLimits = func() pprofio.Limits {
	l := pprofio.Default
	l.Memory = 40 << 20
	return l
}()

// fetcher reads the session's profiles within uiLimits and remembers those that failed: a
// bomb costs one read, not one per request.
type fetcher struct {
	read      func(name, path string) (*profile.Profile, error)
	maxFrames int // what pprof's UI is given: maxUIFrames
	mu        sync.Mutex
	failed    map[string]error // by path; paths are the session's, so the map is bounded
}

func newFetcher() *fetcher {
	return &fetcher{read: uiLimits.ReadFileAs, maxFrames: maxUIFrames, failed: make(map[string]error)}
}

// readOnce reads the profile at path, unless it failed before.
func (f *fetcher) readOnce(path string) (*profile.Profile, error) {
	f.mu.Lock()
	err, failed := f.failed[path]
	f.mu.Unlock()
	if failed {
		return nil, err
	}
	p, err := f.read(filepath.Base(path), path)
	if err != nil {
		f.mu.Lock()
		f.failed[path] = err
		f.mu.Unlock()
		return nil, err
	}
	return p, nil
}

// snapshot is the profile at path as pprof's UI is given it: within f.maxFrames.
func (f *fetcher) snapshot(path string) (*profile.Profile, error) {
	p, err := f.readOnce(path)
	if err != nil {
		return nil, err
	}
	p, _, err = trimFrames(p, f.maxFrames)
	return p, err
}

// diff is what pprof's -diff_base=base next makes of two profiles (next, and base with its
// values negated and its samples labelled as the base, merged), within f.maxFrames as a
// whole: a stack is kept or folded on both sides at once, so that every shown difference is
// exact.
func (f *fetcher) diff(base, next string) (*profile.Profile, error) {
	pb, err := f.readOnce(base)
	if err != nil {
		return nil, err
	}
	pn, err := f.readOnce(next)
	if err != nil {
		return nil, err
	}
	pb.SetLabel(baseLabel, []string{"true"})
	pb.Scale(-1)
	both := []*profile.Profile{pn, pb}
	if err := profile.CompatibilizeSampleTypes(both); err != nil {
		return nil, fmt.Errorf("%s and %s cannot be compared: %w", filepath.Base(base), filepath.Base(next), err)
	}
	p, err := profile.Merge(both)
	if err != nil {
		return nil, fmt.Errorf("%s and %s cannot be compared: %w", filepath.Base(base), filepath.Base(next), err)
	}
	p, _, err = trimFrames(p, f.maxFrames)
	return p, err
}

// source is a driver.Fetcher that gives pprof the profile it builds, whatever source pprof
// names (the server's key). The empty source URL tells pprof the profile is local.
type source func() (*profile.Profile, error)

func (s source) Fetch(string, time.Duration, time.Duration) (*profile.Profile, string, error) {
	p, err := s()
	return p, "", err
}

// noObj is pprof's object tool that opens nothing: memdoctor serve neither symbolizes nor
// disassembles, so a profile naming a binary never makes it read or run anything on it.
type noObj struct{}

var errNoObj = errors.New("memdoctor serve does not open binaries")

func (noObj) Open(file string, _, _, _ uint64, _ string) (driver.ObjFile, error) {
	return nil, fmt.Errorf("%s: %w", file, errNoObj)
}

func (noObj) Disasm(file string, _, _ uint64, _ bool) ([]driver.Inst, error) {
	return nil, fmt.Errorf("%s: %w", file, errNoObj)
}

// refused are the views of pprof's UI memdoctor serve does not serve. The source view
// shows whatever local file a profile's functions name as their source (a profile naming
// /etc/passwd would show it); the disassembly reads the binaries its mappings name; the
// config handlers write pprof's settings file in the user's home.
var refused = map[string]string{
	"/source":       "memdoctor serve does not show source files: the profile names them, and any local file it named would be shown. Open the profile with go tool pprof -http on your own machine for the source view.",
	"/disasm":       "memdoctor serve does not disassemble: the profile names the binaries. Open the profile with go tool pprof -http on your own machine.",
	"/saveconfig":   "memdoctor serve does not save pprof configurations: it writes nothing outside the session.",
	"/deleteconfig": "memdoctor serve does not save pprof configurations: it writes nothing outside the session.",
}

// refuse answers a refused view, and reports whether path is one.
func refuse(w http.ResponseWriter, path string) bool {
	msg, ok := refused[path]
	if ok {
		http.Error(w, msg, http.StatusForbidden)
	}
	return ok
}
