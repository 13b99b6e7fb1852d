package scrape

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

var debug1 = url.Values{"debug": {"1"}}

// GoroutineText fetches goroutine?debug=1, the text form grouped by
// identical stack ("goroutine profile: total N" then "count @ pcs" records),
// capped at the maximum body size. The body is held in chunks (see Body): a
// body at the limit costs the limit, not three times it.
func (c *Client) GoroutineText(ctx context.Context) (*Body, error) {
	var text *Body
	err := c.get(ctx, c.endpoint("goroutine", debug1), "goroutine", 0, func(body io.Reader, resp *http.Response) error {
		b, err := readBody(body, resp.ContentLength, c.maxBody)
		if err != nil {
			return err
		}
		if head := b.head(2 * snippetMax); !bytes.HasPrefix(head, []byte("goroutine profile: total ")) {
			if looksLikeText(head) {
				return notProfileErr(head)
			}
			return fmt.Errorf("%w: want text starting %q: %s", ErrNotProfile, "goroutine profile: total ", snippet(head))
		}
		text = b
		return nil
	})
	return text, err
}

// MemStats fetches heap?debug=1 and parses its trailing runtime.MemStats
// block while streaming: the heap records before it (tens of MB in a big
// service) are never held in memory. It costs the target a
// runtime.ReadMemStats (a short stop-the-world) and the symbolisation of
// every heap record.
func (c *Client) MemStats(ctx context.Context) (MemStats, error) {
	var ms MemStats
	err := c.get(ctx, c.endpoint("heap", debug1), "heap", 0, func(body io.Reader, _ *http.Response) error {
		hr := &headReader{r: body, head: make([]byte, 0, 2*snippetMax)}
		m, err := ParseMemStats(hr)
		if errors.Is(err, ErrNoMemStats) {
			return fmt.Errorf("%w: not a heap?debug=1 page; body: %s", err, snippet(hr.head))
		}
		if err != nil {
			return err
		}
		ms = m
		return nil
	})
	return ms, err
}
