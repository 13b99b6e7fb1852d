package cli

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/session"
	"github.com/memdoctor/memdoctor/source/pprofdir"
)

// loadOptions tune loadEvidence.
type loadOptions struct {
	budget uint64 // --memory-budget (0: the session's, else unknown)
	module string // --module (""; a session's, else inferred from the profiles)
}

// loadEvidence reads anything analyze reads: one memdoctor session directory (s is then the
// session), or folders of profiles, profile files and gctrace logs (s is nil). It is the one
// loader of every command that judges what people already have.
func loadEvidence(e *env, paths []string, opts loadOptions) (*evidence.Evidence, *session.Session, error) {
	if len(paths) == 1 && session.IsDir(paths[0]) {
		s, err := session.Open(paths[0])
		if err != nil {
			return nil, nil, err
		}
		ev, err := evidence.FromSession(s, evidence.Options{MemoryBudgetBytes: opts.budget, TargetRuns: targetRuns(s.Manifest.Target), Source: true})
		if err != nil {
			return nil, nil, err
		}
		if opts.module != "" {
			ev.SetMainModule(opts.module)
		}
		if n := ignoredProfiles(s); n > 0 {
			ev.Notes = append(ev.Notes, fmt.Sprintf("%s holds %d file(s) not named as memdoctor names its snapshots: they are not part of the session; "+
				"to read them by their content, analyse the folder: memdoctor analyze %s", filepath.Join(s.Dir, session.ProfilesDir), n, filepath.Join(s.Dir, session.ProfilesDir)))
		}
		return ev, s, nil
	}
	ev, err := pprofdir.Load(paths, pprofdir.Options{MemoryBudgetBytes: opts.budget, MainModule: opts.module, Logger: e.log})
	if err != nil {
		return nil, nil, err
	}
	return ev, nil, nil
}

// ignoredProfiles counts the files of a session's profiles/ that the session reader ignored
// for their names (a hand-made session).
func ignoredProfiles(s *session.Session) int {
	n := 0
	for _, w := range s.Warnings {
		if strings.HasPrefix(w, session.ProfilesDir+": ignored ") {
			n++
		}
	}
	return n
}
