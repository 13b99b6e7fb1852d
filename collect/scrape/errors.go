package scrape

import (
	"errors"
	"fmt"
	"net/http"
)

// Sentinel errors. Errors returned by this package wrap one of them (or are a
// *StatusError); test with errors.Is.
var (
	// ErrUnreachable: no HTTP response at all (connection refused or reset,
	// unknown host, no connection within the timeout).
	ErrUnreachable = errors.New("service not reachable")
	// ErrTimeout: the per-request timeout expired. When it expired before a
	// connection was made the error also wraps ErrUnreachable.
	ErrTimeout = errors.New("timed out")
	// ErrNotFound: the endpoint answered 404.
	ErrNotFound = errors.New("not found (HTTP 404)")
	// ErrNotPprof: something answered at the base URL, but not the
	// net/http/pprof index.
	ErrNotPprof = errors.New("not a net/http/pprof index")
	// ErrNotProfile: the body is not a pprof profile (an HTML page, text, a
	// legacy text profile, an empty body).
	ErrNotProfile = errors.New("not a pprof profile")
	// ErrCorruptProfile: the body looks like a profile (gzip or protobuf) but
	// does not decode: truncated gzip, bad protobuf, invalid profile.
	ErrCorruptProfile = errors.New("corrupt pprof profile")
	// ErrUnexpectedProfile: a valid profile, but not the kind asked for (for
	// example a heap profile without the four heap sample types).
	ErrUnexpectedProfile = errors.New("unexpected profile")
	// ErrTooLarge: the body (or a decompressed profile) exceeds the limit set
	// with WithMaxBodyBytes.
	ErrTooLarge = errors.New("response too large")
	// ErrNoMemStats: a heap?debug=1 body without the "# Alloc = " line of the
	// runtime.MemStats block.
	ErrNoMemStats = errors.New(`no runtime.MemStats block ("# Alloc = " line)`)
)

// StatusError is a response with a status other than 2xx. A 404 unwraps to
// ErrNotFound.
type StatusError struct {
	URL        string // the URL requested, password redacted
	StatusCode int
	Snippet    string // the start of the body, sanitised and quoted
	hint       string
}

func (e *StatusError) Error() string {
	msg := fmt.Sprintf("GET %s: HTTP %d %s", e.URL, e.StatusCode, http.StatusText(e.StatusCode))
	if e.hint != "" {
		msg += ": " + e.hint
	}
	if e.Snippet != "" && e.Snippet != `""` {
		msg += "; body: " + e.Snippet
	}
	return msg
}

// Unwrap returns ErrNotFound for a 404, nil otherwise.
func (e *StatusError) Unwrap() error {
	if e.StatusCode == http.StatusNotFound {
		return ErrNotFound
	}
	return nil
}

// retryableStatus reports whether a status is worth another attempt.
func retryableStatus(code int) bool {
	return code == http.StatusTooManyRequests || code >= 500 && code <= 599
}

// statusHint explains the common non-2xx statuses.
func statusHint(code int) string {
	switch code {
	case http.StatusUnauthorized, http.StatusForbidden:
		return "the endpoint needs credentials (a bearer token)"
	case http.StatusTooManyRequests:
		return "the service is rate limiting"
	case http.StatusMethodNotAllowed:
		return "the endpoint does not accept GET"
	}
	return ""
}
