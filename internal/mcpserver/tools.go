package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DiagnoseInput are the arguments of the diagnose tool.
type DiagnoseInput struct {
	Path         string `json:"path" jsonschema:"a memdoctor session directory, a folder of heap/goroutine profiles, a profile file or a gctrace log; absolute, or relative to the server's first root"`
	MemoryBudget string `json:"memory_budget,omitempty" jsonschema:"the memory the service may use, e.g. 512MiB or 2GiB (default: the session's, else unknown)"`
	Module       string `json:"module,omitempty" jsonschema:"the program's main module path (e.g. github.com/acme/svc), for profiles and logs: its frames are the program's own code"`
}

// DiffInput are the arguments of the diff tool.
type DiffInput struct {
	Old  string `json:"old" jsonschema:"the older heap or goroutine profile, or SESSION_DIR@N: the session's N-th heap snapshot (negative N counts from the end)"`
	New  string `json:"new" jsonschema:"the newer profile of the same kind, or SESSION_DIR@N"`
	Type string `json:"type,omitempty" jsonschema:"for heap profiles: inuse_space (default: what is still held), alloc_space (what was allocated between them), inuse_objects or alloc_objects"`
	Top  int    `json:"top,omitempty" jsonschema:"how many functions, lines or sites to list (default 10)"`
}

// CompareInput are the arguments of the compare tool.
type CompareInput struct {
	Old string `json:"old" jsonschema:"the session directory before the change (the baseline)"`
	New string `json:"new" jsonschema:"the session directory after the change"`
}

// WatchInput are the arguments of the watch tool.
type WatchInput struct {
	Target          string `json:"target" jsonschema:"the service's URL (its net/http/pprof or memdoctor agent endpoint, e.g. http://127.0.0.1:6060) or the PID of a local Go process"`
	Seconds         int    `json:"seconds,omitempty" jsonschema:"how long to watch (default 60)"`
	IntervalSeconds int    `json:"interval_seconds,omitempty" jsonschema:"time between profile snapshots (default 10)"`
	MemoryBudget    string `json:"memory_budget,omitempty" jsonschema:"the memory the service may use, e.g. 2GiB (default: its cgroup limit, else unknown)"`
}

// FleetInput are the arguments of the fleet tool.
type FleetInput struct {
	Prometheus string `json:"prometheus" jsonschema:"the base URL of a Prometheus-compatible HTTP API (Prometheus, Thanos, Mimir, VictoriaMetrics)"`
	Selector   string `json:"selector,omitempty" jsonschema:"label matchers that narrow the targets, e.g. job=\"api\",env=\"prod\""`
	Window     string `json:"window,omitempty" jsonschema:"how far back to judge, e.g. 1h or 6h (default 1h)"`
}

// HoldersInput are the arguments of the holders tool: a live process, or a core file and the
// executable that made it.
type HoldersInput struct {
	PID        int      `json:"pid,omitempty" jsonschema:"a live local Go process (needs the server's --allow-attach; it is stopped while what its heap's walk reads is copied, at most 1s by default)"`
	Core       string   `json:"core,omitempty" jsonschema:"a core file (gcore PID, or the kernel's) under the server's roots, instead of a PID"`
	Executable string   `json:"executable,omitempty" jsonschema:"with core: the executable that made it"`
	Sites      []string `json:"sites,omitempty" jsonschema:"culprit functions whose objects' holders to show (e.g. a heap-leak finding's culprits); default: the sites holding the most"`
	Top        int      `json:"top,omitempty" jsonschema:"without sites: how many allocation sites to show (default 5)"`
}

// ListSessionsInput are the arguments of the list_sessions tool (none).
type ListSessionsInput struct{}

// maxTextLines bounds the text of a tool's result (the JSON holds everything).
const maxTextLines = 80

