package agentclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/memdoctor/memdoctor/agent/breakdown"
	"github.com/memdoctor/memdoctor/agent/wire"
	"github.com/memdoctor/memdoctor/collect/pprofio"
	"github.com/memdoctor/memdoctor/session"
)

// Errors that callers may test for with errors.Is.
var (
	// ErrNotAgent: something answered, but not a memdoctor agent (404, or another page).
	ErrNotAgent = errors.New("no memdoctor agent here")
	// ErrUnauthorized: the agent wants a bearer token, or a different one.
	ErrUnauthorized = errors.New("the memdoctor agent refused the request (401): pass its token with --token or MEMDOCTOR_TOKEN")
	// ErrNotFound: the agent no longer holds the item (it rotated out).
	ErrNotFound = errors.New("not found")
	// ErrTooLarge: a body exceeded the client's limit, or a profile pprofio's.
	ErrTooLarge = errors.New("response too large")
	// ErrNotProfile: a profile the agent served is not a valid pprof profile.
	ErrNotProfile = errors.New("not a pprof profile")
)

// Defaults.
const (
	DefaultTimeout      = 30 * time.Second
	DefaultMaxBodyBytes = 256 << 20
)

// Client talks to one agent. It is safe for concurrent use.
type Client struct {
	base    *url.URL // ends in "/debug/memdoctor/"
	hc      *http.Client
	token   string
	timeout time.Duration
	maxBody int64
	optErr  error
}

// Option configures a Client.
type Option func(*Client)

// WithToken sends "Authorization: Bearer <token>" with each request. An empty token sends
// nothing.
func WithToken(token string) Option {
	return func(c *Client) {
		if strings.ContainsAny(token, " \t\r\n") {
			c.optErr = errors.New("WithToken: the token has a space or a line break")
			return
		}
		c.token = token
	}
}

// WithHTTPClient sets the HTTP client (default http.DefaultClient's transport).
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) {
		if hc == nil {
			c.optErr = errors.New("WithHTTPClient(nil)")
			return
		}
		c.hc = hc
	}
}

// WithTimeout bounds each request, body included (default 30s).
func WithTimeout(d time.Duration) Option {
	return func(c *Client) {
		if d <= 0 {
			c.optErr = fmt.Errorf("WithTimeout(%v): must be positive", d)
			return
		}
		c.timeout = d
	}
}

// WithMaxBodyBytes caps a response body other than the metrics stream (default 256 MiB).
func WithMaxBodyBytes(n int64) Option {
	return func(c *Client) {
		if n <= 0 {
			c.optErr = fmt.Errorf("WithMaxBodyBytes(%d): must be positive", n)
			return
		}
		c.maxBody = n
	}
}

// New returns a client for the agent at rawURL: a service's base URL ("http://host:6060",
// "host:6060"), its agent URL (".../debug/memdoctor/") or its pprof URL (".../debug/pprof/",
// the agent is then looked for beside it).
func New(rawURL string, opts ...Option) (*Client, error) {
	u, err := AgentURL(rawURL)
	if err != nil {
		return nil, err
	}
	c := &Client{base: u, hc: http.DefaultClient, timeout: DefaultTimeout, maxBody: DefaultMaxBodyBytes}
	for _, o := range opts {
		o(c)
	}
	if c.optErr != nil {
		return nil, fmt.Errorf("agent client for %s: %w", u.Redacted(), c.optErr)
	}
	return c, nil
}

// BaseURL returns the agent's URL, ending in "/debug/memdoctor/", any password redacted.
func (c *Client) BaseURL() string { return c.base.Redacted() }

// get fetches path (relative to the base) and hands a 200 body to read.
func (c *Client) get(ctx context.Context, path string, query url.Values, read func(io.Reader) error) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	u := c.base.JoinPath(path)
	if path == "" {
		u = c.base
	}
	u.RawQuery = query.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return fmt.Errorf("GET %s: %w", u.Redacted(), err)
	}
	req.Header.Set("User-Agent", "memdoctor-agentclient/1")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("GET %s: %w", u.Redacted(), err)
	}
	defer func() {
		_, _ = io.CopyN(io.Discard, resp.Body, 64<<10)
		resp.Body.Close()
	}()
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		return fmt.Errorf("GET %s: %w", u.Redacted(), ErrUnauthorized)
	case resp.StatusCode == http.StatusNotFound && resp.Header.Get("X-Memdoctor-Agent") == "1":
		return fmt.Errorf("GET %s: %w: %s", u.Redacted(), ErrNotFound, errorText(resp.Body))
	case resp.StatusCode == http.StatusNotFound:
		return fmt.Errorf("GET %s: %w (404)", u.Redacted(), ErrNotAgent)
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("GET %s: status %d: %s", u.Redacted(), resp.StatusCode, errorText(resp.Body))
	}
	if err := read(resp.Body); err != nil {
		return fmt.Errorf("GET %s: %w", u.Redacted(), err)
	}
	return nil
}

