package mcpserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tree makes root/{s1 (a session), d/s2 (a session), p.pb.gz}, a sibling directory outside
// the root, and links inside the root to places inside and outside it.
func tree(t *testing.T) (root, outside string) {
	t.Helper()
	tmp := t.TempDir()
	root, outside = filepath.Join(tmp, "root"), filepath.Join(tmp, "rootless")
	for _, f := range []string{"s1/manifest.json", "d/s2/metrics.jsonl", "p.pb.gz", "d/deep/er/s3/manifest.json"} {
		mk(t, filepath.Join(root, f))
	}
	mk(t, filepath.Join(outside, "secret.pb.gz"))
	for link, to := range map[string]string{"out": outside, "in": filepath.Join(root, "d"), "dot": ".."} {
		if err := os.Symlink(to, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	return root, outside
}

func mk(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestResolve(t *testing.T) {
	root, outside := tree(t)
	r, err := newRoots([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path, want, err string
	}{
		{"p.pb.gz", filepath.Join(root, "p.pb.gz"), ""},
		{filepath.Join(root, "s1"), filepath.Join(root, "s1"), ""},
		{root, root, ""},
		{"in/s2", filepath.Join(root, "d", "s2"), ""}, // a link that stays inside
		{"out/secret.pb.gz", "", "outside the directories"},
		{"dot/rootless/secret.pb.gz", "", "outside the directories"},
		{"../rootless/secret.pb.gz", "", "outside the directories"},
		{filepath.Join(outside, "secret.pb.gz"), "", "outside the directories"},
		{root + "less", "", "outside the directories"}, // a prefix of the name is not a parent
		{"missing", "", "no such file"},
		{"", "", "empty"},
	} {
		got, err := r.resolve("path", tc.path)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "path") {
				t.Errorf("resolve(%q) = %q, %v; want an error naming the path and saying %q", tc.path, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("resolve(%q) = %q, %v; want %q", tc.path, got, err, tc.want)
		}
	}
	if got, err := r.resolveSnapshot("old", "s1@-1"); err != nil || got != filepath.Join(root, "s1")+"@-1" {
		t.Errorf("resolveSnapshot(s1@-1) = %q, %v", got, err)
	}
	if _, err := r.resolveSnapshot("old", "out@0"); err == nil {
		t.Error("resolveSnapshot(out@0) accepted a session outside the roots")
	}
	got := r.sessions()
	want := []string{filepath.Join(root, "d", "s2"), filepath.Join(root, "s1")}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("sessions() = %q, want %q (two levels down, links not followed out)", got, want)
	}
}

func TestNewRoots(t *testing.T) {
	root, _ := tree(t)
	for _, bad := range [][]string{nil, {filepath.Join(root, "p.pb.gz")}, {filepath.Join(root, "nope")}} {
		if _, err := newRoots(bad); err == nil {
			t.Errorf("newRoots(%q) accepted it", bad)
		}
	}
	r, err := newRoots([]string{root, filepath.Join(root, "in", "..", "in")})
	if err != nil || len(r) != 2 || r[1] != filepath.Join(root, "d") {
		t.Errorf("newRoots resolves links: %q, %v", r, err)
	}
}

func TestSessionURI(t *testing.T) {
	for _, dir := range []string{"/work/s1", "/a b/c%d/é", "/x"} {
		for _, suffix := range []string{reportSuffix, jsonSuffix} {
			uri := sessionURI(dir, suffix)
			got, gotSuffix, err := parseSessionURI(uri)
			if err != nil || got != filepath.FromSlash(dir) || gotSuffix != suffix {
				t.Errorf("parseSessionURI(%q) = %q %q %v, want %q %q", uri, got, gotSuffix, err, dir, suffix)
			}
		}
	}
	for _, bad := range []string{"file:///x/report", "memdoctor:///x/other", "memdoctor:///%zz/report", "memdoctor://x"} {
		if _, _, err := parseSessionURI(bad); err == nil {
			t.Errorf("parseSessionURI(%q) accepted it", bad)
		}
	}
}

func FuzzParseSessionURI(f *testing.F) {
	f.Add("memdoctor:///work/s1/report")
	f.Add("memdoctor:///a%20b/diagnosis.json")
	f.Add("memdoctor:////report")
	f.Fuzz(func(t *testing.T, uri string) {
		dir, suffix, err := parseSessionURI(uri)
		if err != nil {
			return
		}
		again, suffix2, err := parseSessionURI(sessionURI(dir, suffix))
		if err != nil || again != dir || suffix2 != suffix {
			t.Errorf("%q -> %q %q -> %q %q %v", uri, dir, suffix, again, suffix2, err)
		}
	})
}
