//go:build unix

package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestOutputFilesArePrivate: the files --json and --html write hold the command line and the
// program's names: they are created 0600, and an existing file is made 0600, like the
// session's files.
func TestOutputFilesArePrivate(t *testing.T) {
	dir := t.TempDir()
	sess := filepath.Join(dir, "s")
	if err := os.CopyFS(sess, os.DirFS(fixture)); err != nil {
		t.Fatal(err)
	}
	profiles, _ := filepath.Glob(filepath.Join(sess, "profiles", "heap-*.pb.gz"))
	for _, c := range []struct {
		name string
		run  func(context.Context, *env, []string) error
		args func(out string) []string
		exts []string
	}{
		{"analyze", runAnalyze, func(o string) []string { return []string{"--json", o + ".json", "--html", o + ".html", sess} }, []string{".json", ".html"}},
		{"report", runReport, func(o string) []string { return []string{"--json", o + ".json", "--html", o + ".html", sess} }, []string{".json", ".html"}},
		{"diff", runDiff, func(o string) []string {
			return []string{"--json", o + ".json", profiles[0], profiles[len(profiles)-1]}
		}, []string{".json"}},
	} {
		for _, existing := range []bool{false, true} {
			out := filepath.Join(dir, c.name)
			for _, ext := range c.exts {
				os.Remove(out + ext)
				if existing {
					if err := os.WriteFile(out+ext, []byte("old"), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			var stdout, stderr bytes.Buffer
			if err := c.run(context.Background(), testEnv(&stdout, &stderr, nil), c.args(out)); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			for _, ext := range c.exts {
				st, err := os.Stat(out + ext)
				if err != nil {
					t.Fatal(err)
				}
				if st.Mode().Perm() != 0o600 || st.Size() <= 3 {
					t.Errorf("%s %s (existing %v): mode %v, %d bytes; want 0600 and the new content", c.name, ext, existing, st.Mode().Perm(), st.Size())
				}
			}
		}
	}
}
