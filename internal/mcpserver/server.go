// Package mcpserver serves memdoctor's verdicts to assistants over the Model Context Protocol
// (`memdoctor mcp`): tools that diagnose what memdoctor reads (a session, a folder of
// profiles, a profile, a gctrace log), diff two profiles, compare two sessions, and, when the
// server is started to allow it, watch a service or triage a fleet; resources that list the
// sessions under its directories and serve their reports.
//
// Each tool runs the memdoctor command itself (Options.Run), so its result is exactly what
// the command gives: the JSON it writes (for a diagnosis, memdoctor/diagnosis/v1) as the
// structured content, and a short text. The server reads only paths under the directories it
// was given (Options.Roots), symbolic links resolved; tools that reach the network or a
// process are not offered unless allowed.
package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Runner runs memdoctor with args (without the program's name) and returns what it wrote to
// its standard output and error. err is non-nil when it failed; its message is then the
// command's own one-line error.
type Runner func(ctx context.Context, args []string) (stdout, stderr []byte, err error)

// Options configure the server.
type Options struct {
	// Roots are the directories whose sessions, profiles and logs the tools may read: every
	// path a client gives must be under one, after its symbolic links are resolved. Relative
	// paths are taken from the first.
	Roots []string
	// SessionsDir is where the watch tool writes its sessions (default: the first root's
	// memdoctor-sessions); it must be under a root, so that they can be read back.
	SessionsDir string
	// AllowNetwork offers the tools that reach the network: watch of a URL, fleet.
	AllowNetwork bool
	// AllowAttach offers the tools that read another process: watch of a PID (its /proc and
	// the endpoints it serves) and holders of a live PID (it stops the process while it
	// copies what its heap's walk reads). holders of a core file under a root needs no permission.
	AllowAttach bool
	// MaxWatch bounds a watch (default 10 minutes).
	MaxWatch time.Duration
	// Run runs the memdoctor command (required).
	Run Runner
	// Version is memdoctor's version, for the server's identity.
	Version string
	// Logger logs what the server does (nil: nothing).
	Logger *slog.Logger
}

// server is the state the tools share.
type server struct {
	opts     Options
	roots    roots
	sessions string
	// busy lets one command run at a time: each can take hundreds of MiB on a large session,
	// and memdoctor's own memory stays bounded however many calls arrive.
	busy sync.Mutex
	mcp  *mcp.Server
}

// New returns the MCP server. It fails when a root is not a directory or SessionsDir is not
// under a root.
func New(opts Options) (*mcp.Server, error) {
	if opts.Run == nil {
		return nil, errors.New("mcpserver: no Runner")
	}
	r, err := newRoots(opts.Roots)
	if err != nil {
		return nil, err
	}
	if opts.MaxWatch <= 0 {
		opts.MaxWatch = 10 * time.Minute
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &server{opts: opts, roots: r}
	s.sessions = opts.SessionsDir
	if s.sessions == "" {
		s.sessions = filepath.Join(r[0], "memdoctor-sessions")
	}
	if abs, err := filepath.Abs(s.sessions); err == nil {
		s.sessions = abs
	}
	if !r.contains(s.realOrParent(s.sessions)) {
		return nil, fmt.Errorf("--sessions %s: not under a --root (%s): the sessions watch writes must be readable by the server", s.sessions, r)
	}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "memdoctor", Title: "memdoctor", Version: opts.Version},
		&mcp.ServerOptions{Instructions: s.instructions(), Logger: quiet(opts.Logger), Capabilities: &mcp.ServerCapabilities{}})
	s.addTools()
	s.addResources()
	return s.mcp, nil
}

// quiet passes on the SDK's warnings and errors, not its account of each connection.
func quiet(l *slog.Logger) *slog.Logger {
	return slog.New(levelHandler{l.Handler(), slog.LevelWarn})
}

type levelHandler struct {
	slog.Handler
	min slog.Level
}

func (h levelHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

// realOrParent resolves the symbolic links of p, or of its nearest existing parent.
func (s *server) realOrParent(p string) string {
	for dir, rest := p, ""; ; {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(real, rest)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return p
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}

// instructions tell the client what the server does and what it may read.
func (s *server) instructions() string {
	var b strings.Builder
	b.WriteString("memdoctor diagnoses why a Go service uses the memory it uses: heap or goroutine leaks, " +
		"memory the runtime retains, transient spikes, GC overhead, allocation hotspots, memory outside Go, " +
		"with the culprit code, the numbers that prove it and the fix. Start with the diagnose tool on a " +
		"session directory, a folder of heap/goroutine profiles, a profile or a gctrace log; diff two heap " +
		"profiles to see what grew; compare two sessions to prove a fix. ")
	fmt.Fprintf(&b, "This server reads only under %s; sessions it records go to %s. ", s.roots, s.sessions)
	if !s.opts.AllowNetwork {
		b.WriteString("Watching a URL and fleet triage are off (start memdoctor mcp with --allow-network). ")
	}
	if !s.opts.AllowAttach {
		b.WriteString("Watching a local PID and reading a live process's holders are off (start memdoctor mcp with --allow-attach); holders of a core file under the roots works.")
	}
	return strings.TrimSpace(b.String())
}

// run runs the command, one at a time, and returns its standard output and error.
func (s *server) run(ctx context.Context, args ...string) ([]byte, []byte, error) {
	s.busy.Lock()
	defer s.busy.Unlock()
	start := time.Now()
	stdout, stderr, err := s.opts.Run(ctx, args)
	s.opts.Logger.Info("memdoctor "+strings.Join(args, " "), "seconds", time.Since(start).Seconds(), "err", err)
	return stdout, stderr, err
}
