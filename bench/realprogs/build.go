package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// builder builds program binaries through the module proxy into a cache directory: one
// binary per program module, version and toolchain, built once.
type builder struct {
	cache string
	log   io.Writer
}

// binary returns the cached binary of p at v, building it when it is missing, and how long the
// build took (0 when cached).
func (b *builder) binary(ctx context.Context, p *program, v version) (string, float64, error) {
	dir := filepath.Join(b.cache, cacheKey(p, v))
	bin := filepath.Join(dir, p.binName())
	if fi, err := os.Stat(bin); err == nil && fi.Mode().IsRegular() {
		return bin, 0, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", 0, err
	}
	fmt.Fprintf(b.log, "realprogs: building %s@%s (toolchain %s) into %s\n", p.pkg, v.version, toolchainName(p), dir)
	start := time.Now()
	tmp, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return "", 0, err
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, p.binName())
	switch {
	case p.local != "":
		err = b.fromLocal(ctx, p, tmp, out)
	case p.install:
		err = b.install(ctx, p, v, tmp)
	default:
		err = b.fromSource(ctx, p, v, tmp, out)
	}
	if err != nil {
		os.RemoveAll(tmp)
		os.Remove(dir) // only when empty: an unfetchable version leaves nothing behind
		return "", 0, fmt.Errorf("build %s@%s: %w", p.pkg, v.version, err)
	}
	// Rename last, so that an interrupted build never leaves a binary the cache trusts.
	if err := os.Rename(out, bin); err != nil {
		return "", 0, err
	}
	secs := time.Since(start).Seconds()
	os.WriteFile(filepath.Join(dir, "build-seconds"), fmt.Appendf(nil, "%.1f\n", secs), 0o644)
	return bin, secs, nil
}

// cacheKey names a binary's directory in the cache: a program built from local source by
// its source's digest (every version shares its binary).
func cacheKey(p *program, v version) string {
	if p.local != "" {
		return "local_" + p.name + "@" + localDigest(p)
	}
	key := strings.NewReplacer("/", "_", "@", "_").Replace(p.pkg) + "@" + v.version
	if p.toolchain != "" {
		key += "-" + p.toolchain
	}
	if !p.install {
		key += "-src" // built from a copy of the module's source, with -trimpath
	}
	return key
}

func toolchainName(p *program) string {
	if p.toolchain == "" {
		return "auto"
	}
	return p.toolchain
}

// goEnv is the environment of the go commands that build p: the module proxy is whatever the
// environment says; GOTOOLCHAIN is the program's.
func goEnv(p *program, extra ...string) []string {
	env := append(os.Environ(), "GOTOOLCHAIN="+toolchainName(p), "GOWORK=off")
	return append(env, extra...)
}

// install runs go install pkg@version with GOBIN=dir.
func (b *builder) install(ctx context.Context, p *program, v version, dir string) error {
	cmd := exec.CommandContext(ctx, "go", "install", p.pkg+"@"+v.version)
	cmd.Dir = dir // outside any module, so that nothing but pkg@version decides
	cmd.Env = goEnv(p, "GOBIN="+dir, "GOFLAGS=-buildvcs=false")
	return runQuiet(cmd)
}

// fromSource downloads the module with go mod download, copies it (the module cache is read
// only), lets the program add what the zip lacks, and builds the main package with
// GOFLAGS=-mod=mod: the route for modules that go install refuses (replace directives,
// generated files).
func (b *builder) fromSource(ctx context.Context, p *program, v version, tmp, out string) error {
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", p.module+"@"+v.version)
	cmd.Dir = tmp
	cmd.Env = goEnv(p, "GOFLAGS=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var info struct{ Dir, Error string }
	if jerr := json.Unmarshal(stdout.Bytes(), &info); jerr == nil && info.Error != "" {
		return errors.New(info.Error)
	}
	if err != nil {
		return fmt.Errorf("go mod download: %w: %s", err, lastLines(stderr.String(), 5))
	}
	if info.Dir == "" {
		return fmt.Errorf("go mod download printed no directory")
	}
	src := filepath.Join(tmp, "src")
	if err := copyTree(info.Dir, src); err != nil {
		return err
	}
	if p.prepare != nil {
		if err := p.prepare(src); err != nil {
			return fmt.Errorf("prepare source: %w", err)
		}
	}
	rel := "." + strings.TrimPrefix(p.pkg, p.module)
	// -trimpath: stacks name module paths, not the temporary copy the binary was built from.
	build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", out, rel)
	build.Dir = src
	build.Env = goEnv(p, "GOFLAGS=-mod=mod -buildvcs=false")
	return runQuiet(build)
}

// fromLocal copies a program's source from testdata/libs and builds it with
// GOFLAGS=-mod=mod: its dependencies come through the module proxy, at the versions its go.mod
// and go.sum pin.
func (b *builder) fromLocal(ctx context.Context, p *program, tmp, out string) error {
	src := filepath.Join(tmp, "src")
	if err := copyTree(localDir(p), src); err != nil {
		return err
	}
	build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", out, ".")
	build.Dir = src
	build.Env = goEnv(p, "GOFLAGS=-mod=mod -buildvcs=false")
	return runQuiet(build)
}

// localDir is where a program built from local source has it.
func localDir(p *program) string {
	root, err := repoRoot()
	if err != nil {
		return filepath.Join("testdata", "libs", p.local)
	}
	return filepath.Join(root, "bench", "realprogs", "testdata", "libs", p.local)
}

// localDigest is a short digest of a local program's files: an edit builds it again.
func localDigest(p *program) string {
	h := sha256.New()
	_ = filepath.WalkDir(localDir(p), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %d\n", d.Name(), len(b))
		h.Write(b)
		return nil
	})
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// runQuiet runs cmd and returns its error with the last lines of its output.
func runQuiet(cmd *exec.Cmd) error {
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w: %s", strings.Join(cmd.Args[:2], " "), err, lastLines(buf.String(), 8))
	}
	return nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// copyTree copies the regular files and directories under src to dst, writable by the owner.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		return copyFile(path, target, fi.Mode().Perm()|0o600)
	})
}

func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// memdoctorBinary is the memdoctor binary given (-memdoctor), or one built from this
// repository into a temporary directory that cleanup removes.
func memdoctorBinary(ctx context.Context, given string) (bin string, cleanup func(), err error) {
	if given != "" {
		return given, func() {}, nil
	}
	tmp, err := os.MkdirTemp("", "realprogs-memdoctor")
	if err != nil {
		return "", nil, err
	}
	cleanup = func() { os.RemoveAll(tmp) }
	if bin, err = buildMemdoctor(ctx, tmp); err != nil {
		cleanup()
		return "", nil, err
	}
	return bin, cleanup, nil
}

// buildMemdoctor builds ./cmd/memdoctor of the repository around the working directory into
// dir.
func buildMemdoctor(ctx context.Context, dir string) (string, error) {
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "memdoctor")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/memdoctor")
	cmd.Dir = root
	if err := runQuiet(cmd); err != nil {
		return "", err
	}
	return bin, nil
}

// repoRoot finds the memdoctor module's directory from the working directory up.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(b, []byte("module github.com/memdoctor/memdoctor\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the memdoctor repository: run from it, or pass -memdoctor BINARY")
		}
		dir = parent
	}
}

func buildTime(secs float64) string {
	if secs == 0 {
		return "cached"
	}
	return fmt.Sprintf("built in %.0fs", secs)
}
