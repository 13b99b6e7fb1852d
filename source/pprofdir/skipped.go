package pprofdir

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// skipped counts what a walk left out, by reason, naming a few of each.
type skipped struct {
	other      skipList // neither profiles nor gctrace logs
	notMemory  skipList // CPU, mutex, block, threadcreate profiles
	bad        skipList // profiles that cannot be read (corrupt, truncated, too large)
	special    skipList // devices, pipes, sockets
	unreadable skipList // permissions, vanished files
	sessions   skipList // memdoctor sessions inside a folder
	loops      int      // folders reached again (a symbolic link loop)
}

// skipList is one reason's files: how many, the first few names, and the first error.
type skipList struct {
	n     int
	names []string
	err   error
}

// maxNamed is how many files of each reason a note names.
const maxNamed = 3

func (s *skipped) add(l *skipList, path string, err error) {
	l.n++
	if len(l.names) < maxNamed {
		l.names = append(l.names, filepath.Base(path))
	}
	if l.err == nil {
		l.err = err
	}
}

// notes says what was skipped, one note per reason.
func (s *skipped) notes() []string {
	var out []string
	add := func(l skipList, what string, withErr bool) {
		if l.n == 0 {
			return
		}
		note := fmt.Sprintf("skipped %d %s (%s)", l.n, what, names(l))
		if withErr && l.err != nil {
			note += fmt.Sprintf("; the first: %v", l.err)
		}
		out = append(out, note)
	}
	add(s.other, "file(s) that are neither profiles nor gctrace logs", false)
	add(s.notMemory, "profile(s) not about memory", true)
	add(s.bad, "profile(s) that could not be read", true)
	add(s.special, "entries that are not regular files (devices, pipes, sockets)", false)
	add(s.unreadable, "file(s) that could not be opened", true)
	add(s.sessions, "memdoctor session(s) inside the folder: analyse each on its own (memdoctor analyze SESSION_DIR)", false)
	if s.loops > 0 {
		out = append(out, fmt.Sprintf("%d folder(s) reached again through symbolic links were read once", s.loops))
	}
	return out
}

// summary is the notes in one line, for the error of inputs that held nothing usable.
func (s *skipped) summary() string {
	return strings.Join(s.notes(), "; ")
}

func names(l skipList) string {
	n := slices.Clone(l.names)
	if l.n > len(n) {
		n = append(n, "...")
	}
	return strings.Join(n, ", ")
}
