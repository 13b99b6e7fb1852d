package scrape

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// Defaults.
const (
	DefaultTimeout      = 10 * time.Second
	DefaultAttempts     = 3
	DefaultBackoff      = 250 * time.Millisecond
	DefaultMaxBodyBytes = 256 << 20
	maxBackoff          = 30 * time.Second
)

// Option configures a Client. An invalid value makes New fail.
type Option func(*Client)

// WithHTTPClient sets the HTTP client. Its Timeout, if any, applies on top
// of WithTimeout; its redirect policy and transport are used as they are.
// The default has no global timeout and keeps connections alive.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) {
		if hc == nil {
			c.fail(errors.New("WithHTTPClient(nil)"))
			return
		}
		c.hc = hc
	}
}

// WithTimeout bounds each request, body included (default 10s). A profile
// asked for with seconds=N gets N more seconds. Timeouts are not retried:
// a target too slow to answer is not helped by asking again.
func WithTimeout(d time.Duration) Option {
	return func(c *Client) {
		if d <= 0 {
			c.fail(fmt.Errorf("WithTimeout(%v): the timeout must be positive", d))
			return
		}
		c.timeout = d
	}
}

// WithRetries sets the number of attempts per request, the first included
// (default 3; 1 disables retries), and the backoff before the second attempt
// (default 250ms), doubled for each further attempt, jittered by ±25% and
// capped at 30s; a Retry-After header can lengthen it (up to that cap).
// Only network failures (no response) and 5xx/429 statuses are retried,
// never a 404, another 4xx, a timeout or a body that is not a profile.
func WithRetries(n int, backoff time.Duration) Option {
	return func(c *Client) {
		if n < 1 || backoff < 0 {
			c.fail(fmt.Errorf("WithRetries(%d, %v): want at least 1 attempt and a backoff >= 0", n, backoff))
			return
		}
		c.attempts, c.backoff = n, backoff
	}
}

// WithBearerToken sends "Authorization: Bearer <token>" with each request
// (memdoctor agent endpoints need it when bound beyond loopback).
func WithBearerToken(token string) Option {
	return func(c *Client) {
		if token == "" {
			c.fail(errors.New("WithBearerToken: empty token"))
			return
		}
		for i := 0; i < len(token); i++ {
			if token[i] <= ' ' || token[i] >= 0x7f {
				c.fail(errors.New("WithBearerToken: the token has a space, control or non-ASCII character"))
				return
			}
		}
		c.token = token
	}
}

// WithMaxBodyBytes caps a response body (default 256 MiB), and the
// decompressed size of a gzipped profile. A larger one is an ErrTooLarge
// error; nothing is buffered past the limit.
func WithMaxBodyBytes(n int64) Option {
	return func(c *Client) {
		if n <= 0 {
			c.fail(fmt.Errorf("WithMaxBodyBytes(%d): the limit must be positive", n))
			return
		}
		c.maxBody = n
	}
}

func (c *Client) fail(err error) {
	if c.optErr == nil {
		c.optErr = err
	}
}

// defaultHTTPClient is shared by every Client without WithHTTPClient, so
// they share one connection pool.
var defaultHTTPClient = sync.OnceValue(func() *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		DialContext: (&net.Dialer{
			Timeout:   30 * time.Second,
			KeepAlive: 30 * time.Second,
		}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          32,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}}
})
