package modproxy

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Dir reads the files of the module rooted at dir, a directory of a git working tree: those
// git tracks or would track (not ignored), as they are on disk now.
func Dir(dir string) ([]File, error) {
	out, err := git(dir, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", ".")
	if err != nil {
		return nil, err
	}
	var files []File
	for _, name := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		if name == "" {
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		st, err := os.Lstat(p)
		if errors.Is(err, os.ErrNotExist) { // deleted, not yet committed
			continue
		}
		if err != nil {
			return nil, err
		}
		if !st.Mode().IsRegular() {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		files = append(files, File{Path: name, Data: data})
	}
	return keep(files), nil
}

// Commit reads the files of the module rooted at subdir ("agent", or "." for the repository's
// root) as they were at commit, and the commit's time: what proxy.golang.org serves for the
// pseudo-version PseudoVersion(t, commit).
func Commit(repo, commit, subdir string) (files []File, t time.Time, err error) {
	hash, err := git(repo, "rev-parse", "--verify", commit+"^{commit}")
	if err != nil {
		return nil, time.Time{}, err
	}
	commit = strings.TrimSpace(string(hash))
	ct, err := git(repo, "show", "-s", "--format=%ct", commit)
	if err != nil {
		return nil, time.Time{}, err
	}
	sec, err := strconv.ParseInt(strings.TrimSpace(string(ct)), 10, 64)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("commit %s: time %q: %w", commit, ct, err)
	}
	prefix := strings.Trim(filepath.ToSlash(subdir), "/")
	args := []string{"archive", "--format=tar", commit}
	if prefix != "" && prefix != "." {
		args = append(args, prefix)
		prefix += "/"
	} else {
		prefix = ""
	}
	out, err := git(repo, args...)
	if err != nil {
		return nil, time.Time{}, err
	}
	tr := tar.NewReader(bytes.NewReader(out))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, time.Time{}, fmt.Errorf("git archive %s: %w", commit, err)
		}
		if h.Typeflag != tar.TypeReg || !strings.HasPrefix(h.Name, prefix) {
			continue // directories, symbolic links, the global header
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, time.Time{}, err
		}
		files = append(files, File{Path: strings.TrimPrefix(h.Name, prefix), Data: data})
	}
	return keep(files), time.Unix(sec, 0).UTC(), nil
}

// Hash returns the full hash of the commit that rev names.
func Hash(repo, rev string) (string, error) {
	out, err := git(repo, "rev-parse", "--verify", rev+"^{commit}")
	return strings.TrimSpace(string(out)), err
}

func git(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s in %s: %w: %s", strings.Join(args, " "), dir, err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
