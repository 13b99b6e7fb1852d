package webui

import (
	"os"

	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/memdoctor/memdoctor/agent/wire"
	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/holders"
	"github.com/memdoctor/memdoctor/report"
	"github.com/memdoctor/memdoctor/session"
)

// DefaultMaxUIs bounds the pprof UIs kept at once; the least recently used goes first.
const DefaultMaxUIs = 8

// Options configure a Server.
type Options struct {
	// Token, when set, must come with every request (see the package doc). It must pass
	// wire.CheckToken, the rule the agent applies too.
	Token string
	// MaxUIs bounds the pprof UIs kept at once; 0 = DefaultMaxUIs.
	MaxUIs int
	// HTML tunes the report page; Serve is set by the server.
	HTML report.HTMLOptions
	// Logger receives pprof's messages; nil = discard.
	Logger *slog.Logger
}

// Server serves one session: its report at /, pprof's UI for snapshot N at /pprof/snap/N/,
// and for the difference of snapshots A and B (B minus A) at /pprof/diff/A/B/. N, A and B
// are indices in report.SnapshotRefs.
type Server struct {
	page    []byte
	refs    []session.ProfileRef
	holders string // the session's holders profile, when memdoctor holders saved one
	uis     *uiCache
	token   string
	views   chan struct{} // one pprof view built at a time
}

// New renders the session's report page (d, diagnosed from the evidence ev) and prepares the
// server.
func New(s *session.Session, ev *evidence.Evidence, d *diagnose.Diagnosis, opts Options) (*Server, error) {
	if opts.Token != "" {
		if err := wire.CheckToken(opts.Token); err != nil {
			return nil, fmt.Errorf("serve %s: %w", s.Dir, err)
		}
	}
	if opts.MaxUIs <= 0 {
		opts.MaxUIs = DefaultMaxUIs
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	opts.HTML.Serve = true
	var page bytes.Buffer
	if err := report.HTML(&page, s, ev, d, opts.HTML); err != nil {
		return nil, fmt.Errorf("serve %s: %w", s.Dir, err)
	}
	refs := report.SnapshotRefs(s)
	for i, r := range refs { // pprof opens them on a later request, wherever the process is by then
		if abs, err := filepath.Abs(r.Path); err == nil {
			refs[i].Path = abs
		}
	}
	holdersPath := ""
	if p, err := filepath.Abs(filepath.Join(s.Dir, holders.ProfileFile)); err == nil {
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			holdersPath = p
		}
	}
	return &Server{
		page:    page.Bytes(),
		refs:    refs,
		holders: holdersPath,
		uis:     newUICache(opts.MaxUIs, opts.Logger),
		token:   opts.Token,
		views:   make(chan struct{}, 1),
	}, nil
}

// Handler returns the server's handler, with the token or loopback check in front.
func (srv *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", srv.servePage)
	mux.HandleFunc("/pprof/snap/{id}/", srv.serveSnap)
	mux.HandleFunc("/pprof/diff/{a}/{b}/", srv.serveDiff)
	mux.HandleFunc("/pprof/holders/", srv.serveHolders)
	mux.HandleFunc("/pprof/holders", addSlash)
	mux.HandleFunc("/pprof/snap/{id}", addSlash)
	mux.HandleFunc("/pprof/diff/{a}/{b}", addSlash)
	return authorize(mux, srv.token)
}

func addSlash(w http.ResponseWriter, r *http.Request) {
	u := *r.URL
	u.Path += "/"
	http.Redirect(w, r, u.String(), http.StatusMovedPermanently)
}

func (srv *Server) servePage(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	w.Write(srv.page)
}

// snapshot returns the path of snapshot id (a decimal index).
func (srv *Server) snapshot(id string) (session.ProfileRef, bool) {
	i, err := strconv.Atoi(id)
	if err != nil || i < 0 || i >= len(srv.refs) {
		return session.ProfileRef{}, false
	}
	return srv.refs[i], true
}

func (srv *Server) serveSnap(w http.ResponseWriter, r *http.Request) {
	ref, ok := srv.snapshot(r.PathValue("id"))
	if !ok {
		http.Error(w, fmt.Sprintf("no snapshot %q: the session has %d (0 to %d)", r.PathValue("id"), len(srv.refs), len(srv.refs)-1), http.StatusNotFound)
		return
	}
	srv.servePprof(w, r, "snap/"+r.PathValue("id"), func() (*profile.Profile, error) { return srv.uis.fetch.snapshot(ref.Path) })
}

// serveHolders opens the paths memdoctor holders saved in the session in pprof's UI: its
// flame graph draws who holds what, the roots at the bottom.
func (srv *Server) serveHolders(w http.ResponseWriter, r *http.Request) {
	if srv.holders == "" {
		http.Error(w, "the session has no holders: memdoctor run and demo read them before they stop the program, memdoctor watch --holders at the end of a watch, and memdoctor holders --from SESSION_DIR PID from a process still running", http.StatusNotFound)
		return
	}
	srv.servePprof(w, r, "holders", func() (*profile.Profile, error) { return srv.uis.fetch.snapshot(srv.holders) })
}

func (srv *Server) serveDiff(w http.ResponseWriter, r *http.Request) {
	a, okA := srv.snapshot(r.PathValue("a"))
	b, okB := srv.snapshot(r.PathValue("b"))
	switch {
	case !okA || !okB:
		http.Error(w, fmt.Sprintf("no snapshots %q and %q: the session has %d (0 to %d)", r.PathValue("a"), r.PathValue("b"), len(srv.refs), len(srv.refs)-1), http.StatusNotFound)
		return
	case a.Kind != b.Kind:
		http.Error(w, fmt.Sprintf("snapshots %s and %s are a %s and a %s profile: diff two of the same kind", r.PathValue("a"), r.PathValue("b"), a.Kind, b.Kind), http.StatusBadRequest)
		return
	}
	srv.servePprof(w, r, "diff/"+r.PathValue("a")+"/"+r.PathValue("b"), func() (*profile.Profile, error) { return srv.uis.fetch.diff(a.Path, b.Path) })
}

// servePprof hands the request to the pprof UI of key (made from the profile build gives),
// mounted under /pprof/<key>, except the views it refuses (see refused). One view is built
// at a time: each can take tens of MiB, and a browser asks for several at once.
func (srv *Server) servePprof(w http.ResponseWriter, r *http.Request, key string, build source) {
	rest := strings.TrimPrefix(r.URL.Path, "/pprof/"+key)
	if refuse(w, rest) {
		return
	}
	select {
	case srv.views <- struct{}{}:
		defer func() { <-srv.views }()
	case <-r.Context().Done():
		return
	}
	ui, err := srv.uis.get(key, build)
	if err != nil {
		http.Error(w, "memdoctor serve: "+err.Error(), http.StatusInternalServerError)
		return
	}
	if rest == "" {
		rest = "/"
	}
	h := ui.handlers[rest]
	if h == nil {
		http.NotFound(w, r)
		return
	}
	r2 := r.Clone(r.Context())
	r2.URL.Path = rest
	r2.URL.RawPath = ""
	h.ServeHTTP(w, r2)
}
