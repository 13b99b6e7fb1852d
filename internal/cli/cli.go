// Package cli implements the memdoctor command: one file per subcommand, each with its own
// flag.FlagSet. The manual is in help.go and in cmd/memdoctor's package documentation.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"

	"github.com/memdoctor/memdoctor/sanitize"
)

// command is one subcommand.
type command struct {
	name    string
	args    string // the synopsis after the name
	summary string
	// help is the longer description printed by `memdoctor CMD -h`, before the flags.
	help     string
	examples []string
	hidden   bool
	run      func(ctx context.Context, e *env, args []string) error
}

// commands lists the subcommands in the order help shows them.
func commands() []*command {
	return []*command{
		runCmd, watchCmd, analyzeCmd, holdersCmd, testCmd, fleetCmd, compareCmd, tuneCmd, reportCmd, serveCmd, diffCmd, mcpCmd, demoCmd, labCmd, helpCmd, versionCmd,
	}
}

func lookup(name string) *command {
	for _, c := range commands() {
		if c.name == name {
			return c
		}
	}
	return nil
}

// env is what a subcommand may use of the outside world.
type env struct {
	stdout, stderr io.Writer
	// term is stderr when it is a terminal (for the live status line), else nil.
	term *statusTerm
	// stdoutTerm is true when stdout is a terminal too: with a status line on stderr, what the
	// program under run writes to stdout must clear that line first.
	stdoutTerm bool
	log        *slog.Logger
	color      bool // stdout is a terminal and NO_COLOR is unset
	getenv     func(string) string
}

// Main runs memdoctor with args (without the program name) and returns the exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	err := run(context.Background(), stdout, stderr, args)
	if err != nil && !errors.Is(err, errHelp) && !errors.Is(err, errFailOn) {
		fmt.Fprintf(stderr, "memdoctor: %s\n", oneLine(err.Error()))
	}
	return exitCode(err)
}

// run dispatches to a subcommand.
func run(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	e := &env{stdout: stdout, stderr: stderr, getenv: os.Getenv}
	e.stdoutTerm = isTerminal(stdout)
	e.color = e.stdoutTerm && os.Getenv("NO_COLOR") == ""
	if isTerminal(stderr) {
		e.term = newStatusTerm(stderr)
		e.stderr = e.term
	}
	e.log = newLogger(e.stderr, os.Getenv("MEMDOCTOR_LOG_FORMAT"), os.Getenv("MEMDOCTOR_LOG"))
	if len(args) == 0 {
		printHelp(e.stderr)
		return usagef("no command given: run memdoctor help")
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help":
		name = "help"
	case "-version", "--version":
		name = "version"
	}
	c := lookup(name)
	if c == nil {
		return usagef("unknown command %q: run memdoctor help", args[0])
	}
	return c.run(ctx, e, args[1:])
}

func logLevel(s string) slog.Level {
	switch strings.ToLower(s) {
	case "debug":
		return slog.LevelDebug
	case "warn":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	}
	return slog.LevelInfo
}

// newFlags returns the FlagSet of a command, printing its help on -h.
func newFlags(c *command, e *env) *flag.FlagSet {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parse parses args and returns the positional arguments. With interleave, flags may also
// follow positional arguments (but not "--"); without it, the first positional argument ends
// the flags, as `memdoctor run` needs for its COMMAND [ARGS...].
func parse(c *command, e *env, fs *flag.FlagSet, args []string, interleave bool) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				printCommandHelp(e.stdout, c, fs)
				return nil, errHelp
			}
			return nil, usagef("%s: %v (see memdoctor %s -h)", c.name, err, c.name)
		}
		rest := fs.Args()
		if len(rest) == 0 || !interleave {
			return append(pos, rest...), nil
		}
		// Did the flag package stop at "--"? Then everything after it is positional.
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// version is memdoctor's version: the module version it was built at, or "devel".
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// oneLine puts an error on one line, its control characters escaped: errors quote what
// targets sent (bodies, names).
func oneLine(s string) string {
	return sanitize.Text(strings.Join(strings.Fields(s), " "))
}

var versionCmd = &command{
	name:    "version",
	summary: "print memdoctor's version",
	run: func(ctx context.Context, e *env, args []string) error {
		fmt.Fprintf(e.stdout, "memdoctor %s\n", version())
		return nil
	},
}
