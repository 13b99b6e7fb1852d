package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpRoot is a directory as a user would point memdoctor mcp at: two recorded sessions and a
// folder of real heap profiles; outside it, a profile the server must not read, and inside
// it a symbolic link to that profile.
func mcpRoot(t *testing.T) (root, outside string) {
	t.Helper()
	tmp := t.TempDir()
	root, outside = filepath.Join(tmp, "root"), filepath.Join(tmp, "outside")
	copyTree(t, "../../diagnose/testdata/sessions/goroutine-leak", filepath.Join(root, "sessions", "goroutine-leak"))
	copyTree(t, "../../diagnose/testdata/sessions/healthy", filepath.Join(root, "sessions", "healthy"))
	copyTree(t, "../../testdata/profiles/parca_heap_series", filepath.Join(root, "profiles"))
	copyTree(t, "../../testdata/profiles/parca_heap_series", outside)
	if err := os.Symlink(outside, filepath.Join(root, "escape")); err != nil {
		t.Fatal(err)
	}
	return root, outside
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// mcpClient starts `memdoctor mcp ARGS` and connects the SDK's client to it over the
// process's standard input and output.
func mcpClient(t *testing.T, ctx context.Context, args ...string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(memdoctorBin, append([]string{"mcp"}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("memdoctor mcp's standard error:\n%s", stderr.String())
		}
	})
	client := mcp.NewClient(&mcp.Implementation{Name: "memdoctor-e2e", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to memdoctor mcp: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls a tool and returns its text and its structured content as JSON.
func call(t *testing.T, ctx context.Context, cs *mcp.ClientSession, tool string, args map[string]any) (text string, structured map[string]any, isError bool) {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", tool, args, err)
	}
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text += tc.Text
		}
	}
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &structured)
	}
	return text, structured, res.IsError
}

// TestMCPOverStdio drives memdoctor mcp with the official SDK's client over a real stdio
// pipe: the tools it lists, a diagnosis of a session and of a folder of profiles, a diff,
// a comparison, the sessions as resources, and paths it must refuse.
func TestMCPOverStdio(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	root, outside := mcpRoot(t)
	cs := mcpClient(t, ctx, "--root", root)

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	if want := []string{"compare", "diagnose", "diff", "holders", "list_sessions"}; !slices.Equal(names, want) {
		t.Errorf("tools %q, want %q: watch and fleet only with --allow-network", names, want)
	}
	if !strings.Contains(cs.InitializeResult().Instructions, "--allow-network") {
		t.Errorf("instructions do not say how to allow the network: %s", cs.InitializeResult().Instructions)
	}

	leak := filepath.Join(root, "sessions", "goroutine-leak")
	text, d, isErr := call(t, ctx, cs, "diagnose", map[string]any{"path": leak})
	if isErr || d["schema"] != "memdoctor/diagnosis/v1" || !strings.Contains(text, "CRITICAL goroutine-leak") || !strings.Contains(text, "queryShard") {
		t.Errorf("diagnose %s: error %v, schema %v, text:\n%s", leak, isErr, d["schema"], text)
	}
	if kinds := findingKinds(d); !slices.Contains(kinds, "goroutine-leak") {
		t.Errorf("the diagnosis' findings: %q", kinds)
	}
	if _, err := os.Stat(filepath.Join(leak, "diagnosis.json.new")); err == nil {
		t.Error("diagnose left a file in the session")
	}

	text, d, isErr = call(t, ctx, cs, "diagnose", map[string]any{"path": "profiles"}) // relative to the root
	if isErr || d["schema"] != "memdoctor/diagnosis/v1" || d["source"] != "profiles" {
		t.Errorf("diagnose profiles: error %v, %v %v:\n%s", isErr, d["schema"], d["source"], text)
	}

	series, _ := filepath.Glob(filepath.Join(root, "profiles", "*.pb.gz"))
	text, d, isErr = call(t, ctx, cs, "diff", map[string]any{"old": series[0], "new": series[len(series)-1], "top": 3})
	if isErr || d["kind"] != "heap" || d["type"] != "inuse_space" || !strings.Contains(text, "NewBadgerMetastore") {
		t.Errorf("diff: error %v, kind %v, type %v:\n%s", isErr, d["kind"], d["type"], text)
	}

	text, d, isErr = call(t, ctx, cs, "compare", map[string]any{"old": filepath.Join(root, "sessions", "healthy"), "new": leak})
	if isErr || len(d) == 0 {
		t.Errorf("compare: error %v, %d keys:\n%s", isErr, len(d), text)
	}

	text, d, isErr = call(t, ctx, cs, "list_sessions", nil)
	if list, _ := d["sessions"].([]any); isErr || len(list) != 2 || !strings.Contains(text, "goroutine-leak") {
		t.Errorf("list_sessions: error %v, %v:\n%s", isErr, d, text)
	}

	for _, bad := range []struct{ tool, path, want string }{
		{"diagnose", filepath.Join(outside, filepath.Base(series[0])), "outside the directories"},
		{"diagnose", filepath.Join(root, "escape"), "outside the directories"}, // a symbolic link out
		{"diagnose", filepath.Join(root, "..", "outside"), "outside the directories"},
		{"diagnose", filepath.Join(root, "nothing-here"), "no such file"},
		{"compare", filepath.Join(root, "profiles"), "not a memdoctor session"},
	} {
		args := map[string]any{"path": bad.path}
		if bad.tool == "compare" {
			args = map[string]any{"old": bad.path, "new": leak}
		}
		text, _, isErr := call(t, ctx, cs, bad.tool, args)
		if !isErr || !strings.Contains(text, bad.want) {
			t.Errorf("%s %s: error %v: %s; want an error saying %q", bad.tool, bad.path, isErr, text, bad.want)
		}
	}

	resources, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var report string
	for _, r := range resources.Resources {
		if strings.HasSuffix(r.URI, "goroutine-leak/report") {
			report = r.URI
		}
	}
	if len(resources.Resources) != 4 || report == "" {
		t.Fatalf("resources: %d, want each session's report and diagnosis JSON", len(resources.Resources))
	}
	got, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: report})
	if err != nil || len(got.Contents) != 1 || !strings.Contains(got.Contents[0].Text, "Findings") {
		t.Errorf("read %s: %v %+v", report, err, got)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "memdoctor:///" + strings.TrimPrefix(filepath.ToSlash(outside), "/") + "/report"}); err == nil {
		t.Error("a resource outside the roots was read")
	}
}

