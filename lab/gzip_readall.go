package lab

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"strconv"
	"time"
)

func gzipReadAll() Scenario {
	return Scenario{
		Name: "gzip-readall",
		Story: "A log collector receives gzip-compressed uploads of 1 to 8 MiB of JSON lines. For " +
			"each request it creates a new gzip.Reader (with its own decompression window and " +
			"tables) and reads the whole decompressed body into memory with io.ReadAll before " +
			"parsing it. io.ReadAll grows its buffer by doubling, so an 8 MiB body costs about 16 " +
			"MiB of allocation and a large object per request. The fix is to stream: reuse gzip " +
			"readers (Reset, through a sync.Pool) and parse line by line with a bufio.Scanner or " +
			"json.Decoder over the reader, so that memory per request is a small fixed buffer.",
		Expect: Expect{
			Kinds: []string{kindAllocationHotspot},
			// Whole bodies read at once make the GC run several times a second.
			Allowed:  []string{kindGCOverhead},
			Culprit:  "github.com/memdoctor/memdoctor/lab.(*uploadService).handleUpload",
			Absent:   []string{kindHeapLeak},
			Watch:    20 * time.Second,
			Interval: 2 * time.Second,
		},
		Run: runGzipReadAll,
	}
}

func runGzipReadAll(ctx context.Context, env Env) error {
	up := &uploadService{}
	uploads, err := newUploadLoad(8)
	if err != nil {
		return err
	}
	return serve(ctx, env, service{
		name:   "gzip-readall",
		routes: map[string]http.HandlerFunc{"POST /upload": up.handleUpload},
		loads:  []load{uploads},
	})
}

// uploadService parses uploaded logs.
type uploadService struct{}

var (
	newline    = []byte{'\n'}
	levelError = []byte(`"level":"error"`)
)

// handleUpload decompresses the body whole, then counts lines and errors.
func (u *uploadService) handleUpload(w http.ResponseWriter, r *http.Request) {
	body := io.Reader(r.Body)
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, "bad gzip body: "+err.Error(), http.StatusBadRequest)
			return
		}
		defer zr.Close()
		body = zr
	}
	data, err := io.ReadAll(io.LimitReader(body, 64<<20))
	if err != nil {
		http.Error(w, "reading upload: "+err.Error(), http.StatusBadRequest)
		return
	}
	lines := bytes.Count(data, newline)
	errs := bytes.Count(data, levelError)
	var b [64]byte
	out := strconv.AppendInt(b[:0], int64(lines), 10)
	out = append(out, ' ')
	out = strconv.AppendInt(out, int64(errs), 10)
	w.Header().Set("Content-Type", "text/plain")
	w.Write(out)
}

// newUploadLoad prebuilds gzip bodies of 1, 2, 4 and 8 MiB of JSON lines and
// posts them in turn, about perSecond a second.
func newUploadLoad(perSecond int) (load, error) {
	var bodies [][]byte
	for i, size := range []int{1 << 20, 2 << 20, 4 << 20, 8 << 20} {
		var buf bytes.Buffer
		zw, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
		if err != nil {
			return load{}, err
		}
		if _, err := zw.Write(logLines(size, uint64(i))); err != nil {
			return load{}, err
		}
		if err := zw.Close(); err != nil {
			return load{}, err
		}
		bodies = append(bodies, buf.Bytes())
	}
	return load{
		workers: 2,
		every:   time.Second / time.Duration(perSecond),
		send: func(ctx context.Context, c *client, w int) error {
			body := bodies[int(c.requests.Load())%len(bodies)]
			return c.send(ctx, call{method: http.MethodPost, path: "/upload",
				contentType: "application/x-ndjson", encoding: "gzip", body: bytes.NewReader(body)})
		},
	}, nil
}
