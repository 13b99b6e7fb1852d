//go:build nopprof

package lab

import (
	"errors"
	"log/slog"
	"net/http"
	"os"
)

// Built with the nopprof tag, a scenario links no profiling at all (neither runtime/pprof nor
// net/http/pprof, nor memdoctor's agent): the program a production service that serves
// nothing is, whose heap profiling is off (runtime.MemProfileRate 0). memdoctor reads it by
// its PID, from its memory (internal/dev/labrun).

// servingFormat is the scenario's first line.
const servingFormat = "lab: %s serving on http://%s (no pprof)\n"

func servePprof(*http.ServeMux) {}

func mountAgent(_ *http.ServeMux, _ *slog.Logger, _ string) (func(), error) {
	if v := os.Getenv(AgentEnv); v != "" && v != "0" {
		return nil, errors.New(AgentEnv + " is set, but this lab program is built without profiling (the nopprof tag): it embeds no agent")
	}
	return func() {}, nil
}

func detectLeaks() {}
