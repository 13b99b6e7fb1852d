package webui

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"

	"github.com/google/pprof/driver"
)

// pprofUI is one instance of pprof's web UI: its handlers by path ("/", "/top", ...).
type pprofUI struct {
	once     sync.Once
	handlers map[string]http.Handler
	err      error
}

// uiCache creates pprof UIs on first use and keeps the max most recently used, those that
// failed included: a failure is not retried while it is kept, and the fetcher remembers the
// profiles that could not be read for good.
type uiCache struct {
	mu    sync.Mutex
	max   int
	order []string // least recently used first
	byKey map[string]*pprofUI
	log   *slog.Logger
	fetch *fetcher
}

func newUICache(max int, log *slog.Logger) *uiCache {
	return &uiCache{max: max, byKey: make(map[string]*pprofUI), log: log, fetch: newFetcher()}
}

// get returns the UI for key, creating it from the profile build makes when needed.
func (c *uiCache) get(key string, build source) (*pprofUI, error) {
	c.mu.Lock()
	ui, ok := c.byKey[key]
	if ok {
		c.touch(key)
	} else {
		ui = &pprofUI{}
		if len(c.order) >= c.max {
			delete(c.byKey, c.order[0])
			c.order = c.order[1:]
		}
		c.byKey[key] = ui
		c.order = append(c.order, key)
	}
	c.mu.Unlock()
	ui.once.Do(func() { ui.handlers, ui.err = startPprof(key, build, c.log) })
	return ui, ui.err
}

func (c *uiCache) touch(key string) {
	c.order = append(remove(c.order, key), key)
}

func (c *uiCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.byKey)
}

func remove(s []string, v string) []string {
	out := s[:0]
	for _, x := range s {
		if x != v {
			out = append(out, x)
		}
	}
	return out
}

// startPprof runs pprof's driver on the profile fetch gives (named key) with the web UI flags,
// and returns the handlers it would have served: the HTTPServer option hands them over
// instead of listening. No binary is opened.
func startPprof(key string, fetch source, log *slog.Logger) (map[string]http.Handler, error) {
	var handlers map[string]http.Handler
	ui := &quietUI{log: log}
	full := []string{"-http=127.0.0.1:0", "-no_browser", "-symbolize=none", key}
	err := driver.PProf(&driver.Options{
		Flagset: newFlagSet(full),
		Fetch:   fetch,
		Obj:     noObj{},
		UI:      ui,
		HTTPServer: func(a *driver.HTTPServerArgs) error {
			handlers = a.Handlers
			return nil
		},
	})
	if err == nil && handlers == nil {
		err = errors.New("pprof started no web UI")
	}
	if err != nil {
		if msg := ui.lastError(); msg != "" {
			err = fmt.Errorf("%w: %s", err, msg)
		}
		return nil, fmt.Errorf("pprof %s: %w", key, err)
	}
	return handlers, nil
}

// flagSet gives pprof's driver a command line of our making (driver.FlagSet).
type flagSet struct {
	fs    *flag.FlagSet
	args  []string
	extra []string
}

func newFlagSet(args []string) *flagSet {
	fs := flag.NewFlagSet("pprof", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return &flagSet{fs: fs, args: args}
}

func (f *flagSet) Bool(name string, def bool, usage string) *bool { return f.fs.Bool(name, def, usage) }
func (f *flagSet) Int(name string, def int, usage string) *int    { return f.fs.Int(name, def, usage) }
func (f *flagSet) Float64(name string, def float64, usage string) *float64 {
	return f.fs.Float64(name, def, usage)
}
func (f *flagSet) String(name, def, usage string) *string { return f.fs.String(name, def, usage) }
func (f *flagSet) StringList(name, def, usage string) *[]*string {
	return &[]*string{f.fs.String(name, def, usage)}
}
func (f *flagSet) ExtraUsage() string      { return strings.Join(f.extra, "\n") }
func (f *flagSet) AddExtraUsage(eu string) { f.extra = append(f.extra, eu) }
func (f *flagSet) Parse(usage func()) []string {
	if err := f.fs.Parse(f.args); err != nil || f.fs.NArg() == 0 {
		usage()
		return nil
	}
	return f.fs.Args()
}

// quietUI is pprof's UI with no terminal: messages go to the logger, and the last error is
// kept for the HTTP answer.
type quietUI struct {
	log  *slog.Logger
	mu   sync.Mutex
	last string
}

func (u *quietUI) ReadLine(string) (string, error) { return "", io.EOF }
func (u *quietUI) Print(args ...any)               { u.log.Debug("pprof", "msg", fmt.Sprint(args...)) }
func (u *quietUI) PrintErr(args ...any) {
	msg := strings.TrimSpace(fmt.Sprint(args...))
	u.log.Debug("pprof", "err", msg)
	u.mu.Lock()
	u.last = msg
	u.mu.Unlock()
}
func (u *quietUI) IsTerminal() bool                    { return false }
func (u *quietUI) WantBrowser() bool                   { return false }
func (u *quietUI) SetAutoComplete(func(string) string) {}

func (u *quietUI) lastError() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.last
}
