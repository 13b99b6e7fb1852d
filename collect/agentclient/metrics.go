package agentclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"time"

	"github.com/memdoctor/memdoctor/session"
)

// MaxLine bounds one line of the metrics stream; a longer one is skipped as corrupt.
const MaxLine = 1 << 20

// Metrics streams the samples the agent took after since (all it holds when since is zero),
// oldest first, calling fn with each as it is decoded. It returns how many were delivered
// and the time of the last; an error from fn stops the stream and is returned. Corrupt
// lines are skipped; their count is reported in the error only when nothing else went wrong
// and none could be read.
func (c *Client) Metrics(ctx context.Context, since time.Time, fn func(session.Sample) error) (n int, last time.Time, err error) {
	var q url.Values
	if !since.IsZero() {
		q = url.Values{"since": {since.UTC().Format(time.RFC3339Nano)}}
	}
	err = c.get(ctx, "metrics", q, func(r io.Reader) error {
		var bad int
		var rerr error
		n, bad, rerr = ReadSamples(r, func(s session.Sample) error {
			last = s.Time
			return fn(s)
		})
		if rerr == nil && n == 0 && bad > 0 {
			return fmt.Errorf("%w: %d line(s) of the metrics stream are not samples", ErrNotAgent, bad)
		}
		return rerr
	})
	return n, last, err
}

// ReadSamples decodes JSON lines of session.Sample from r, calling fn with each. Blank lines
// are skipped; a line that is not a sample with a time (or longer than MaxLine) counts as
// bad and is skipped. It stops at the end of r, on a read error, or when fn fails, and
// returns the samples delivered, the bad lines, and the error.
func ReadSamples(r io.Reader, fn func(session.Sample) error) (n, bad int, err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var long []byte
	for {
		line, rerr := br.ReadSlice('\n')
		if errors.Is(rerr, bufio.ErrBufferFull) {
			if len(long)+len(line) > MaxLine {
				long = long[:0]
				bad++
				for errors.Is(rerr, bufio.ErrBufferFull) { // skip the rest of the line
					_, rerr = br.ReadSlice('\n')
				}
				if rerr != nil && rerr != io.EOF {
					return n, bad, rerr
				}
				if rerr == io.EOF {
					return n, bad, nil
				}
				continue
			}
			long = append(long, line...)
			continue
		}
		tooLong := len(long)+len(line) > MaxLine
		if len(long) > 0 {
			line = append(long, line...)
			long = long[:0]
		}
		if trimmed := bytes.TrimSpace(line); len(trimmed) > 0 {
			var s session.Sample
			if tooLong || json.Unmarshal(trimmed, &s) != nil || s.Time.IsZero() {
				bad++
			} else {
				if err := fn(s); err != nil {
					return n, bad, err
				}
				n++
			}
		}
		if rerr == io.EOF {
			return n, bad, nil
		}
		if rerr != nil {
			return n, bad, rerr
		}
	}
}
