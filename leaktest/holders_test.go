package leaktest

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// memdoctor holders' JSON is read tolerantly: unknown fields are skipped, the paths, what
// holds them and what to cut are shown.
func TestHoldersJSON(t *testing.T) {
	res, err := readHoldersJSON(filepath.Join("testdata", "holders.json"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	writeHolders(&b, res)
	got := b.String()
	t.Logf("\n%s", got)
	for _, want := range []string{
		"example.com/leaky.open: 3.5 MiB held in this process (26391 sampled objects)",
		"70.0%  2.48 MiB  example.com/leaky.sessions[value].trail",
		"example.com/leaky.worker.batch[i]",
		"held by goroutine 17 [chan receive]",
		"(1 more paths)",
		"letting go of example.com/leaky.sessions would free 3.43 MiB",
		"cut leaky.session.trail: frees 3.43 MiB (96% of the site's sampled objects)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the paths do not say %q", want)
		}
	}
	if _, err := readHoldersJSON(filepath.Join("testdata", "nonexistent.json")); err == nil {
		t.Error("a missing file was read")
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte("not json"), 0o644)
	if _, err := readHoldersJSON(bad); err == nil || !strings.Contains(err.Error(), "cannot read") {
		t.Errorf("bad JSON: %v", err)
	}
}

func TestHoldersNoPaths(t *testing.T) {
	var b strings.Builder
	writeHolders(&b, &holdersResult{Notes: []string{"no sampled object"}})
	if !strings.Contains(b.String(), "found no path") || !strings.Contains(b.String(), "no sampled object") {
		t.Errorf("no paths: %q", b.String())
	}
}

func TestCutsText(t *testing.T) {
	for _, tc := range []struct{ raw, want string }{
		{``, ""},
		{`null`, ""},
		{`["a.b", "c"]`, "a.b|c"},
		{`[{"expr": "x.y[value]", "field": "", "share": 0.7, "frees": 3670016}, {"expr": "p.q", "field": "p.T.f", "frees": 0}]`,
			"cut x.y[value]: frees 3.5 MiB (70% of the site's sampled objects)|cut p.T.f"},
		{`[{"root": "z"}, {"samples": 3}]`, "cut z"},
		{`{"unknown": true}`, ""},
	} {
		if got := strings.Join(cutsText([]byte(tc.raw)), "|"); got != tc.want {
			t.Errorf("cutsText(%s) = %q, want %q", tc.raw, got, tc.want)
		}
	}
}

// Without the memdoctor command on PATH, the failure says how to get the paths.
func TestHoldersWithoutMemdoctor(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := runHolders([]string{"example.com/leaky.open"}, "TestSessions")
	if err == nil {
		t.Fatal("memdoctor holders ran without memdoctor")
	}
	want := "memdoctor command is not on PATH"
	if runtime.GOOS != "linux" {
		want = "on Linux"
	}
	for _, w := range []string{want, "go install github.com/memdoctor/memdoctor/cmd/memdoctor@latest"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("the hint %q does not say %q", err, w)
		}
	}
}

func TestRunPattern(t *testing.T) {
	for name, want := range map[string]string{"TestA": "^TestA$", "TestA/sub_1": "^TestA$/^sub_1$", "TestB/a.b": `^TestB$/^a\.b$`} {
		if got := runPattern(name); got != want {
			t.Errorf("runPattern(%q) = %q, want %q", name, got, want)
		}
	}
}
