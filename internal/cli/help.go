package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
)

const overview = `memdoctor finds out why a Go service uses the memory it uses, proves it, and tames it.

It records a session (samples of /proc, the cgroup and the Go runtime, gctrace lines, heap
and goroutine profiles) and diagnoses it: where resident memory goes (live heap, garbage,
fragmentation, memory the runtime retains, non-Go memory), and findings such as heap or
goroutine leaks, runtime retention, transient spikes, GC overhead and allocation hotspots,
each with the culprit code, the numbers that prove it and the fix.`

const trailer = `Exit status: 0 done, 1 failure, 2 usage error, 3 a finding reached --fail-on (or compare
found a regression with --fail-on-regression, or test found a leak).

Environment: NO_COLOR turns colour off; MEMDOCTOR_LOG=debug|info|warn|error sets the log
level (logs go to stderr, as plain sentences); MEMDOCTOR_LOG_FORMAT=text|json writes them as
slog's key=value or JSON lines instead, with times and levels, for machines.`

var helpCmd = &command{
	name:    "help",
	args:    "[COMMAND]",
	summary: "show this help, or a command's flags and examples",
}

func init() { helpCmd.run = runHelp }

func runHelp(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		printHelp(e.stdout)
		return nil
	}
	c := lookup(args[0])
	if c == nil {
		return usagef("help: unknown command %q", args[0])
	}
	return c.run(ctx, e, []string{"-h"})
}

// printHelp prints the overview and the command list.
func printHelp(w io.Writer) {
	fmt.Fprintf(w, "%s\n\nUsage:\n\n", overview)
	for _, c := range commands() {
		if c.hidden {
			continue
		}
		fmt.Fprintf(w, "\tmemdoctor %s %s\n\t\t%s\n", c.name, c.args, c.summary)
	}
	fmt.Fprintf(w, "\nRun \"memdoctor COMMAND -h\" for a command's flags and examples.\n\n%s\n", trailer)
}

// printCommandHelp prints a command's synopsis, description, flags and examples. fs may be
// nil for commands without flags of their own.
func printCommandHelp(w io.Writer, c *command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "usage: memdoctor %s %s\n\n", c.name, c.args)
	if c.help != "" {
		fmt.Fprintf(w, "%s\n\n", c.help)
	} else {
		fmt.Fprintf(w, "%s.\n\n", strings.ToUpper(c.summary[:1])+c.summary[1:])
	}
	if fs != nil {
		fmt.Fprintf(w, "Flags:\n")
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
		fmt.Fprintln(w)
	}
	if len(c.examples) > 0 {
		fmt.Fprintf(w, "Examples:\n")
		for _, ex := range c.examples {
			fmt.Fprintf(w, "\t%s\n", ex)
		}
	}
}

// Manual returns the whole manual: the overview and every command's help with its flags and
// examples. It is the package documentation of cmd/memdoctor (a test keeps them equal).
func Manual() string {
	var b strings.Builder
	printHelp(&b)
	e := &env{stdout: &b, stderr: io.Discard}
	for _, c := range commands() {
		if c.hidden || c.name == "help" || c.name == "version" {
			continue
		}
		fmt.Fprintf(&b, "\n# memdoctor %s\n\n", c.name)
		c.run(context.Background(), e, []string{"-h"})
	}
	return b.String()
}
