package scrape

import (
	"bufio"
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
		if err := checkGoroutineText(b.head(2 * snippetMax)); err != nil {
			return err
		}
		text = b
		return nil
	})
	return text, err
}

// goroutineTextPrefix starts goroutine?debug=1.
const goroutineTextPrefix = "goroutine profile: total "

// GoroutineTextTo streams goroutine?debug=1 (see GoroutineText) as it arrives into the
// writer open returns, after checking how it starts: nothing is held in memory, however
// large the dump (up to the maximum body size). open is called once per attempt that gets a
// body; a retry after a broken body calls it again, and the caller drops what the earlier
// writer got. It returns the bytes written.
func (c *Client) GoroutineTextTo(ctx context.Context, open func() (io.Writer, error)) (int64, error) {
	var n int64
	err := c.get(ctx, c.endpoint("goroutine", debug1), "goroutine", 0, func(body io.Reader, _ *http.Response) error {
		br := bufio.NewReaderSize(body, 4<<10)
		head, _ := br.Peek(2 * snippetMax)
		if err := checkGoroutineText(head); err != nil {
			return err
		}
		w, err := open()
		if err != nil {
			return err
		}
		n, err = io.Copy(w, br)
		return err
	})
	return n, err
}

// checkGoroutineText checks the start of a goroutine?debug=1 body.
func checkGoroutineText(head []byte) error {
	if bytes.HasPrefix(head, []byte(goroutineTextPrefix)) {
		return nil
	}
	if looksLikeText(head) {
		return notProfileErr(head)
	}
	return fmt.Errorf("%w: want text starting %q: %s", ErrNotProfile, goroutineTextPrefix, snippet(head))
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
