package cli

import (
	"errors"
	"fmt"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
	exitFailOn  = 3
)

// usageError is a mistake in the command line: exit code 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

// errFailOn reports that --fail-on matched a finding: exit code 3.
var errFailOn = errors.New("a finding reached the --fail-on severity")

// errHelp is returned after -h printed the command's help: exit code 0.
var errHelp = errors.New("help printed")

func exitCode(err error) int {
	var ue *usageError
	switch {
	case err == nil, errors.Is(err, errHelp):
		return exitOK
	case errors.As(err, &ue):
		return exitUsage
	case errors.Is(err, errFailOn):
		return exitFailOn
	}
	return exitFailure
}
