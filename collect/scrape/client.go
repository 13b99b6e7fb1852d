package scrape

import (
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// Client scrapes one service. Safe for concurrent use: it is not modified
// after New.
type Client struct {
	base     *url.URL // the pprof index, ending in "/debug/pprof/"
	hc       *http.Client
	timeout  time.Duration
	attempts int
	backoff  time.Duration
	token    string
	maxBody  int64
	optErr   error // the first invalid option, reported by New
}

// New returns a client for the service at rawURL. The URL is normalised to
// the pprof index: "http://127.0.0.1:6060", "127.0.0.1:6060",
// "http://h:6060/debug/pprof", "http://h:6060/debug/pprof/" and
// "http://h:6060/custom/prefix/debug/pprof/" all give an index URL ending in
// "/debug/pprof/" (a path without "/debug/pprof" gets it appended). Only
// http and https are supported; a URL without a host, with a bad port, a
// query, or pointing at a single profile is an error.
func New(rawURL string, opts ...Option) (*Client, error) {
	base, err := parseBaseURL(rawURL)
	if err != nil {
		return nil, err
	}
	c := &Client{
		base:     base,
		timeout:  DefaultTimeout,
		attempts: DefaultAttempts,
		backoff:  DefaultBackoff,
		maxBody:  DefaultMaxBodyBytes,
	}
	for _, opt := range opts {
		opt(c)
	}
	if c.optErr != nil {
		return nil, fmt.Errorf("scrape client for %s: %w", base.Redacted(), c.optErr)
	}
	if c.hc == nil {
		c.hc = defaultHTTPClient()
	}
	return c, nil
}

// BaseURL returns the pprof index URL, ending in "/debug/pprof/", with any
// password redacted.
func (c *Client) BaseURL() string {
	return c.base.Redacted()
}

// hostPort names the service in hints.
func (c *Client) hostPort() string {
	if c.base.Port() != "" {
		return c.base.Host
	}
	if c.base.Scheme == "https" {
		return c.base.Host + ":443"
	}
	return c.base.Host + ":80"
}
