package mcpserver

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var update = flag.Bool("update", false, "rewrite testdata/*.txt from the short texts")

// TestSummarize checks the short text of real diagnoses (a session's, one profile's, a run
// whose heap leak carries who holds it) against golden files.
func TestSummarize(t *testing.T) {
	for _, name := range []string{"goroutine-leak", "one-profile", "heap-leak-held"} {
		b, err := os.ReadFile(filepath.Join("testdata", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		got, err := summarize(b, name)
		if err != nil {
			t.Fatal(err)
		}
		golden := filepath.Join("testdata", name+".txt")
		if *update {
			if err := os.WriteFile(golden, []byte(got+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		if got+"\n" != string(want) {
			t.Errorf("summarize(%s):\n%s\nwant (%s; -update rewrites it):\n%s", name, got, golden, want)
		}
	}
	if _, err := summarize([]byte("<html>"), "x"); err == nil {
		t.Error("summarize accepted HTML")
	}
}

// fakeRunner records the commands the server runs and answers with a diagnosis.
type fakeRunner struct {
	mu    sync.Mutex
	calls [][]string
	out   []byte
}

func (f *fakeRunner) run(ctx context.Context, args []string) ([]byte, []byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, args)
	return f.out, []byte("the text\n"), nil
}

func connect(t *testing.T, opts Options) *mcp.ClientSession {
	t.Helper()
	srv, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

// TestToolsOffered: the tools that reach the network or another process are offered only
// when allowed, and each refuses what its flag does not allow.
func TestToolsOffered(t *testing.T) {
	root, _ := tree(t)
	diag, err := os.ReadFile("testdata/goroutine-leak.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name           string
		network, attch bool
		want           []string
	}{
		{"default", false, false, []string{"compare", "diagnose", "diff", "holders", "list_sessions"}},
		{"network", true, false, []string{"compare", "diagnose", "diff", "fleet", "holders", "list_sessions", "watch"}},
		{"attach", false, true, []string{"compare", "diagnose", "diff", "holders", "list_sessions", "watch"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fr := &fakeRunner{out: diag}
			cs := connect(t, Options{Roots: []string{root}, AllowNetwork: tc.network, AllowAttach: tc.attch, Run: fr.run})
			if got := toolNames(t, cs); !slices.Equal(got, tc.want) {
				t.Errorf("tools %q, want %q", got, tc.want)
			}
			if !slices.Contains(tc.want, "watch") {
				return
			}
			refused, allowed := "http://127.0.0.1:6060", "4242"
			if tc.network {
				refused, allowed = allowed, refused
			}
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "watch", Arguments: map[string]any{"target": refused}})
			if err != nil || !res.IsError {
				t.Errorf("watch %s: %v %+v, want a refusal", refused, err, res)
			}
			res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "watch", Arguments: map[string]any{"target": allowed, "seconds": 30}})
			if err != nil || res.IsError || len(fr.calls) != 1 {
				t.Fatalf("watch %s: %v %+v", allowed, err, res)
			}
			args := strings.Join(fr.calls[0], " ")
			if !strings.HasPrefix(args, "watch --duration 30s --out "+filepath.Join(root, "memdoctor-sessions")) || !strings.HasSuffix(args, "-- "+allowed) {
				t.Errorf("watch ran memdoctor %s", args)
			}
		})
	}
}

// TestHolders: a core file under a root needs no permission; a live process needs
// --allow-attach; a core outside the roots is refused.
func TestHolders(t *testing.T) {
	root, outside := tree(t)
	fr := &fakeRunner{out: []byte(`{}`)}
	cs := connect(t, Options{Roots: []string{root}, Run: fr.run})
	for _, tc := range []struct {
		args map[string]any
		ok   bool
		want string
	}{
		{map[string]any{"core": "p.pb.gz", "executable": "s1/manifest.json", "sites": []string{"main.hoard"}}, true, ""},
		{map[string]any{"pid": 4242}, false, "--allow-attach"},
		{map[string]any{"core": filepath.Join(outside, "secret.pb.gz"), "executable": "p.pb.gz"}, false, "outside"},
		{map[string]any{}, false, "give a pid, or a core"},
	} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "holders", Arguments: tc.args})
		if err != nil {
			t.Fatal(err)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if res.IsError == tc.ok || !strings.Contains(text, tc.want) {
			t.Errorf("holders %v: error %v %q, want ok %v with %q", tc.args, res.IsError, text, tc.ok, tc.want)
		}
	}
	want := []string{"holders", "--json", "-", "--site", "main.hoard", "--", filepath.Join(root, "p.pb.gz"), filepath.Join(root, "s1", "manifest.json")}
	if len(fr.calls) != 1 || !slices.Equal(fr.calls[0], want) {
		t.Errorf("commands %q, want %q", fr.calls, want)
	}
}

// TestDiagnoseCommands: a session is diagnosed by report, which leaves it unchanged; other
// paths by analyze; every path reaches the command after "--", resolved.
func TestDiagnoseCommands(t *testing.T) {
	root, _ := tree(t)
	diag, err := os.ReadFile("testdata/one-profile.json")
	if err != nil {
		t.Fatal(err)
	}
	fr := &fakeRunner{out: diag}
	cs := connect(t, Options{Roots: []string{root}, Run: fr.run})
	for _, args := range []map[string]any{
		{"path": "s1", "memory_budget": "1GiB"},
		{"path": "in/../p.pb.gz", "module": "example.com/svc"},
		{"path": "-rf"},
	} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "diagnose", Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		if args["path"] == "-rf" {
			if !res.IsError {
				t.Errorf("diagnose -rf: %+v", res)
			}
			continue
		}
		if res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "memdoctor diagnosis of") {
			t.Errorf("diagnose %v: %+v", args, res)
		}
	}
	want := [][]string{
		{"report", "--json", "-", "--memory-budget", "1GiB", "--", filepath.Join(root, "s1")},
		{"analyze", "--json", "-", "--module", "example.com/svc", "--", filepath.Join(root, "p.pb.gz")},
	}
	if len(fr.calls) != len(want) || !slices.Equal(fr.calls[0], want[0]) || !slices.Equal(fr.calls[1], want[1]) {
		t.Errorf("commands %q, want %q", fr.calls, want)
	}
}

func TestSessionsDirUnderARoot(t *testing.T) {
	root, outside := tree(t)
	fr := &fakeRunner{}
	if _, err := New(Options{Roots: []string{root}, SessionsDir: outside, Run: fr.run}); err == nil {
		t.Error("a sessions directory outside the roots was accepted")
	}
	if _, err := New(Options{Roots: []string{root}, SessionsDir: filepath.Join(root, "new", "dir"), Run: fr.run}); err != nil {
		t.Errorf("a sessions directory to be made under the root: %v", err)
	}
}
