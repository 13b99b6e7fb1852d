package cli

import (
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"
)

// demoExecutable is the executable the demo runs its example with: this one, unless it has no
// DWARF (go run leaves it out, and reading who holds the leak names the variables from it):
// then the same command built again with it, into dir (go build in the module go run built
// from, or go install of the same version). When that cannot be done it says why and returns
// exe: the heap-leak finding then says why nothing was read.
func demoExecutable(ctx context.Context, e *env, exe, dir string) string {
	if hasDWARF(exe) {
		return exe
	}
	bi, ok := debug.ReadBuildInfo()
	gobin, err := exec.LookPath("go")
	if !ok || bi.Path == "" || err != nil {
		e.log.Warn("demo: this binary has no DWARF (go run leaves it out) and no go command to build one with: who holds the leak cannot be read (go build ./cmd/memdoctor, then run ./memdoctor demo)")
		return exe
	}
	e.log.Info("demo: this binary has no DWARF (go run leaves it out), which reading who holds the leak needs: building the example's binary with it (go build, once)")
	out := filepath.Join(dir, "memdoctor")
	var cmd *exec.Cmd
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		cmd = exec.CommandContext(ctx, gobin, "install", bi.Path+"@"+v)
		cmd.Env = append(os.Environ(), "GOBIN="+dir)
	} else {
		cmd = exec.CommandContext(ctx, gobin, "build", "-o", out, bi.Path)
	}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	why := ""
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		why = fmt.Sprintf("%s: %v: %s", strings.Join(cmd.Args, " "), err, msg)
	} else if !hasDWARF(out) {
		why = "the build has no DWARF either (-ldflags=-s or -w in GOFLAGS?)"
	}
	if why != "" {
		e.log.Warn("demo: could not build a binary with DWARF (" + why + "): who holds the leak cannot be read (go build ./cmd/memdoctor, then run ./memdoctor demo)")
		return exe
	}
	return out
}

// hasDWARF reports whether an executable carries DWARF debug information (false when it
// cannot be read as ELF: the demo needs Linux anyway).
func hasDWARF(path string) bool {
	f, err := elf.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	return f.Section(".debug_info") != nil || f.Section(".zdebug_info") != nil
}
