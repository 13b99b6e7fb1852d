// Command labrun runs one lab scenario as a program of its own: `labrun NAME` (or `labrun lab
// run NAME`, memdoctor's own arguments, where it stands in for memdoctor) serves the scenario
// and drives its load until SIGINT or SIGTERM, as `memdoctor lab run NAME` does. It links the
// lab alone: the accuracy matrix builds it with Go 1.27 for the scenarios that need that
// release, a fraction of a build of memdoctor with all its dependencies.
// Built with the nopprof tag (go build -tags nopprof ./internal/dev/labrun) it links no profiling
// at all, neither runtime/pprof nor net/http/pprof nor memdoctor's agent: the production
// service that serves nothing, whose heap profiling is off, which memdoctor reads by its PID
// from its memory (the accuracy matrix's watch-memory vantage point). memdoctor itself links
// net/http/pprof, so its own `lab run` cannot be that program.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/memdoctor/memdoctor/lab"
)

func main() {
	args := os.Args[1:]
	if len(args) == 3 && args[0] == "lab" && args[1] == "run" {
		args = args[2:]
	}
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: labrun NAME, or labrun lab run NAME (see memdoctor lab list)")
		os.Exit(2)
	}
	sc, ok := lab.Lookup(args[0])
	if !ok {
		fmt.Fprintf(os.Stderr, "labrun: no scenario %q (see memdoctor lab list)\n", args[0])
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := sc.Run(ctx, lab.Env{Stdout: os.Stdout}); err != nil {
		fmt.Fprintln(os.Stderr, "labrun:", err)
		os.Exit(1)
	}
}
