package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/report"
	"github.com/memdoctor/memdoctor/session"
)

var reportCmd = &command{
	name:    "report",
	args:    "[flags] SESSION_DIR",
	summary: "write a session's report: text, or one self-contained HTML page with charts",
	help: `Report diagnoses a saved session afresh and writes its report, without changing the session.
With --html FILE it writes one self-contained HTML page that opens offline (nothing is fetched:
the charting library, the script and the data are inside): the headline figures, resident
memory over time as a stacked breakdown (live heap, garbage awaiting GC, retained free,
released but still resident, stacks, runtime, non-Go, files), the live heap against the GC
goal with each GC cycle marked, GC cycles/s and GC CPU with mark assists apart, goroutines,
the memory budget and cgroup limit, and the findings on the timeline, each with a card: its
evidence, culprits (stack on demand), a flame graph of what grew, advice, and the go tool
pprof command to dig further. Long sessions are downsampled for display (the lowest and
highest reading of each slice of time are kept, so spikes stay visible). Times are shown in
the local time zone, named on the page (set TZ to choose another). Without --html, the text
report goes to stdout. The same --html flag works on run, watch and analyze.`,
	examples: []string{
		"memdoctor report memdoctor-sessions/server-20261122T101500Z --html report.html",
		"memdoctor report --memory-budget 2GiB --html - ./session > report.html",
		"TZ=Europe/Paris memdoctor report --html report.html --json diagnosis.json ./session",
		"memdoctor report ./session",
	},
}

func init() { reportCmd.run = runReport }

func runReport(ctx context.Context, e *env, args []string) error {
	fs := newFlags(reportCmd, e)
	html := fs.String("html", "", "write the report as one self-contained HTML page to `FILE` (- for stdout)")
	jsonOut := fs.String("json", "", "also write the diagnosis as JSON to `FILE` (- for stdout, with --html to a file)")
	var budget sizeFlag
	fs.Var(&budget, "memory-budget", "the memory the service may use, e.g. "+sizeHelp+" (default: the session's)")
	pos, err := parse(reportCmd, e, fs, args, true)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("report: want exactly one session directory, e.g. memdoctor report ./session --html report.html")
	}
	if *html == "-" && *jsonOut == "-" {
		return usagef("report: --html - and --json - both want stdout: send one of them to a file")
	}
	s, err := session.Open(pos[0])
	if err != nil {
		return err
	}
	d, ev, err := diagnoseSession(s, budget.bytes)
	if err != nil {
		return err
	}
	if *jsonOut != "" {
		if err := writeJSONTo(e, *jsonOut, d); err != nil {
			return err
		}
	}
	if *html == "" {
		if *jsonOut == "-" {
			return report.Text(e.stderr, d, report.TextOptions{})
		}
		return report.Text(e.stdout, d, report.TextOptions{Color: e.color})
	}
	return writeHTMLReport(e, s, ev, d, *html)
}

// writeJSONTo writes the diagnosis as JSON to path ("-" = stdout), a file for the user alone.
func writeJSONTo(e *env, path string, d *diagnose.Diagnosis) error {
	if path == "-" {
		return writeJSON(e.stdout, d)
	}
	f, err := createPrivate(path)
	if err != nil {
		return fmt.Errorf("--json %s: %w", path, err)
	}
	if err := writeJSON(f, d); err != nil {
		f.Close()
		return fmt.Errorf("--json %s: %w", path, err)
	}
	return f.Close()
}

// writeHTMLReport writes the HTML report of a diagnosed session to path ("-" = stdout),
// through a temporary file renamed into place, so a failed write leaves no half page.
func writeHTMLReport(e *env, s *session.Session, ev *evidence.Evidence, d *diagnose.Diagnosis, path string) error {
	opts := htmlOptions(e)
	if path == "-" {
		return report.HTML(e.stdout, s, ev, d, opts)
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("--html %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := report.HTML(tmp, s, ev, d, opts); err != nil {
		tmp.Close()
		return fmt.Errorf("--html %s: %w", path, err)
	}
	st, err := tmp.Stat()
	if err != nil {
		tmp.Close()
		return fmt.Errorf("--html %s: %w", path, err)
	}
	if err := tmp.Chmod(0o600); err != nil { // for the user alone, like the session's files
		tmp.Close()
		return fmt.Errorf("--html %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("--html %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("--html %s: %w", path, err)
	}
	fmt.Fprintf(e.stderr, "HTML report written to %s (%s)\n", path, report.Bytes(uint64(st.Size())))
	return nil
}

// htmlOptions are the report options for this machine: its time zone, named.
func htmlOptions(e *env) report.HTMLOptions {
	return report.HTMLOptions{Location: time.Local, ZoneName: localZoneName(e.getenv), Version: version()}
}

// localZoneName returns the IANA name of the local time zone when it can be known: from TZ,
// else from where /etc/localtime points; "" otherwise (the page then names the offset).
func localZoneName(getenv func(string) string) string {
	if tz := strings.TrimPrefix(getenv("TZ"), ":"); tz != "" {
		if filepath.IsAbs(tz) {
			return zoneFromPath(tz)
		}
		return tz
	}
	if target, err := os.Readlink("/etc/localtime"); err == nil {
		return zoneFromPath(target)
	}
	return ""
}

func zoneFromPath(p string) string {
	if _, after, ok := strings.Cut(p, "zoneinfo/"); ok {
		return after
	}
	return ""
}
