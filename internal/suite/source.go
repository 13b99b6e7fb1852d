package suite

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// leaktestModule is the module the harness comes from.
const leaktestModule = "github.com/memdoctor/memdoctor/leaktest"

// leaktestSource is leaktest's module as this memdoctor was built with it: its go.mod and the
// Go files of leaktest, leaktest/trend and leaktest/harness, tests left out, in a text archive
// (Pack's). memdoctor test writes it into its temporary directory and builds the tests with it,
// so that it needs neither the network nor a module cache, and the harness is always the one
// this memdoctor reads. go generate writes it again (internal/dev/leaktestcopy);
// TestLeaktestCopyInSync keeps it equal to the working tree's.
//
//go:generate go run ../dev/leaktestcopy
//go:embed leaktest.txtar
var leaktestSource []byte

// leaktestGo is the go line of the copy's go.mod: the oldest Go its code compiles as, so that a
// module with an older go line is built at the least newer language version (the workspace's
// go line is the newest of its modules').
const leaktestGo = "1.22"

// archiveMark starts each file of the archive: "-- path --".
const archiveMark = "-- "

// Pack is the text archive of leaktest's module in dir: go.mod (its go line leaktestGo) and the
// Go files (not the tests) of the packages memdoctor test builds.
func Pack(dir string) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%sgo.mod --\nmodule %s\n\ngo %s\n", archiveMark, leaktestModule, leaktestGo)
	for _, sub := range []string{".", "trend", "harness"} {
		entries, err := os.ReadDir(filepath.Join(dir, sub))
		if err != nil {
			return nil, err
		}
		var names []string
		for _, e := range entries {
			if n := e.Name(); e.Type().IsRegular() && strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
				names = append(names, n)
			}
		}
		slices.Sort(names)
		for _, n := range names {
			data, err := os.ReadFile(filepath.Join(dir, sub, n))
			if err != nil {
				return nil, err
			}
			if bytes.Contains(data, []byte("\n"+archiveMark)) || bytes.HasPrefix(data, []byte(archiveMark)) {
				return nil, fmt.Errorf("%s: a line starts with %q, which the archive cannot hold", n, archiveMark)
			}
			if len(data) > 0 && data[len(data)-1] != '\n' {
				data = append(data, '\n')
			}
			fmt.Fprintf(&b, "%s%s --\n", archiveMark, filepath.ToSlash(filepath.Join(sub, n)))
			b.Write(data)
		}
	}
	return b.Bytes(), nil
}

// leaktestDir returns the directory of memdoctor's copy of leaktest, written once: in the
// user's cache directory, named by the copy's hash, so that the go command's build cache
// knows its packages from one run to the next (a new directory each time would rebuild them);
// in tmp when the cache directory cannot be written.
func leaktestDir(tmp string) (string, error) {
	sum := sha256.Sum256(leaktestSource)
	name := "leaktest-" + hex.EncodeToString(sum[:8])
	cache, err := os.UserCacheDir()
	if err == nil {
		dir := filepath.Join(cache, "memdoctor", name)
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		if err := os.MkdirAll(filepath.Dir(dir), 0o700); err == nil {
			if work, err := os.MkdirTemp(filepath.Dir(dir), ".writing-"); err == nil {
				err := unpack(leaktestSource, work)
				if err == nil {
					err = os.Rename(work, dir)
				}
				if err == nil || os.IsExist(err) {
					os.RemoveAll(work)
					if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
						return dir, nil
					}
				}
				os.RemoveAll(work)
			}
		}
	}
	dir := filepath.Join(tmp, "leaktest")
	return dir, unpack(leaktestSource, dir)
}

// unpack writes an archive's files under dir.
func unpack(archive []byte, dir string) error {
	text := string(archive)
	for text != "" {
		head, rest, ok := strings.Cut(text, "\n")
		name, isMark := strings.CutSuffix(strings.TrimPrefix(head, archiveMark), " --")
		if !ok || !strings.HasPrefix(head, archiveMark) || !isMark || !fs.ValidPath(name) {
			return fmt.Errorf("leaktest's embedded source is damaged at %q", head)
		}
		body := rest
		if i := strings.Index(rest, "\n"+archiveMark); i >= 0 {
			body, rest = rest[:i+1], rest[i+1:]
		} else {
			rest = ""
		}
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			return err
		}
		text = rest
	}
	return nil
}
