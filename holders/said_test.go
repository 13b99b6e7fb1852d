package holders

import (
	"slices"
	"strings"
	"testing"
)

// TestLines: what a finding shows under a culprit is one line per path, "held by EXPR,
// SHARE, BYTES", bounded, with the coverage of several paths; a culprit nothing reaches, or
// none of whose objects was sampled, says so; escapes a target sent never reach a terminal.
func TestLines(t *testing.T) {
	c := sample().Culprits[0]
	want := []string{
		"held by example.com/api.sessions[value].body, 87.5%, 350.0 MiB",
		"held by example.com/api.(*worker).run.pending[i].buf, 12.0%, 48.0 MiB",
		"(these paths hold 99.5% of its reachable sampled bytes)",
	}
	if got := c.Lines(0); !slices.Equal(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if got := c.Lines(1); len(got) != 3 || got[1] != "… 1 more path(s)" {
		t.Errorf("bounded to one path: %q", got)
	}
	one := c
	one.Paths, one.Covered = one.Paths[:1], 0.875
	if got := one.Lines(0); len(got) != 1 {
		t.Errorf("one path says its own share: %q", got)
	}
	none := Culprit{Site: c.Site, Samples: 3, GarbageSamples: 3}
	if got := none.Lines(3); len(got) != 1 || !strings.Contains(got[0], "unreachable") {
		t.Errorf("unreachable: %q", got)
	}
	if got := (&Culprit{Site: c.Site}).Lines(3); len(got) != 1 || !strings.Contains(got[0], "none of its objects") {
		t.Errorf("nothing sampled: %q", got)
	}
	hostile := c
	hostile.Paths = []Path{{Expr: "main.x\x1b[2J", Share: 1, Bytes: 1 << 20}}
	if got := hostile.Lines(0); strings.Contains(got[0], "\x1b") {
		t.Errorf("an escape reaches the terminal: %q", got)
	}
}

// TestOf: a diagnosis' culprit finds its reading by its full name, or by the end --site gave.
func TestOf(t *testing.T) {
	r := sample()
	if c := r.Of("example.com/api.(*store).remember"); c == nil || c.Samples != 800 {
		t.Errorf("by full name: %+v", c)
	}
	r.Culprits[0].Site = "(*store).remember"
	if c := r.Of("example.com/api.(*store).remember"); c == nil {
		t.Error("by the end of the name after a dot")
	}
	if c := r.Of("example.com/api.(*other).remember"); c != nil {
		t.Errorf("another function: %+v", c)
	}
	if c := (*Result)(nil).Of("x"); c != nil {
		t.Error("no reading")
	}
}
