package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/session"
)

// TestHTMLRelativeSession opens the session by a relative path, as the README writes it,
// from a working directory that is neither the session nor its parent: every finding that
// names two snapshots gets their flame-graph diff, and its commands name files that exist
// from there.
func TestHTMLRelativeSession(t *testing.T) {
	abs, err := filepath.Abs(fixtureDir)
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	if err := os.CopyFS(filepath.Join(work, "sessions", "json-whole"), os.DirFS(abs)); err != nil {
		t.Fatal(err)
	}
	t.Chdir(work)
	for _, dir := range []string{"sessions/json-whole", "./sessions/json-whole/", "sessions/../sessions/json-whole"} {
		t.Run(dir, func(t *testing.T) {
			s, err := session.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			d := diagnose.Diagnose(evidenceOf(t, s), diagnose.Options{})
			named := 0
			for _, f := range d.Findings {
				if len(f.Profiles) >= 2 {
					named++
				}
			}
			if named == 0 {
				t.Fatalf("the diagnosis names no snapshots (%d findings): nothing to check", len(d.Findings))
			}
			b := newBuilder(s, evidenceOf(t, s), d, HTMLOptions{Location: time.UTC})
			data, cards := b.build()
			for i, f := range d.Findings {
				if len(f.Profiles) < 2 {
					continue
				}
				c, m := cards[i], data.Findings[i]
				if m.Flame == nil || strings.Contains(c.FlameNote, "could not") {
					t.Errorf("%s: no flame-graph diff: %s", f.Kind, c.FlameNote)
				}
				if len(c.Commands) == 0 {
					t.Errorf("%s: no commands", f.Kind)
				}
				for _, cmd := range c.Commands {
					for _, field := range strings.Fields(cmd) {
						_, path, _ := strings.Cut(field, "=")
						if path == "" {
							path = field
						}
						if strings.HasSuffix(path, ".pb.gz") {
							if _, err := os.Stat(path); err != nil {
								t.Errorf("%s: command %q names a file that is not there: %v", f.Kind, cmd, err)
							}
						}
					}
				}
			}
			var page bytes.Buffer
			if err := HTML(&page, s, evidenceOf(t, s), d, HTMLOptions{Location: time.UTC}); err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(page.Bytes(), []byte("could not be compared")) {
				t.Errorf("the page says snapshots could not be compared")
			}
		})
	}
}