func (s *server) addTools() {
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)}
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "diagnose", Title: "Diagnose memory",
		Description: "Diagnose why a Go program uses the memory it uses, from what memdoctor reads: a session directory, a folder of profiles, a profile or a gctrace log. " +
			"Returns the diagnosis (JSON schema memdoctor/diagnosis/v1: findings with severity, confidence, culprit code, evidence and advice) and a short text.",
		Annotations: readOnly}, s.diagnose)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "diff", Title: "Diff two profiles",
		Description: "What grew and what shrank between two heap or goroutine profiles, attributed to the program's own code.",
		Annotations: readOnly}, s.diff)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "compare", Title: "Compare two sessions",
		Description: "Prove a fix: two sessions compared metric by metric with a significance test, their findings (resolved, new, persisting) and their heaps.",
		Annotations: readOnly}, s.compare)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "list_sessions", Title: "List sessions",
		Description: "The memdoctor sessions under the server's directories, with their target, mode, status and time.",
		Annotations: readOnly}, s.listSessions)
	if s.opts.AllowNetwork || s.opts.AllowAttach {
		what := "a URL"
		switch {
		case s.opts.AllowNetwork && s.opts.AllowAttach:
			what = "a URL or a local PID"
		case s.opts.AllowAttach:
			what = "a local PID"
		}
		mcp.AddTool(s.mcp, &mcp.Tool{Name: "watch", Title: "Watch a service",
			Description: fmt.Sprintf("Record a session of a running Go service, given %s, for a bounded time (at most %s), then diagnose it. "+
				"The session is kept under %s. Returns the diagnosis (memdoctor/diagnosis/v1) and a short text.", what, s.opts.MaxWatch, s.sessions),
			Annotations: &mcp.ToolAnnotations{OpenWorldHint: ptr(true), DestructiveHint: ptr(false)}}, s.watch)
	}
	if s.opts.AllowNetwork {
		mcp.AddTool(s.mcp, &mcp.Tool{Name: "fleet", Title: "Triage a fleet",
			Description: "Triage every Go service a Prometheus scrapes, from its standard Go metrics: leaks, GC pressure, ranked worst first (JSON schema memdoctor/fleet/v1).",
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(true)}}, s.fleet)
	}
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "holders", Title: "Who holds the leak",
		Description: "What keeps a heap leak alive: the reference paths from the GC roots (package variables, goroutines' variables) to the objects a culprit function allocated, " +
			"with the bytes each path holds, read from a core file under the server's roots or (with --allow-attach) a live process (memdoctor holders).",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)}}, s.holders)
}

