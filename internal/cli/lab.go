package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/memdoctor/memdoctor/lab"
)

var labCmd = &command{
	name:    "lab",
	args:    "list | run [flags] NAME",
	summary: "list or run the lab's scenario programs (each reproduces one production memory problem)",
	help: `The lab holds small Go services, each reproducing one production memory problem with the
mechanism behind it, serving net/http/pprof on loopback and driving its own load. "lab list"
names them with their story and the verdict memdoctor must reach; "lab run NAME" runs one
until Ctrl-C. To diagnose one: memdoctor run -- memdoctor lab run NAME. With
MEMDOCTOR_LAB_AGENT=1 in its environment a scenario also embeds memdoctor's agent at
/debug/memdoctor/, so that memdoctor watch sees it from the agent's vantage point.`,
	examples: []string{
		"memdoctor lab list",
		"memdoctor run --duration 45s -- memdoctor lab run regexp-per-call",
	},
}

func init() { labCmd.run = runLab }

func runLab(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		return usagef("lab: want list or run NAME (see memdoctor lab -h)")
	}
	switch args[0] {
	case "-h", "-help", "--help":
		printCommandHelp(e.stdout, labCmd, nil)
		return errHelp
	case "list":
		for _, sc := range lab.All() {
			expect := "no warning"
			if len(sc.Expect.Kinds) > 0 {
				expect = strings.Join(sc.Expect.Kinds, ", ")
			}
			fmt.Fprintf(e.stdout, "%-22s expect: %s\n%s\n\n", sc.Name, expect, indent(wrap(sc.Story, 90), "    "))
		}
		if len(lab.Pending()) > 0 {
			fmt.Fprintf(e.stdout, "Pending scenarios: not yet judged right from every vantage point, so not in the accuracy matrix.\n\n")
		}
		for _, sc := range lab.Pending() {
			fmt.Fprintf(e.stdout, "%-22s expect: %s\n%s\n\n", sc.Name, strings.Join(sc.Expect.Kinds, ", "), indent(wrap(sc.Story, 90), "    "))
		}
		fmt.Fprintf(e.stdout, "Holder scenarios: each leaks through one kind of holder, for memdoctor holders.\n\n")
		for _, sc := range lab.HolderScenarios() {
			fmt.Fprintf(e.stdout, "%-22s expect: holders names %s\n%s\n\n", sc.Name, sc.Holder.Path, indent(wrap(sc.Story, 90), "    "))
		}
		return nil
	case "run":
		return runLabScenario(ctx, e, args[1:])
	}
	return usagef("lab: unknown subcommand %q: want list or run NAME", args[0])
}

func runLabScenario(ctx context.Context, e *env, args []string) error {
	fs := newFlags(labCmd, e)
	addr := fs.String("addr", "127.0.0.1:0", "listen `ADDRESS` for the scenario's HTTP server (loopback only)")
	pos, err := parse(labCmd, e, fs, args, true)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("lab run: want one scenario NAME (see memdoctor lab list)")
	}
	sc, ok := lab.Lookup(pos[0])
	if !ok {
		return usagef("lab run: no scenario %q (see memdoctor lab list)", pos[0])
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	return sc.Run(ctx, lab.Env{Addr: *addr, Stdout: e.stdout, Logger: e.log})
}

// wrap breaks s into lines of at most width characters.
func wrap(s string, width int) string {
	var b strings.Builder
	n := 0
	for _, w := range strings.Fields(s) {
		if n > 0 && n+1+len(w) > width {
			b.WriteByte('\n')
			n = 0
		} else if n > 0 {
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += len(w)
	}
	return b.String()
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}
