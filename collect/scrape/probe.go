package scrape

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
)

// probeMaxBody bounds the index page read by Probe (a few KiB in practice).
const probeMaxBody = 1 << 20

// Probe checks that the base URL serves the net/http/pprof index: a GET
// answered 200 with a page linking the heap and goroutine profiles. The
// error wraps ErrUnreachable when nothing answered (connection refused,
// unknown host, no connection within the timeout), ErrNotFound on a 404 (the
// service does not serve pprof there), and ErrNotPprof when something else
// answered.
func (c *Client) Probe(ctx context.Context) error {
	return c.get(ctx, c.base, "", 0, func(body io.Reader, _ *http.Response) error {
		page, err := io.ReadAll(io.LimitReader(body, probeMaxBody))
		if err != nil {
			return err
		}
		if !isPprofIndex(page) {
			return fmt.Errorf("%w: the page does not link the heap and goroutine profiles (%s); body: %s",
				ErrNotPprof, `is this the service's pprof address? it must import _ "net/http/pprof"`, snippet(page))
		}
		return nil
	})
}

// isPprofIndex looks for the index's profile links, "heap?debug=1" and
// "goroutine?debug=1" (every Go release's index has them).
func isPprofIndex(page []byte) bool {
	return bytes.Contains(page, []byte("heap?debug=1")) && bytes.Contains(page, []byte("goroutine?debug=1"))
}
