package promapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
)

// Auth is how memdoctor authenticates to the API: a bearer token, or basic auth (not both),
// and extra headers (a tenant for Mimir or Cortex: X-Scope-OrgID).
type Auth struct {
	BearerToken        string
	Username, Password string
	Headers            http.Header
}

// DefaultMaxResponseBytes bounds one API response's body (see Config.MaxResponseBytes).
const DefaultMaxResponseBytes = 32 << 20

// client is the API with the URL it talks to, for error messages.
type client struct {
	api     v1.API
	url     string
	timeout time.Duration
	log     *slog.Logger
}

// newClient returns a client of the API at rawURL: its base, under which /api/v1/ lives
// (http://prometheus:9090, https://thanos.example.com/, https://mimir.example.com/prometheus).
func newClient(rawURL string, auth Auth, maxBody int64, timeout time.Duration) (*client, error) {
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q is not a Prometheus URL: want http(s)://HOST[:PORT][/PATH], the base under which /api/v1/ lives", rawURL)
	}
	if u.User != nil {
		return nil, fmt.Errorf("%s: put credentials in --basic-auth, not in the URL", redact(u))
	}
	if auth.BearerToken != "" && auth.Username != "" {
		return nil, errors.New("a bearer token and basic auth together: give one")
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.Path = strings.TrimSuffix(u.Path, "/api/v1")
	if maxBody <= 0 {
		maxBody = DefaultMaxResponseBytes
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	tr.TLSHandshakeTimeout = 10 * time.Second
	tr.ResponseHeaderTimeout = timeout
	rt := &boundedTransport{next: tr, auth: auth, max: maxBody}
	c, err := api.NewClient(api.Config{Address: u.String(), RoundTripper: rt})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", u, err)
	}
	return &client{api: v1.NewAPI(c), url: u.String(), timeout: timeout, log: slog.New(slog.DiscardHandler)}, nil
}

// redact returns a URL without its user info.
func redact(u *url.URL) string {
	c := *u
	c.User = nil
	return c.String()
}

// boundedTransport adds the credentials and headers to each request and bounds each
// response's body: the API is trusted with nothing, its size included.
type boundedTransport struct {
	next http.RoundTripper
	auth Auth
	max  int64
}

func (t *boundedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, vs := range t.auth.Headers {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	switch {
	case t.auth.BearerToken != "":
		req.Header.Set("Authorization", "Bearer "+t.auth.BearerToken)
	case t.auth.Username != "":
		req.SetBasicAuth(t.auth.Username, t.auth.Password)
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.ContentLength > t.max {
		resp.Body.Close()
		return nil, &tooLargeError{max: t.max}
	}
	resp.Body = &limitedBody{rc: resp.Body, left: t.max}
	return resp, nil
}

// tooLargeError is a response body past the bound.
type tooLargeError struct{ max int64 }

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("response larger than %d MiB", e.max>>20)
}

// limitedBody fails once more than its bound was read.
type limitedBody struct {
	rc   io.ReadCloser
	left int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, &tooLargeError{}
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n, &tooLargeError{}
	}
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }

// explain turns an API or transport error into one line naming the URL and what to do.
func (c *client) explain(what string, err error) error {
	var apiErr *v1.Error
	var tooLarge *tooLargeError
	var netErr net.Error
	var dnsErr *net.DNSError
	var opErr *net.OpError
	switch {
	case errors.As(err, &tooLarge):
		return fmt.Errorf("%s: %s: the response is too large: narrow --selector or shorten --window", c.url, what)
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &netErr) && netErr.Timeout():
		return fmt.Errorf("%s: %s: no answer within %s: is the server overloaded? try a smaller --selector or --window", c.url, what, c.timeout)
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("%s: %s: interrupted", c.url, what)
	case errors.As(err, &dnsErr):
		return fmt.Errorf("%s: cannot resolve %s: check the --prometheus URL", c.url, dnsErr.Name)
	case errors.As(err, &opErr):
		return fmt.Errorf("%s: cannot connect (%v): check the --prometheus URL and that the server runs", c.url, opErr.Err)
	case errors.As(err, &apiErr):
		return c.explainAPI(what, apiErr)
	}
	return fmt.Errorf("%s: %s: %w", c.url, what, err)
}

func (c *client) explainAPI(what string, e *v1.Error) error {
	status := firstLine(e.Msg)
	switch {
	case strings.Contains(e.Msg, ": 401") || strings.Contains(e.Msg, ": 403"):
		return fmt.Errorf("%s: %s: %s: check --bearer-token, --bearer-token-file or --basic-auth (and --header for a tenant)", c.url, what, status)
	case strings.Contains(e.Msg, ": 404"):
		return fmt.Errorf("%s: %s: %s: is it the base URL of a Prometheus-compatible API (the one under which /api/v1/query lives)?", c.url, what, status)
	case e.Type == v1.ErrBadData:
		return fmt.Errorf("%s: %s: the server refused the query (%s): check --selector", c.url, what, status)
	case e.Type == v1.ErrBadResponse:
		return fmt.Errorf("%s: %s: not a Prometheus API response (%s): check the --prometheus URL", c.url, what, status)
	}
	return fmt.Errorf("%s: %s: %s", c.url, what, status)
}

// firstLine keeps the first line of a message from the server, at most 200 bytes.
func firstLine(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return sanitize(s)
}
