package agent

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"
)

// Prefix is the path the agent's endpoints live under.
const Prefix = "/debug/memdoctor/"

// Handler serves the agent's data under /debug/memdoctor/ (see the package documentation
// for the endpoints). Mount it on that path: mux.Handle("/debug/memdoctor/", a.Handler()).
// With WithToken, every request must carry the bearer token.
func (a *Agent) Handler() http.Handler {
	var h http.Handler = http.HandlerFunc(a.serve)
	if a.cfg.token != "" {
		h = requireToken(a.cfg.token, h)
	}
	return h
}

func (a *Agent) serve(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			a.log.Error("memdoctor agent: recovered from a panic in the handler", "path", r.URL.Path, "panic", p)
		}
	}()
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		httpError(w, http.StatusMethodNotAllowed, "only GET is served here")
		return
	}
	i := strings.Index(r.URL.Path, Prefix)
	if i < 0 {
		httpError(w, http.StatusNotFound, "the memdoctor agent serves "+Prefix)
		return
	}
	rest := r.URL.Path[i+len(Prefix):]
	w.Header().Set("X-Memdoctor-Agent", "1")
	switch {
	case rest == "":
		writeJSON(w, a.Info())
	case rest == "metrics":
		a.serveMetrics(w, r)
	case rest == "profiles":
		writeJSON(w, a.Profiles())
	case strings.HasPrefix(rest, "profiles/"):
		name := strings.TrimPrefix(rest, "profiles/")
		serveBytes(w, name, "application/octet-stream", a.store.writeTo)
	case rest == "events":
		writeJSON(w, a.Events())
	case rest == "traces":
		writeJSON(w, a.Traces())
	case strings.HasPrefix(rest, "traces/"):
		name := strings.TrimPrefix(rest, "traces/")
		if a.flight == nil {
			httpError(w, http.StatusNotFound, "no trace "+name+": the flight recorder is off")
			return
		}
		serveBytes(w, name, "application/octet-stream", a.flight.writeTo)
	case rest == "breakdown":
		writeJSON(w, a.Breakdown())
	case rest == "stats":
		writeJSON(w, a.Stats())
	default:
		httpError(w, http.StatusNotFound, "unknown memdoctor agent endpoint "+r.URL.Path)
	}
}

// serveMetrics streams the samples taken after ?since= (RFC 3339; all held when absent) as
// JSON lines, one session.Sample each, copying one sample at a time out of the ring.
func (a *Agent) serveMetrics(w http.ResponseWriter, r *http.Request) {
	var since time.Time
	if v := r.URL.Query().Get("since"); v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			httpError(w, http.StatusBadRequest, "since="+v+": want an RFC 3339 time such as 2026-11-22T10:00:00.5Z")
			return
		}
		since = t
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	if r.Method == http.MethodHead {
		return
	}
	bw := bufio.NewWriterSize(w, 16<<10)
	enc := json.NewEncoder(bw)
	seq, end := a.ring.firstAfter(since)
	var s slot
	for ; seq < end; seq++ {
		if !a.ring.get(seq, &s) || !s.t.After(since) {
			continue // rotated out while streaming, or the clock stepped back
		}
		if err := enc.Encode(s.sample()); err != nil {
			return // the client went away
		}
	}
	bw.Flush()
}

// serveBytes serves a named blob with write (found is false for an unknown name).
func serveBytes(w http.ResponseWriter, name, ctype string, write func(string, io.Writer) (bool, error)) {
	if name == "" || strings.ContainsAny(name, "/\\") {
		httpError(w, http.StatusNotFound, "bad name "+name)
		return
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	// write calls w.Write only for a known name: the 404 below can still set its status.
	if found, _ := write(name, w); !found {
		w.Header().Del("Content-Disposition")
		httpError(w, http.StatusNotFound, "no such item "+name+" (it may have rotated out)")
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func httpError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}
