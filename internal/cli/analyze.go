package cli

import "context"

var analyzeCmd = &command{
	name:    "analyze",
	args:    "[flags] SESSION_DIR",
	summary: "diagnose a saved session again, offline",
	help: `Analyze reads a session directory (from run, watch, demo, or one a killed collector left) and
diagnoses it again: with a newer memdoctor, or another --memory-budget. It rewrites the
session's diagnosis.json.`,
	examples: []string{
		"memdoctor analyze memdoctor-sessions/server-20261122T101500Z",
		"memdoctor analyze --memory-budget 1GiB --json - ./session > diagnosis.json",
		"memdoctor analyze --html report.html ./session",
	},
}

func init() { analyzeCmd.run = runAnalyze }

func runAnalyze(ctx context.Context, e *env, args []string) error {
	fs := newFlags(analyzeCmd, e)
	var out outputFlags
	out.register(fs)
	var budget sizeFlag
	fs.Var(&budget, "memory-budget", "the memory the service may use, e.g. "+sizeHelp+" (default: the session's)")
	pos, err := parse(analyzeCmd, e, fs, args, true)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("analyze: want exactly one session directory")
	}
	if err := out.check(); err != nil {
		return err
	}
	_, err = diagnoseDir(e, pos[0], budget.bytes, out)
	return err
}
