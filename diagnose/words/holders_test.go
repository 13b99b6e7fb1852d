package words

import (
	"testing"

	"github.com/memdoctor/memdoctor/diagnose/rule"
	"github.com/memdoctor/memdoctor/facts"
)

// TestHoldersCommand: a heap leak's advice names the memdoctor holders command to run next,
// from the session when there is one, for the process when its PID is known, quoted for a
// shell.
func TestHoldersCommand(t *testing.T) {
	culprits := []rule.Culprit{{Function: "example.com/svc.(*store).remember"}, {Function: "example.com/svc.load"}}
	for _, c := range []struct {
		fs   facts.Facts
		want string
	}{
		{facts.Facts{Session: "memdoctor-sessions/svc-1", Target: facts.Target{PID: 42}}, "memdoctor holders --from memdoctor-sessions/svc-1 42"},
		{facts.Facts{Target: facts.Target{PID: 42}}, "memdoctor holders --site 'example.com/svc.(*store).remember' --site example.com/svc.load 42"},
		{facts.Facts{Session: "my sessions/svc"}, "memdoctor holders --from 'my sessions/svc' PID (the process's; or gcore PID, then CORE EXECUTABLE)"},
	} {
		if got := holdersCommand(culprits, &c.fs); got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
	}
	if got := holdersCommand(nil, &facts.Facts{}); got != "" {
		t.Errorf("no culprits and no session: %q", got)
	}
	if got := shellWord("it's"); got != `'it'\''s'` {
		t.Errorf("shellWord: %s", got)
	}
}
