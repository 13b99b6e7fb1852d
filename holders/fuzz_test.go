package holders

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoad reads hostile saved results: a result or an error, never a crash.
func FuzzLoad(f *testing.F) {
	f.Add([]byte(`{"schema":"memdoctor/holders/v1","culprits":[{"site":"main.f","paths":[{"expr":"main.x[value]","hops":[{"expr":"[value]"}]}]}]}`))
	f.Add([]byte(`{"schema":"other"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, File), b, 0o600); err != nil {
			t.Fatal(err)
		}
		r, ok, err := Load(dir)
		if err == nil && ok {
			WriteText(discard{}, r)
			r.Profile()
		}
	})
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
