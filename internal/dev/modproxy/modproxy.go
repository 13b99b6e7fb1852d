// Package modproxy publishes this repository's modules into a directory laid out as a module
// proxy (GOPROXY=file://DIR), so that tests and the release procedure can do offline what
// `go get` and `go install ...@latest` do against proxy.golang.org: the agent's module as a
// service would fetch it, the command as a user would install it.
//
// A module's files are what the go command would put in its zip: the files under the module's
// directory, without the directories that hold a go.mod of their own (nested modules) and
// without symbolic links, read from the working tree (Dir) or from a commit (Commit).
package modproxy

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode"
)

// File is one file of a module: its path relative to the module's root, with slashes, and
// its contents.
type File struct {
	Path string
	Data []byte
}

// Write publishes files as version of the module modPath into the proxy directory dir: the
// version's .info, .mod and .zip, and its line in @v/list (a pseudo-version is not listed,
// as a proxy lists only tags). The module's go.mod must be among the files.
func Write(dir, modPath, version string, t time.Time, files []File) error {
	esc, err := escape(modPath)
	if err != nil {
		return err
	}
	var gomod []byte
	for _, f := range files {
		if f.Path == "go.mod" {
			gomod = f.Data
		}
	}
	if gomod == nil {
		return fmt.Errorf("module %s: no go.mod among its %d files", modPath, len(files))
	}
	vdir := filepath.Join(dir, filepath.FromSlash(esc), "@v")
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		return err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, t.UTC()})
	if err != nil {
		return err
	}
	zipData, err := zipModule(modPath, version, files)
	if err != nil {
		return err
	}
	for ext, data := range map[string][]byte{".info": info, ".mod": gomod, ".zip": zipData} {
		if err := os.WriteFile(filepath.Join(vdir, version+ext), data, 0o644); err != nil {
			return err
		}
	}
	if IsPseudoVersion(version) {
		return nil
	}
	list, err := os.OpenFile(filepath.Join(vdir, "list"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(list, version)
	return errors.Join(err, list.Close())
}

// zipModule is the module zip the go command expects: every file under "path@version/".
func zipModule(modPath, version string, files []File) ([]byte, error) {
	sorted := append([]File(nil), files...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range sorted {
		w, err := zw.Create(modPath + "@" + version + "/" + f.Path)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(f.Data); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// escape is the module path as the proxy protocol spells it: each capital letter as "!" and
// its lower case.
func escape(modPath string) (string, error) {
	var b strings.Builder
	for _, r := range modPath {
		switch {
		case r == '!' || r >= unicode.MaxASCII:
			return "", fmt.Errorf("module path %q: not a path this package publishes", modPath)
		case unicode.IsUpper(r):
			b.WriteByte('!')
			b.WriteRune(unicode.ToLower(r))
		default:
			b.WriteRune(r)
		}
	}
	return b.String(), nil
}

// keep drops what a module zip leaves out: the files of nested modules (under a directory,
// other than the root, that holds a go.mod) and empty paths.
func keep(files []File) []File {
	var nested []string
	for _, f := range files {
		if dir := path.Dir(f.Path); path.Base(f.Path) == "go.mod" && dir != "." {
			nested = append(nested, dir+"/")
		}
	}
	out := files[:0]
next:
	for _, f := range files {
		for _, n := range nested {
			if strings.HasPrefix(f.Path, n) {
				continue next
			}
		}
		out = append(out, f)
	}
	return out
}
