package cli

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/memdoctor/memdoctor/internal/recorder"
	"github.com/memdoctor/memdoctor/lab"
)

// demoScenario is the lab scenario the demo runs.
const demoScenario = "traffic-agent"

var demoCmd = &command{
	name:    "demo",
	args:    "[flags]",
	summary: "watch a built-in example service for about a minute and diagnose it",
	help: `Demo runs the lab's "traffic-agent" scenario (an API-traffic capture agent with the bugs of a
real one: unbounded TCP reassembly buffers, a regexp compiled per call, decompressed bodies
read whole) as a child process of this very binary, records a session of it exactly as
"memdoctor run" would (reading who holds the heap leak before it stops the example: the
finding shows the paths), prints the diagnosis and says where the session was saved. Nothing
needs to be built or installed. Started by go run, whose binary carries no DWARF (which
reading the leak's holders needs), it first builds the example's binary with go build.`,
	examples: []string{
		"memdoctor demo",
		"memdoctor demo --duration 30s --json demo.json",
	},
}

func init() { demoCmd.run = runDemo }

func runDemo(ctx context.Context, e *env, args []string) error {
	fs := newFlags(demoCmd, e)
	duration := fs.Duration("duration", 60*time.Second, "how long to watch the example")
	out := fs.String("out", "", "session `DIR` (default ./memdoctor-sessions/demo-<UTC time>)")
	holdersOn := fs.Bool("holders", true, holdersHelp)
	var of outputFlags
	of.register(fs)
	of.stop.register(fs, "--holders")
	if _, err := parse(demoCmd, e, fs, args, true); err != nil {
		return err
	}
	if *duration < 10*time.Second {
		return usagef("demo: --duration %s: give it at least 10s to see anything", *duration)
	}
	if err := of.check(); err != nil {
		return err
	}
	if err := recorder.CanRun(); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	sc, ok := lab.Lookup(demoScenario)
	if !ok {
		return fmt.Errorf("demo: the lab has no %q scenario", demoScenario)
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("demo: cannot find this program's binary to start the example: %w", err)
	}
	if *holdersOn {
		tmp, err := os.MkdirTemp("", "memdoctor-demo-")
		if err != nil {
			return fmt.Errorf("demo: %w", err)
		}
		defer os.RemoveAll(tmp)
		exe = demoExecutable(ctx, e, exe, tmp)
	}
	cf := collectFlags{duration: *duration, interval: 5 * time.Second, sample: time.Second, out: *out, output: of, leakEvery: recorder.DefaultLeakCheckEvery}
	cfg := cf.config(e, "demo", "demo", fs)
	cfg.Command = []string{exe, "lab", "run", sc.Name}
	cfg.Holders = holdersAtEnd(e, cfg.Out, cfg.MemoryBudget, *holdersOn, of.stop)
	fmt.Fprintf(e.stderr, "memdoctor demo: watching the lab's %q scenario for %s.\n%s\n\n", sc.Name, *duration, wrap(sc.Story, 96))
	return record(ctx, e, cfg, of, func(ctx context.Context, abort <-chan struct{}) (recorder.Result, error) {
		cfg.Abort = abort
		return recorder.Run(ctx, cfg)
	})
}
