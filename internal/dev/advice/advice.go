// Package advice checks a diagnosis's advice for commands that can no longer work: the tests
// of the diagnosis (every recorded session) and of the command (run, demo, watch on live
// programs) hold the same line with it.
package advice

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/memdoctor/memdoctor/diagnose"
)

// Dead lists the advice of d that names a command for a process that has exited (gone: the
// holders command, or a command naming the target's PID), or reads again what was read
// already (the holders command in a finding whose culprits carry who holds them).
func Dead(d *diagnose.Diagnosis, gone bool) []string {
	// A command that names the PID: memdoctor's, gcore's, kill's... up to the clause's end.
	pid := regexp.MustCompile(fmt.Sprintf(`\b(memdoctor|gcore|kill|dlv|curl)\b[^;()]*[^0-9]%d([^0-9]|$)`, d.Target.PID))
	var dead []string
	for _, f := range d.Findings {
		read := false
		for _, c := range f.Culprits {
			read = read || c.HeldBy != nil
		}
		for _, a := range f.Advice {
			holdersCmd := strings.Contains(a, "memdoctor holders")
			switch {
			case read && holdersCmd:
				dead = append(dead, fmt.Sprintf("%s: reads again what was read: %s", f.Kind, a))
			case gone && holdersCmd:
				dead = append(dead, fmt.Sprintf("%s: a holders command for a process that has exited: %s", f.Kind, a))
			case gone && d.Target.PID > 0 && pid.MatchString(a):
				dead = append(dead, fmt.Sprintf("%s: names the PID of a process that has exited: %s", f.Kind, a))
			}
		}
	}
	return dead
}
