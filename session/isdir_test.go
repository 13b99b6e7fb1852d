package session

import (
	"os"
	"path/filepath"
	"testing"
)

// A session directory holds its manifest or its samples as regular files; a folder with a
// directory of that name is a folder of profiles, for every reader alike.
func TestIsDir(t *testing.T) {
	for _, tc := range []struct {
		name  string
		make  func(dir string) error
		isDir bool
	}{
		{"manifest", func(dir string) error { return os.WriteFile(filepath.Join(dir, ManifestFile), []byte("{}"), 0o644) }, true},
		{"samples alone", func(dir string) error { return os.WriteFile(filepath.Join(dir, MetricsFile), nil, 0o644) }, true},
		{"a directory named like the manifest", func(dir string) error { return os.Mkdir(filepath.Join(dir, ManifestFile), 0o755) }, false},
		{"profiles only", func(dir string) error { return os.WriteFile(filepath.Join(dir, "heap.pb.gz"), nil, 0o644) }, false},
	} {
		dir := t.TempDir()
		if err := tc.make(dir); err != nil {
			t.Fatal(err)
		}
		if got := IsDir(dir); got != tc.isDir {
			t.Errorf("%s: IsDir = %v, want %v", tc.name, got, tc.isDir)
		}
	}
}
