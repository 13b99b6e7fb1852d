package scrape

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/url"
	"strings"
	"time"
)

// retryDelay is the wait before attempt+1: the backoff doubled per attempt,
// jittered by ±25%, capped, and at least what Retry-After asked for.
func (c *Client) retryDelay(attempt int, after time.Duration) time.Duration {
	d := c.backoff
	for i := 1; i < attempt && d < maxBackoff; i++ {
		d *= 2
	}
	d = min(d, maxBackoff)
	if d > 0 {
		d = d*3/4 + rand.N(d/2+1)
	}
	return max(d, min(after, maxBackoff))
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return context.Cause(ctx)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}

// transportErr explains a request that got no (complete) response: the
// caller's context ended, the per-request timeout expired, or the network
// failed. nread is how much of the body had arrived.
func (c *Client) transportErr(ctx, actx context.Context, u *url.URL, err error, pr *progress, limit time.Duration, nread int64) (retry bool, _ error) {
	where := "GET " + u.Redacted()
	if ctx.Err() != nil {
		return false, fmt.Errorf("%s: %w", where, context.Cause(ctx))
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // it repeats the URL
	}
	unreachable := fmt.Sprintf("is it running and listening on %s?", c.hostPort())
	var ne net.Error
	if actx.Err() != nil || errors.As(err, &ne) && ne.Timeout() {
		within := fmt.Sprintf("within %v", limit)
		if actx.Err() == nil {
			within = "before a dialer or HTTP client timeout"
		}
		switch {
		case !pr.conn.Load():
			return false, fmt.Errorf("%s: %w (%s): %w: no connection %s", where, ErrUnreachable, unreachable, ErrTimeout, within)
		case !pr.firstByte.Load():
			return false, fmt.Errorf("%s: %w: connected, but no response %s (is this an HTTP port? is the service stuck?)", where, ErrTimeout, within)
		default:
			return false, fmt.Errorf("%s: %w: the body was not complete %s (%d bytes read)", where, ErrTimeout, within, nread)
		}
	}
	isNet, canRetry := netFailure(err)
	switch {
	case !isNet:
		return false, fmt.Errorf("%s: %w", where, err)
	case !pr.conn.Load():
		return canRetry, fmt.Errorf("%s: %w (%s): %w", where, ErrUnreachable, unreachable, err)
	case !pr.firstByte.Load() && nread == 0:
		return canRetry, fmt.Errorf("%s: %w: the connection failed before a response: %w", where, ErrUnreachable, err)
	default:
		return canRetry, fmt.Errorf("%s: the connection failed after %d bytes of the body: %w", where, nread, err)
	}
}

// netFailure reports whether err is a network failure and whether it is
// worth another attempt (an unknown host is not).
func netFailure(err error) (isNet, retry bool) {
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return true, !dns.IsNotFound
	}
	var op *net.OpError
	if errors.As(err, &op) {
		return true, true
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true, true
	}
	// net/http's unexported errServerClosedIdle: the server closed the
	// connection as the request went out.
	if strings.Contains(err.Error(), "server closed idle connection") {
		return true, true
	}
	return false, false
}
