package report

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/session"
)

// TestCommandsWrapAndPasteWhole: a card's commands break their lines before an argument that
// would pass the width, and a POSIX shell reads each, pasted as it is, as the one command
// with every argument intact (paths with spaces and quotes included).
func TestCommandsWrapAndPasteWhole(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatalf("no POSIX shell to paste into: %v", err)
	}
	old := "memdoctor-sessions/api-server-20261122T101500Z/profiles/heap-20261122T101510.000Z.pb.gz"
	new := "my sessions/it's here/profiles/heap-20261122T101610.000Z.pb.gz"
	p := pair{old: old, new: new, kind: session.KindHeap, oldT: time.Now(), newT: time.Now()}
	cmds := pprofCommands(p, "inuse_space")
	wantArgs := [][]string{
		{"go", "tool", "pprof", "-http=:", "-sample_index=inuse_space", "-diff_base=" + old, new},
		{"memdoctor", "diff", "--type", "inuse_space", old, new},
	}
	if len(cmds) != len(wantArgs) {
		t.Fatalf("%d commands, want %d", len(cmds), len(wantArgs))
	}
	for i, cmd := range cmds {
		lines := strings.Split(cmd, "\n")
		if len(lines) < 2 {
			t.Errorf("command %q is not broken into lines", cmd)
		}
		for _, l := range lines {
			if len(l) > cmdWidth+2 && strings.Count(strings.TrimSpace(l), " ") > 1 {
				t.Errorf("line %q passes the width with more than one argument on it", l)
			}
		}
		out, err := exec.Command(sh, "-c", `printf '%s\n' `+cmd).Output()
		if err != nil {
			t.Fatalf("sh -c %q: %v", cmd, err)
		}
		got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
		if strings.Join(got, "|") != strings.Join(wantArgs[i], "|") {
			t.Errorf("the shell reads %q as\n%q\nwant\n%q", cmd, got, wantArgs[i])
		}
	}
}