// errorText reads the agent's {"error": "..."} or the start of another body.
func errorText(r io.Reader) string {
	b, _ := io.ReadAll(io.LimitReader(r, 512))
	var e struct{ Error string }
	if json.Unmarshal(b, &e) == nil && e.Error != "" {
		return e.Error
	}
	return strings.TrimSpace(string(b))
}

// maxJSONBytes caps the agent's JSON bodies (its description and lists: kilobytes in
// practice); decoded, a JSON list takes several times its size.
const maxJSONBytes = 8 << 20

// getJSON decodes a capped JSON body into v.
func (c *Client) getJSON(ctx context.Context, path string, v any) error {
	return c.get(ctx, path, nil, func(r io.Reader) error {
		b, err := readCapped(r, min(c.maxBody, maxJSONBytes))
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, v); err != nil {
			return fmt.Errorf("%w: the body is not the agent's JSON: %v", ErrNotAgent, err)
		}
		return nil
	})
}

// readCapped reads r to its end, failing with ErrTooLarge past limit bytes. Its buffer
// doubles up to the limit, so a body of N bytes costs at most about 2N.
func readCapped(r io.Reader, limit int64) ([]byte, error) {
	buf := make([]byte, 0, min(limit+1, 64<<10))
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, int(min(int64(cap(buf)), limit+1-int64(len(buf)))))
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > limit {
			return nil, fmt.Errorf("%w: over %d bytes", ErrTooLarge, limit)
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// Info reads the agent's description; it is the probe: the error wraps ErrNotAgent when
// what answered is not a memdoctor agent.
func (c *Client) Info(ctx context.Context) (wire.Info, error) {
	var in wire.Info
	if err := c.getJSON(ctx, "", &in); err != nil {
		return wire.Info{}, err
	}
	if in.Agent != "memdoctor" {
		return wire.Info{}, fmt.Errorf("GET %s: %w: the JSON does not describe a memdoctor agent", c.BaseURL(), ErrNotAgent)
	}
	if in.Version > wire.Version {
		return in, fmt.Errorf("GET %s: the agent speaks contract version %d, this memdoctor knows %d: upgrade memdoctor", c.BaseURL(), in.Version, wire.Version)
	}
	return in, nil
}

// Profiles lists the profiles the agent holds.
func (c *Client) Profiles(ctx context.Context) ([]wire.ProfileInfo, error) {
	var out []wire.ProfileInfo
	return out, c.getJSON(ctx, "profiles", &out)
}

// Events lists the agent's trigger events.
func (c *Client) Events(ctx context.Context) ([]wire.Event, error) {
	var out []wire.Event
	return out, c.getJSON(ctx, "events", &out)
}

// Traces lists the agent's flight-recorder snapshots.
func (c *Client) Traces(ctx context.Context) ([]wire.TraceInfo, error) {
	var out []wire.TraceInfo
	return out, c.getJSON(ctx, "traces", &out)
}

// Breakdown reads the breakdown of the agent's latest sample.
func (c *Client) Breakdown(ctx context.Context) (breakdown.At, error) {
	var out breakdown.At
	return out, c.getJSON(ctx, "breakdown", &out)
}

// Profile fetches a profile's bytes (gzipped proto) as the agent holds them, after checking
// that they are a valid profile within pprofio's bounds (the decompressed size, the memory
// parsing takes): the error wraps ErrTooLarge or ErrNotProfile when they are not.
func (c *Client) Profile(ctx context.Context, name string) ([]byte, error) {
	lim := pprofio.Default
	lim.Compressed = min(lim.Compressed, c.maxBody)
	lim.Decompressed = min(lim.Decompressed, c.maxBody)
	raw, err := c.blob(ctx, "profiles", name, lim.Compressed)
	if err != nil {
		return nil, err
	}
	what := fmt.Sprintf("profile %q", name) // the agent's name, quoted
	data, err := lim.Decode(what, raw)
	if err == nil {
		_, err = lim.ParseProto(what, data)
	}
	switch {
	case errors.Is(err, pprofio.ErrTooLarge):
		return nil, fmt.Errorf("%w: %w", ErrTooLarge, err)
	case err != nil:
		return nil, fmt.Errorf("%w: %w", ErrNotProfile, err)
	}
	return raw, nil
}

// Trace fetches a flight-recorder snapshot's bytes: at most session.MaxTraceBytes (what a
// session stores), else the error wraps ErrTooLarge.
func (c *Client) Trace(ctx context.Context, name string) ([]byte, error) {
	return c.blob(ctx, "traces", name, min(c.maxBody, session.MaxTraceBytes))
}

func (c *Client) blob(ctx context.Context, dir, name string, limit int64) ([]byte, error) {
	if name == "" || strings.ContainsAny(name, "/\\?#") || name == "." || name == ".." {
		return nil, fmt.Errorf("bad %s name %q", dir, name)
	}
	var out []byte
	err := c.get(ctx, dir+"/"+name, nil, func(r io.Reader) (err error) {
		out, err = readCapped(r, limit)
		return err
	})
	return out, err
}
