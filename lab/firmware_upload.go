package lab

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

func firmwareUpload() Scenario {
	return Scenario{
		Name: "firmware-upload",
		Story: "A device-update service answers a trickle of version checks from the fleet and, " +
			"every 12 seconds, receives a new firmware image of about 180 MB from the build " +
			"pipeline. The upload handler reads the body whole with io.ReadAll to checksum it " +
			"before storing it, and io.ReadAll grows its buffer step by step: the service, whose " +
			"heap is a few MiB the rest of the time, holds up to 180 MB for the second the upload " +
			"takes, and allocates several times that. The GC runs only inside the uploads: the " +
			"upload's own allocation reaches the goal, each cycle finds part of the body still " +
			"being read, sets its next goal at twice that, and the version checks never reach it " +
			"before the next upload. Every reading of the live heap holds an upload half read " +
			"(1, 28, 181, 211 MB...), rising as if it leaked, and no GC runs after an upload to " +
			"show the heap come back. The fix is to stream: hash the body as it is copied to " +
			"storage (io.Copy through io.MultiWriter), so memory per upload is a copy buffer.",
		Expect: Expect{
			Kinds:   []string{kindTransientSpike},
			Culprit: "github.com/memdoctor/memdoctor/lab.(*firmwareStore).handleUpload",
			// Reading 180 MB whole is where most of its bytes are allocated.
			Allowed:  []string{kindAllocationHotspot, kindGCOverhead},
			Absent:   []string{kindHeapLeak, kindGoroutineLeak, kindNonGoMemory},
			Watch:    24 * time.Second,
			Interval: 3 * time.Second,
		},
		Run: runFirmwareUpload,
	}
}

const (
	firmwareBytes  = 180 << 20
	firmwareEvery  = 12 * time.Second
	firmwareChecks = 10 // version checks a second: the steady traffic, a little garbage
	firmwareKept   = 16 // uploads whose metadata the service keeps
)

func runFirmwareUpload(ctx context.Context, env Env) error {
	fs := &firmwareStore{}
	return serve(ctx, env, service{
		name: "firmware-upload",
		routes: map[string]http.HandlerFunc{
			"POST /firmware":       fs.handleUpload,
			"GET /firmware/latest": fs.handleLatest,
		},
		loads: []load{
			{workers: 1, every: firmwareEvery, send: func(ctx context.Context, c *client, _ int) error {
				n := c.requests.Load()
				return c.send(ctx, call{method: http.MethodPost, path: "/firmware?build=" + strconv.FormatInt(n, 10),
					contentType: "application/octet-stream", body: &imageReader{left: firmwareBytes, seed: byte(n)}, length: firmwareBytes})
			}},
			{workers: 1, every: time.Second / firmwareChecks, send: func(ctx context.Context, c *client, _ int) error {
				return c.send(ctx, call{method: http.MethodGet, path: "/firmware/latest"})
			}},
		},
	})
}

// firmwareStore keeps the metadata of the latest uploads (the images go to object storage).
type firmwareStore struct {
	mu     sync.Mutex
	images []firmwareImage
}

type firmwareImage struct {
	Build  string `json:"build"`
	Size   int    `json:"size"`
	SHA256 string `json:"sha256"`
}

// handleUpload reads the image whole to checksum it: the bug.
func (fs *firmwareStore) handleUpload(w http.ResponseWriter, r *http.Request) {
	data, err := io.ReadAll(io.LimitReader(r.Body, 2*firmwareBytes))
	if err != nil {
		http.Error(w, "reading upload: "+err.Error(), http.StatusBadRequest)
		return
	}
	sum := sha256.Sum256(data)
	img := firmwareImage{Build: r.URL.Query().Get("build"), Size: len(data), SHA256: hex.EncodeToString(sum[:])}
	fs.mu.Lock()
	fs.images = append(fs.images, img)
	if len(fs.images) > firmwareKept {
		fs.images = append(fs.images[:0], fs.images[1:]...)
	}
	fs.mu.Unlock()
	fmt.Fprintf(w, "%s %d\n", img.SHA256, img.Size)
}

// handleLatest answers a device's version check.
func (fs *firmwareStore) handleLatest(w http.ResponseWriter, _ *http.Request) {
	fs.mu.Lock()
	var img firmwareImage
	if n := len(fs.images); n > 0 {
		img = fs.images[n-1]
	}
	fs.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"build":%q,"size":%d,"sha256":%q}`+"\n", img.Build, img.Size, img.SHA256)
}

// firmwareRate is how fast an image arrives: the pipeline's link, about 1.5 s an image.
const firmwareRate = 120 << 20 // bytes a second

// imageReader produces left bytes of a deterministic image without holding it (the load
// generator runs in the service's process, and its memory must not be the upload's), at
// firmwareRate.
type imageReader struct {
	left  int
	seed  byte
	off   int
	start time.Time
}

func (r *imageReader) Read(p []byte) (int, error) {
	if r.left <= 0 {
		return 0, io.EOF
	}
	if r.start.IsZero() {
		r.start = time.Now()
	}
	if ahead := time.Duration(float64(r.off)/firmwareRate*float64(time.Second)) - time.Since(r.start); ahead > time.Millisecond {
		time.Sleep(ahead)
	}
	n := min(len(p), r.left, 256<<10)
	for i := range n {
		p[i] = byte(r.off+i) ^ r.seed
	}
	r.off += n
	r.left -= n
	return n, nil
}
