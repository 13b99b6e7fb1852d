package suite

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"

	"github.com/memdoctor/memdoctor/internal/recorder"
)

// goCmd runs the go command in dir with env and returns its stdout; an error carries the end
// of its stderr, which is go's own message.
func goCmd(ctx context.Context, dir string, env []string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir, cmd.Env = dir, env
	var stdout bytes.Buffer
	stderr := newTail(maxGoMessage)
	cmd.Stdout, cmd.Stderr = &limitedWriter{w: &stdout, n: maxGoOutput}, stderr
	// Interrupted, the go command is killed with what it started (the compiler, the linker),
	// so that nothing writes into memdoctor's temporary directory once it is removed.
	cmd.Cancel = func() error {
		recorder.KillGroup(cmd.Process.Pid)
		return nil
	}
	err := recorder.StartGroup(cmd)
	if err == nil {
		err = cmd.Wait()
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return nil, &GoError{Args: args, Message: msg}
	}
	return stdout.Bytes(), nil
}

// The most memdoctor reads of what a go command prints: its JSON (go list of a large module
// is a few megabytes), and the end of its message.
const (
	maxGoOutput  = 256 << 20
	maxGoMessage = 64 << 10
)

// GoError is a go command that failed, with its message as go printed it.
type GoError struct {
	Args    []string
	Message string
}

func (e *GoError) Error() string {
	return fmt.Sprintf("go %s: %s", strings.Join(e.Args, " "), e.Message)
}

// limitedWriter keeps the first n bytes written to it and fails past them.
type limitedWriter struct {
	w *bytes.Buffer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.w.Len()+len(p) > l.n {
		return 0, fmt.Errorf("the go command printed more than %d MiB", l.n>>20)
	}
	return l.w.Write(p)
}

// goEnv is the environment of the go commands and test binaries memdoctor test runs: the
// user's, with the workspace memdoctor wrote and its temporary directories, and without the
// GOFLAGS a workspace refuses (-mod=mod, -modfile).
func goEnv(base []string, work, tmp string) []string {
	env := make([]string, 0, len(base)+3)
	for _, kv := range base {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "GOWORK", "GOTMPDIR":
			continue
		case "GOFLAGS":
			var keep []string
			for _, f := range strings.Fields(v) {
				if !strings.HasPrefix(f, "-mod=") && !strings.HasPrefix(f, "-modfile=") && !strings.HasPrefix(f, "--mod=") && !strings.HasPrefix(f, "--modfile=") {
					keep = append(keep, f)
				}
			}
			kv = "GOFLAGS=" + strings.Join(keep, " ")
		}
		env = append(env, kv)
	}
	if work != "" {
		env = append(env, "GOWORK="+work)
	}
	return append(env, "GOTMPDIR="+tmp)
}

// goEnvJSON reads go env's variables, as JSON.
func goEnvJSON(ctx context.Context, dir string, env []string, names ...string) (map[string]string, error) {
	out, err := goCmd(ctx, dir, env, append([]string{"env", "-json"}, names...)...)
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	if err := json.Unmarshal(out, &m); err != nil {
		return nil, fmt.Errorf("go env -json: %w", err)
	}
	return m, nil
}
