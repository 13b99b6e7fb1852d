//go:build linux

package procfs

import (
	"os"
	"path/filepath"
	"testing"
)

// fakeRoot copies testdata/name into a temporary directory, so a test may
// add symbolic links or change files, and returns its path.
func fakeRoot(t *testing.T, name string) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "root")
	if err := os.CopyFS(root, os.DirFS(filepath.Join("testdata", name))); err != nil {
		t.Fatal(err)
	}
	return root
}

// symlinks creates links (path below root -> target).
func symlinks(t *testing.T, root string, links map[string]string) {
	t.Helper()
	for link, target := range links {
		p := filepath.Join(root, link)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
}

func writeFile(t *testing.T, root, path, content string) {
	t.Helper()
	p := filepath.Join(root, path)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func removeFile(t *testing.T, root, path string) {
	t.Helper()
	if err := os.Remove(filepath.Join(root, path)); err != nil {
		t.Fatal(err)
	}
}