// TestMCPWatch watches a live service through the MCP server started with --allow-network:
// the session is recorded under the root, diagnosed, and listed as a resource.
func TestMCPWatch(t *testing.T) {
	defer parallel(t)() // waits more than it computes: it runs beside the other waiting tests
	if testing.Short() {
		t.Skip("watches a service for 10 s")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	target := exec.CommandContext(ctx, targetBin, "-live-mib", "8", "-garbage-mib-per-s", "5")
	out, err := target.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := target.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { target.Process.Kill(); target.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	url := strings.TrimSpace(line[strings.Index(line, "http://"):])

	root := t.TempDir()
	cs := mcpClient(t, ctx, "--root", root, "--allow-network")
	text, d, isErr := call(t, ctx, cs, "watch", map[string]any{"target": url, "seconds": 10, "interval_seconds": 2})
	if isErr || d["schema"] != "memdoctor/diagnosis/v1" || !strings.Contains(text, "Session saved in "+filepath.Join(root, "memdoctor-sessions")) {
		t.Fatalf("watch %s: error %v, schema %v:\n%s", url, isErr, d["schema"], text)
	}
	if sum, _ := d["summary"].(map[string]any); sum["heap_profiles"].(float64) < 3 {
		t.Errorf("watch recorded %v heap profiles in 10 s at 2 s", sum["heap_profiles"])
	}
	resources, err := cs.ListResources(ctx, nil)
	if err != nil || len(resources.Resources) != 2 {
		t.Errorf("resources after the watch: %v %+v", err, resources)
	}
	if text, _, isErr := call(t, ctx, cs, "watch", map[string]any{"target": url, "seconds": 3600}); !isErr || !strings.Contains(text, "want 10 to 600") {
		t.Errorf("an hour's watch: error %v: %s", isErr, text)
	}
	if text, _, isErr := call(t, ctx, cs, "watch", map[string]any{"target": "4242"}); !isErr || !strings.Contains(text, "--allow-attach") {
		t.Errorf("watch of a PID without --allow-attach: error %v: %s", isErr, text)
	}
}

func findingKinds(d map[string]any) []string {
	var kinds []string
	fs, _ := d["findings"].([]any)
	for _, f := range fs {
		if m, ok := f.(map[string]any); ok {
			kinds = append(kinds, m["kind"].(string))
		}
	}
	return kinds
}

// TestMCPInspector drives memdoctor mcp with a third-party client: the CLI mode of
// @modelcontextprotocol/inspector (npm), which starts the server itself and speaks to it
// over stdio. MEMDOCTOR_MCP_INSPECTOR is the inspector's executable (.ci/run installs it);
// the test skips only when it is unset.
func TestMCPInspector(t *testing.T) {
	inspector := os.Getenv("MEMDOCTOR_MCP_INSPECTOR")
	if inspector == "" {
		t.Skip("MEMDOCTOR_MCP_INSPECTOR is unset: npm install @modelcontextprotocol/inspector@2.12.0 and point it at node_modules/.bin/inspector")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	root, _ := mcpRoot(t)
	leak := filepath.Join(root, "sessions", "goroutine-leak")
	inspect := func(args ...string) map[string]any {
		t.Helper()
		cmd := exec.CommandContext(ctx, inspector, append([]string{"--cli", memdoctorBin, "mcp", "--root", root}, args...)...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		var v map[string]any
		if err == nil {
			err = json.Unmarshal(out, &v)
		}
		if err != nil {
			t.Fatalf("inspector --cli ... %s: %v\n%s\n%s", strings.Join(args, " "), err, out, stderr.String())
		}
		return v
	}
	tools, _ := inspect("--method", "tools/list")["tools"].([]any)
	if len(tools) != 5 {
		t.Errorf("tools/list: %d tools, want 5", len(tools))
	}
	res := inspect("--method", "tools/call", "--tool-name", "diagnose", "--tool-arg", "path="+leak)
	sc, _ := res["structuredContent"].(map[string]any)
	content, _ := res["content"].([]any)
	if res["isError"] == true || sc["schema"] != "memdoctor/diagnosis/v1" || !slices.Contains(findingKinds(sc), "goroutine-leak") || len(content) != 1 {
		t.Errorf("tools/call diagnose: %v", res)
	}
	uri := "memdoctor:///" + strings.TrimPrefix(filepath.ToSlash(leak), "/") + "/report"
	read := inspect("--method", "resources/read", "--uri", uri)
	contents, _ := read["contents"].([]any)
	if len(contents) != 1 || !strings.Contains(contents[0].(map[string]any)["text"].(string), "Findings") {
		t.Errorf("resources/read %s: %v", uri, read)
	}
}
