package suite

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// workspace is the go.work memdoctor test builds the tests in: the user's module (or the user's
// workspace, every module of it) and memdoctor's copy of leaktest. Through GOWORK, the tests
// import the harness without a line of the user's go.mod or go.sum changing; each module keeps
// its own language version, go.sum and replace directives.
type workspace struct {
	Go, Toolchain string
	Godebug       [][2]string
	Use           []string // absolute directories
	Replace       []workReplace
	// sum is the user's go.work.sum, copied beside the go.work.
	sum string
	// raised is set when the user's go line was older than leaktest's: the workspace's go
	// line (and so its GODEBUG defaults) is leaktest's.
	raised string
}

type workReplace struct {
	Old, New workModule
}

type workModule struct {
	Path, Version string
}

// goModJSON is what go mod edit -json and go work edit -json print that memdoctor reads.
type goModJSON struct {
	Module struct {
		Path string
	}
	Go        string
	Toolchain string
	Godebug   []struct{ Key, Value string }
	Use       []struct{ DiskPath string }
	Replace   []workReplace
}

// errNoModule is memdoctor test run outside a module.
var errNoModule = errors.New("not in a Go module: run memdoctor test in a module's directory (where go test works), or in a workspace")

// newWorkspace reads the user's module or workspace, as the go command sees it from dir.
func newWorkspace(ctx context.Context, dir string, env []string) (*workspace, error) {
	vars, err := goEnvJSON(ctx, dir, env, "GOMOD", "GOWORK")
	if err != nil {
		return nil, err
	}
	w := &workspace{}
	var js goModJSON
	switch gowork := vars["GOWORK"]; {
	case gowork != "" && gowork != "off":
		out, err := goCmd(ctx, dir, env, "work", "edit", "-json", gowork)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(out, &js); err != nil {
			return nil, fmt.Errorf("go work edit -json %s: %w", gowork, err)
		}
		base := filepath.Dir(gowork)
		for _, u := range js.Use {
			d := absFrom(base, u.DiskPath)
			if modulePath(filepath.Join(d, "go.mod")) == leaktestModule {
				continue // memdoctor's copy stands for it
			}
			w.Use = append(w.Use, d)
		}
		for _, r := range js.Replace {
			if r.Old.Path == leaktestModule {
				continue
			}
			if r.New.Version == "" {
				r.New.Path = absFrom(base, r.New.Path)
			}
			w.Replace = append(w.Replace, r)
		}
		w.sum = strings.TrimSuffix(gowork, ".work") + ".work.sum"
	case vars["GOMOD"] != "" && vars["GOMOD"] != os.DevNull:
		out, err := goCmd(ctx, dir, env, "mod", "edit", "-json", vars["GOMOD"])
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(out, &js); err != nil {
			return nil, fmt.Errorf("go mod edit -json %s: %w", vars["GOMOD"], err)
		}
		if js.Module.Path == leaktestModule {
			return nil, fmt.Errorf("%s is leaktest's own module, which memdoctor test builds its harness from: test it with go test", filepath.Dir(vars["GOMOD"]))
		}
		w.Use = []string{filepath.Dir(vars["GOMOD"])}
	default:
		return nil, errNoModule
	}
	w.Go, w.Toolchain = js.Go, js.Toolchain
	if w.Go == "" {
		w.Go = "1.16" // what the go command assumes of a go.mod without a go line
	}
	if compareGo(w.Go, leaktestGo) < 0 {
		w.raised, w.Go = w.Go, leaktestGo
	}
	for _, g := range js.Godebug {
		w.Godebug = append(w.Godebug, [2]string{g.Key, g.Value})
	}
	return w, nil
}

// absFrom makes a path of a go.work or go.mod absolute, from the directory of the file.
func absFrom(base, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(base, p)
}

// modulePath reads the module path of a go.mod, or "".
func modulePath(gomod string) string {
	f, err := os.Open(gomod)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if rest, ok := strings.CutPrefix(line, "module"); ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
			rest, _, _ = strings.Cut(strings.TrimSpace(rest), "//")
			rest = strings.TrimSpace(rest)
			if p, err := strconv.Unquote(rest); err == nil {
				return p
			}
			return rest
		}
	}
	return ""
}

// compareGo compares two go lines' versions ("1.22", "1.22.3", "1.23rc1") by their numbers.
func compareGo(a, b string) int {
	pa, pb := goVersionParts(a), goVersionParts(b)
	for i := range max(len(pa), len(pb)) {
		var x, y int
		if i < len(pa) {
			x = pa[i]
		}
		if i < len(pb) {
			y = pb[i]
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

func goVersionParts(v string) []int {
	var out []int
	for _, p := range strings.Split(v, ".") {
		end := 0
		for end < len(p) && p[end] >= '0' && p[end] <= '9' {
			end++
		}
		n, _ := strconv.Atoi(p[:end])
		out = append(out, n)
	}
	return out
}

// write writes the go.work (and go.work.sum) into dir, with the copy of leaktest at leaktest,
// and returns the go.work's path.
func (w *workspace) write(dir, leaktest string) (string, error) {
	var b bytes.Buffer
	b.WriteString("// Written by memdoctor test: the module under test and memdoctor's copy of leaktest.\n\n")
	fmt.Fprintf(&b, "go %s\n", w.Go)
	if w.Toolchain != "" {
		fmt.Fprintf(&b, "\ntoolchain %s\n", w.Toolchain)
	}
	if len(w.Godebug) > 0 {
		b.WriteString("\ngodebug (\n")
		for _, g := range w.Godebug {
			fmt.Fprintf(&b, "\t%s=%s\n", g[0], g[1])
		}
		b.WriteString(")\n")
	}
	b.WriteString("\nuse (\n")
	for _, u := range append(w.Use[:len(w.Use):len(w.Use)], leaktest) {
		fmt.Fprintf(&b, "\t%s\n", strconv.Quote(u))
	}
	b.WriteString(")\n")
	for _, r := range w.Replace {
		fmt.Fprintf(&b, "\nreplace %s => %s\n", r.Old.text(), r.New.text())
	}
	path := filepath.Join(dir, "go.work")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		return "", err
	}
	if w.sum != "" {
		if data, err := os.ReadFile(w.sum); err == nil {
			if err := os.WriteFile(path+".sum", data, 0o600); err != nil {
				return "", err
			}
		}
	}
	return path, nil
}

func (m workModule) text() string {
	if m.Version == "" {
		return strconv.Quote(m.Path)
	}
	return strconv.Quote(m.Path) + " " + m.Version
}
