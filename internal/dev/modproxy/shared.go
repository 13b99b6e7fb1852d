package modproxy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// SharedEnv is Env with this machine's own module cache in place of an empty one. The
// dependencies' sources are then where every other build here found them, and their compiled
// packages come from the build cache: the build cache keys a package outside GOROOT by its
// directory, so a build from an empty module cache compiles every dependency again (three of
// TestInstallLatest's minutes on two cores). What the proxy directory dir publishes is fetched
// as from nowhere else, and the go.sum lines still verify every module the build uses.
//
// clean removes from the cache each version of dir's modules that the cache did not hold
// before: call it when the commands are done (and publish each run's root module under a
// version of its own, so that a cache never holds an older tree under the version a test asks
// for).
func SharedEnv(dir string) (env []string, clean func() error, err error) {
	modcache, err := machineModCache()
	if err != nil {
		return nil, nil, err
	}
	published, err := Published(dir)
	if err != nil {
		return nil, nil, err
	}
	var fresh []cached
	for _, p := range published {
		c, err := cachedVersion(modcache, p[0], p[1])
		if err != nil {
			return nil, nil, err
		}
		if _, err := os.Stat(c.info()); errors.Is(err, fs.ErrNotExist) {
			fresh = append(fresh, c)
		}
	}
	return proxyEnv(dir, modcache, modcache), func() error {
		var errs []error
		for _, c := range fresh {
			errs = append(errs, c.remove())
		}
		return errors.Join(errs...)
	}, nil
}

// Published lists the module versions the proxy directory dir holds: each module's path as
// the proxy escapes it (upper-case letters as '!' and the lower-case one), and the version.
func Published(dir string) ([][2]string, error) {
	var out [][2]string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".info") || filepath.Base(filepath.Dir(p)) != "@v" {
			return err
		}
		rel, err := filepath.Rel(dir, filepath.Dir(filepath.Dir(p)))
		if err != nil {
			return err
		}
		out = append(out, [2]string{filepath.ToSlash(rel), strings.TrimSuffix(d.Name(), ".info")})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("module proxy %s: %w", dir, err)
	}
	return out, nil
}

// cached is where a module cache keeps one version of a module.
type cached struct {
	download string // cache/download/<escaped path>/@v
	extract  string // <escaped path>@<version>
	version  string
}

// cachedVersion is where modcache keeps a version of the module whose escaped path is esc.
func cachedVersion(modcache, esc, version string) (cached, error) {
	if esc == "" || strings.Contains(esc, "..") || filepath.IsAbs(esc) || version == "" || strings.ContainsAny(version, `/\`) {
		return cached{}, fmt.Errorf("module %q version %q: not a module version of a proxy", esc, version)
	}
	return cached{
		download: filepath.Join(modcache, "cache", "download", filepath.FromSlash(esc), "@v"),
		extract:  filepath.Join(modcache, filepath.FromSlash(esc)+"@"+version),
		version:  version,
	}, nil
}

func (c cached) info() string { return filepath.Join(c.download, c.version+".info") }

// remove deletes the version's files, its extracted tree and its line of the version list.
func (c cached) remove() error {
	var errs []error
	for _, ext := range []string{".info", ".mod", ".zip", ".ziphash", ".lock", ".partial"} {
		if err := os.Remove(filepath.Join(c.download, c.version+ext)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	// The go command makes an extracted tree read-only unless -modcacherw, which Env sets;
	// make it writable anyway, in case a command ran without.
	filepath.WalkDir(c.extract, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o755)
		}
		return nil
	})
	errs = append(errs, os.RemoveAll(c.extract))
	list := filepath.Join(c.download, "list")
	if b, err := os.ReadFile(list); err == nil {
		lines := slices.DeleteFunc(strings.Split(string(b), "\n"), func(l string) bool { return strings.TrimSpace(l) == c.version })
		errs = append(errs, os.WriteFile(list, []byte(strings.Join(lines, "\n")), 0o644))
	}
	return errors.Join(errs...)
}
