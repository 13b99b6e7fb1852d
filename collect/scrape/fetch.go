package scrape

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"sync/atomic"
	"time"
)

const userAgent = "memdoctor-scrape/1"

// consumeFunc reads a 2xx body, already capped at the client's limit.
type consumeFunc func(body io.Reader, resp *http.Response) error

// get fetches u, retrying as configured, and hands a 2xx body to consume.
// name is the profile name, "" for the index. extra lengthens the
// per-request timeout (for seconds=N profiles).
func (c *Client) get(ctx context.Context, u *url.URL, name string, extra time.Duration, consume consumeFunc) error {
	for attempt := 1; ; attempt++ {
		retry, after, err := c.try(ctx, u, name, extra, consume)
		if err == nil {
			return nil
		}
		if !retry || attempt >= c.attempts {
			if attempt > 1 {
				return fmt.Errorf("%w (%d attempts)", err, attempt)
			}
			return err
		}
		if werr := sleep(ctx, c.retryDelay(attempt, after)); werr != nil {
			return fmt.Errorf("%w (retries abandoned after %d attempts: %w)", err, attempt, werr)
		}
	}
}

// try makes one attempt. It reports whether another attempt may help and
// how long the server asked to wait (Retry-After).
func (c *Client) try(ctx context.Context, u *url.URL, name string, extra time.Duration, consume consumeFunc) (retry bool, after time.Duration, err error) {
	limit := c.timeout + extra
	actx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var pr progress
	actx = httptrace.WithClientTrace(actx, pr.trace())
	req, err := http.NewRequestWithContext(actx, http.MethodGet, u.String(), nil)
	if err != nil {
		return false, 0, fmt.Errorf("GET %s: %w", u.Redacted(), err)
	}
	req.Header.Set("User-Agent", userAgent)
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		retry, err := c.transportErr(ctx, actx, u, err, &pr, limit, 0)
		return retry, 0, err
	}
	defer drainClose(resp.Body)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return retryableStatus(resp.StatusCode), retryAfter(resp), c.statusErr(u, name, resp)
	}
	if resp.ContentLength > c.maxBody {
		return false, 0, fmt.Errorf("GET %s: %w: the body is %d bytes, over the limit of %s",
			u.Redacted(), ErrTooLarge, resp.ContentLength, formatBytes(c.maxBody))
	}
	body := &countingReader{r: resp.Body}
	err = consume(newLimitReader(body, c.maxBody), resp)
	if err == nil {
		return false, 0, nil
	}
	if body.err != nil && !errors.Is(err, ErrTooLarge) {
		retry, err := c.transportErr(ctx, actx, u, body.err, &pr, limit, body.n)
		return retry, 0, err
	}
	return false, 0, fmt.Errorf("GET %s: %w", u.Redacted(), err)
}

// progress records how far a request got, to explain a timeout.
type progress struct {
	conn, firstByte atomic.Bool
}

func (p *progress) trace() *httptrace.ClientTrace {
	return &httptrace.ClientTrace{
		GotConn:              func(httptrace.GotConnInfo) { p.conn.Store(true) },
		GotFirstResponseByte: func() { p.firstByte.Store(true) },
	}
}

// statusErr reads the start of a non-2xx body into a *StatusError.
func (c *Client) statusErr(u *url.URL, name string, resp *http.Response) *StatusError {
	head, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	se := &StatusError{URL: u.Redacted(), StatusCode: resp.StatusCode, Snippet: snippet(head), hint: statusHint(resp.StatusCode)}
	if resp.StatusCode == http.StatusNotFound {
		se.hint = notFoundHint(name, resp, head)
	}
	return se
}

const noPprofHint = `no pprof here: the service must import _ "net/http/pprof" (which serves it on http.DefaultServeMux) or register the net/http/pprof handlers on its own mux`

func notFoundHint(name string, resp *http.Response, head []byte) string {
	// net/http/pprof answers an unknown profile with 404 "Unknown profile"
	// and the header X-Go-Pprof: 1.
	if name != "" && (resp.Header.Get("X-Go-Pprof") == "1" || string(head) == "Unknown profile\n") {
		return fmt.Sprintf("the service serves pprof but has no %q profile", name)
	}
	return noPprofHint
}

// retryAfter parses a Retry-After header: seconds or an HTTP date.
func retryAfter(resp *http.Response) time.Duration {
	v := resp.Header.Get("Retry-After")
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil && secs > 0 {
		return time.Duration(min(secs, int64(maxBackoff/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(0, min(time.Until(t), maxBackoff))
	}
	return 0
}
