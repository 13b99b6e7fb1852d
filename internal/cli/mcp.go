package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memdoctor/memdoctor/internal/mcpserver"
)

var mcpCmd = &command{
	name:    "mcp",
	args:    "--root DIR [flags]",
	summary: "serve memdoctor's verdicts to an AI assistant: a Model Context Protocol server over stdio",
	help: `Mcp is a Model Context Protocol server on its standard input and output, for assistants
(Claude, Copilot, Cursor, Zed, ...) that start it as a local tool. Its tools: diagnose (a
session, a folder of profiles, a profile or a gctrace log), diff (two heap or goroutine
profiles, or SESSION_DIR@N snapshots), compare (two sessions), holders (of a core file, or
of a live process when allowed), list_sessions, and, when allowed, watch (a URL or a local
PID, for a bounded time) and fleet (a Prometheus). Each
result is the JSON the command writes (a diagnosis is memdoctor/diagnosis/v1) with a short
text. Its resources are the sessions under the --root directories: each one's text report
and diagnosis JSON, made afresh on each read.

It reads only files under the --root directories (at least one is required; symbolic
links are resolved before the check), and writes only the sessions watch records, under
--sessions. Tools that reach the network (watch of a URL, fleet) are offered only with
--allow-network, those that read another process (watch of a PID, holders of a live one) only
with --allow-attach.
One command runs at a time, each as a memdoctor process of its own, so the server stays
small however long it runs. See docs/mcp.md for each assistant's configuration.`,
	examples: []string{
		"memdoctor mcp --root ~/memdoctor-sessions --root ./profiles",
		"memdoctor mcp --root . --allow-network --max-watch 5m",
		"claude mcp add memdoctor -- memdoctor mcp --root $PWD",
	},
}

func init() { mcpCmd.run = runMCP }

func runMCP(ctx context.Context, e *env, args []string) error {
	fs := newFlags(mcpCmd, e)
	var roots stringsFlag
	fs.Var(&roots, "root", "a `DIR` whose sessions, profiles and logs the server may read (repeatable; at least one)")
	sessions := fs.String("sessions", "", "where watch records its sessions: a `DIR` under a --root (default: the first root's memdoctor-sessions)")
	network := fs.Bool("allow-network", false, "offer the tools that reach the network: watch of a URL, fleet")
	attach := fs.Bool("allow-attach", false, "offer the tools that read another process: watch of a local PID, holders of a live one")
	maxWatch := fs.Duration("max-watch", 10*time.Minute, "the longest watch a client may ask for")
	pos, err := parse(mcpCmd, e, fs, args, true)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("mcp: unexpected %q: give directories with --root DIR", pos[0])
	}
	if len(roots) == 0 {
		return usagef("mcp: want --root DIR: the directories whose sessions, profiles and logs the server may read")
	}
	if *maxWatch < 10*time.Second {
		return usagef("mcp: --max-watch %s: want at least 10s", *maxWatch)
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("mcp: cannot find memdoctor's own executable to run the tools: %w", err)
	}
	opts := mcpserver.Options{
		Roots: roots, SessionsDir: *sessions, AllowNetwork: *network, AllowAttach: *attach,
		MaxWatch: *maxWatch, Run: selfRunner(self), Version: version(), Logger: e.log,
	}
	server, err := mcpserver.New(opts)
	if err != nil {
		return usagef("mcp: %v", err)
	}
	e.log.Info(fmt.Sprintf("serving MCP on stdio; reading under %s", strings.Join(roots, ", ")))
	err = server.Run(ctx, &mcp.IOTransport{Reader: os.Stdin, Writer: nopWriteCloser{e.stdout}})
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil // the client closed the connection
	}
	return err
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// selfRunner runs memdoctor's own executable for each tool, without colours, logging only
// errors (its standard error is the text of the result). A cancelled call interrupts it, as
// Ctrl-C would: a watch stops and still diagnoses what it recorded.
func selfRunner(self string) mcpserver.Runner {
	return func(ctx context.Context, args []string) ([]byte, []byte, error) {
		cmd := exec.CommandContext(ctx, self, args...)
		cmd.Env = append(os.Environ(), "NO_COLOR=1", "MEMDOCTOR_LOG=error", "MEMDOCTOR_LOG_FORMAT=")
		if runtime.GOOS != "windows" {
			cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
		}
		cmd.WaitDelay = time.Minute
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if err != nil {
			msg := lastLine(stderr.String())
			if msg == "" {
				msg = err.Error()
			}
			return stdout.Bytes(), stderr.Bytes(), errors.New(strings.TrimPrefix(msg, "memdoctor: "))
		}
		return stdout.Bytes(), stderr.Bytes(), nil
	}
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