// result is a tool's answer: the command's JSON as structured content, and a text.
func result(jsonOut []byte, text string) (*mcp.CallToolResult, any, error) {
	if !json.Valid(jsonOut) {
		return nil, nil, errors.New("memdoctor wrote no JSON")
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, json.RawMessage(jsonOut), nil
}

func (s *server) diagnose(ctx context.Context, _ *mcp.CallToolRequest, in DiagnoseInput) (*mcp.CallToolResult, any, error) {
	path, err := s.roots.resolve("path", in.Path)
	if err != nil {
		return nil, nil, err
	}
	// A session is diagnosed afresh without being changed (report); the rest as analyze does.
	args := []string{"report", "--json", "-"}
	if !isSessionDir(path) {
		args = []string{"analyze", "--json", "-"}
		if in.Module != "" {
			args = append(args, "--module", in.Module)
		}
	}
	if in.MemoryBudget != "" {
		args = append(args, "--memory-budget", in.MemoryBudget)
	}
	stdout, _, err := s.run(ctx, append(args, "--", path)...)
	if err != nil {
		return nil, nil, err
	}
	text, err := summarize(stdout, path)
	if err != nil {
		return nil, nil, err
	}
	return result(stdout, text)
}

func (s *server) diff(ctx context.Context, _ *mcp.CallToolRequest, in DiffInput) (*mcp.CallToolResult, any, error) {
	oldPath, err := s.roots.resolveSnapshot("old", in.Old)
	if err != nil {
		return nil, nil, err
	}
	newPath, err := s.roots.resolveSnapshot("new", in.New)
	if err != nil {
		return nil, nil, err
	}
	args := []string{"diff", "--json", "-"}
	if in.Type != "" {
		args = append(args, "--type", in.Type)
	}
	if in.Top != 0 {
		args = append(args, "--top", strconv.Itoa(in.Top))
	}
	stdout, stderr, err := s.run(ctx, append(args, "--", oldPath, newPath)...)
	if err != nil {
		return nil, nil, err
	}
	return result(stdout, bound(stderr))
}

func (s *server) compare(ctx context.Context, _ *mcp.CallToolRequest, in CompareInput) (*mcp.CallToolResult, any, error) {
	var dirs []string
	for _, p := range []struct{ what, path string }{{"old", in.Old}, {"new", in.New}} {
		dir, err := s.roots.resolve(p.what, p.path)
		if err != nil {
			return nil, nil, err
		}
		if !isSessionDir(dir) {
			return nil, nil, fmt.Errorf("%s %s: not a memdoctor session directory (compare takes two sessions; diagnose or diff take profiles)", p.what, p.path)
		}
		dirs = append(dirs, dir)
	}
	stdout, stderr, err := s.run(ctx, "compare", "--json", "-", "--", dirs[0], dirs[1])
	if err != nil {
		return nil, nil, err
	}
	return result(stdout, bound(stderr))
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func (s *server) watch(ctx context.Context, _ *mcp.CallToolRequest, in WatchInput) (*mcp.CallToolResult, any, error) {
	target := strings.TrimSpace(in.Target)
	if pid, err := strconv.Atoi(target); err == nil {
		if !s.opts.AllowAttach {
			return nil, nil, fmt.Errorf("target %d: watching a local process is off: start memdoctor mcp with --allow-attach", pid)
		}
	} else if !s.opts.AllowNetwork {
		return nil, nil, fmt.Errorf("target %q: watching a URL is off: start memdoctor mcp with --allow-network", target)
	}
	d := time.Duration(in.Seconds) * time.Second
	if in.Seconds == 0 {
		d = time.Minute
	}
	if d < 10*time.Second || d > s.opts.MaxWatch {
		return nil, nil, fmt.Errorf("seconds %d: want 10 to %.0f (this server's longest watch)", in.Seconds, s.opts.MaxWatch.Seconds())
	}
	name := strings.Trim(unsafeName.ReplaceAllString(strings.TrimPrefix(strings.TrimPrefix(target, "http://"), "https://"), "-"), "-.")
	out := filepath.Join(s.sessions, fmt.Sprintf("%s-%s", name, time.Now().UTC().Format("20060102T150405Z")))
	args := []string{"watch", "--duration", d.String(), "--out", out, "--json", "-"}
	if in.IntervalSeconds != 0 {
		args = append(args, "--interval", (time.Duration(in.IntervalSeconds) * time.Second).String())
	}
	if in.MemoryBudget != "" {
		args = append(args, "--memory-budget", in.MemoryBudget)
	}
	stdout, _, err := s.run(ctx, append(args, "--", target)...)
	if err != nil {
		return nil, nil, err
	}
	s.addSession(out)
	text, err := summarize(stdout, target)
	if err != nil {
		return nil, nil, err
	}
	return result(stdout, text+"\nSession saved in "+out+".")
}

func (s *server) fleet(ctx context.Context, _ *mcp.CallToolRequest, in FleetInput) (*mcp.CallToolResult, any, error) {
	if in.Prometheus == "" {
		return nil, nil, errors.New("prometheus: empty: give the base URL of a Prometheus-compatible API")
	}
	args := []string{"fleet", "--prometheus", in.Prometheus, "--json", "-"}
	if in.Selector != "" {
		args = append(args, "--selector", in.Selector)
	}
	if in.Window != "" {
		args = append(args, "--window", in.Window)
	}
	stdout, stderr, err := s.run(ctx, args...)
	if err != nil {
		return nil, nil, err
	}
	return result(stdout, bound(stderr))
}

func (s *server) holders(ctx context.Context, _ *mcp.CallToolRequest, in HoldersInput) (*mcp.CallToolResult, any, error) {
	args := []string{"holders", "--json", "-"}
	for _, site := range in.Sites {
		args = append(args, "--site", site)
	}
	if in.Top != 0 {
		args = append(args, "--top", strconv.Itoa(in.Top))
	}
	switch {
	case in.PID > 0 && in.Core == "":
		if !s.opts.AllowAttach {
			return nil, nil, fmt.Errorf("pid %d: reading a live process is off: start memdoctor mcp with --allow-attach, or give a core file (gcore PID) under %s", in.PID, s.roots)
		}
		args = append(args, "--", strconv.Itoa(in.PID))
	case in.PID == 0 && in.Core != "":
		core, err := s.roots.resolve("core", in.Core)
		if err != nil {
			return nil, nil, err
		}
		exe, err := s.roots.resolve("executable", in.Executable)
		if err != nil {
			return nil, nil, err
		}
		args = append(args, "--", core, exe)
	default:
		return nil, nil, errors.New("holders: give a pid, or a core and its executable")
	}
	stdout, stderr, err := s.run(ctx, args...)
	if err != nil {
		return nil, nil, err
	}
	return result(stdout, bound(stderr))
}

// bound keeps the first maxTextLines lines of a command's text.
func bound(text []byte) string {
	lines := strings.Split(strings.TrimRight(string(text), "\n"), "\n")
	if len(lines) > maxTextLines {
		lines = append(lines[:maxTextLines], fmt.Sprintf("... %d more lines (the JSON has everything)", len(lines)-maxTextLines))
	}
	return strings.Join(lines, "\n")
}

func ptr[T any](v T) *T { return &v }
