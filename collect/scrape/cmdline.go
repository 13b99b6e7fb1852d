package scrape

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
)

// maxCmdline bounds the command line read from /debug/pprof/cmdline.
const maxCmdline = 64 << 10

// Cmdline fetches the service's command line from /debug/pprof/cmdline (net/http/pprof
// writes os.Args joined by NUL bytes): who the service is, to tell it from a proxy in front
// of it. One attempt, never retried.
func (c *Client) Cmdline(ctx context.Context) ([]string, error) {
	var args []string
	_, _, err := c.try(ctx, c.endpoint("cmdline", nil), "cmdline", 0, func(body io.Reader, resp *http.Response) error {
		b, err := io.ReadAll(io.LimitReader(body, maxCmdline))
		if err != nil {
			return err
		}
		if len(b) == 0 || bytes.Contains(b[:min(len(b), 512)], []byte("<html")) {
			return ErrNotPprof
		}
		args = strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		return nil
	})
	return args, err
}
