package harness

import (
	"os"
	"strconv"
	"sync"
	"time"
)

// capture is os.Stdout redirected to a pipe whose last MaxOutput bytes are kept: what a test
// prints while it runs. Its memory is allocated once, so a check does not see it grow.
type capture struct {
	orig *os.File
	w    *os.File
	mu   sync.Mutex
	ring [MaxOutput]byte
	n    int64 // bytes written so far
	done chan struct{}
}

// captureStdout starts capturing os.Stdout; stop ends it and returns what was kept. When no
// pipe can be made, nothing is captured.
func captureStdout() *capture {
	c := &capture{orig: os.Stdout, done: make(chan struct{})}
	r, w, err := os.Pipe()
	if err != nil {
		close(c.done)
		return c
	}
	c.w = w
	os.Stdout = w
	go c.drain(r)
	return c
}

func (c *capture) drain(r *os.File) {
	defer close(c.done)
	defer r.Close()
	buf := make([]byte, 4096)
	for {
		n, err := r.Read(buf)
		c.mu.Lock()
		for _, b := range buf[:n] {
			c.ring[c.n%MaxOutput] = b
			c.n++
		}
		c.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// stop puts os.Stdout back and returns the output kept, prefixed with how much was left out.
// A process the test started that still holds the pipe does not hold it up for more than a
// moment.
func (c *capture) stop() string {
	if c.w == nil {
		return ""
	}
	os.Stdout = c.orig
	c.w.Close()
	select {
	case <-c.done:
	case <-time.After(200 * time.Millisecond):
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n <= MaxOutput {
		return string(c.ring[:c.n])
	}
	start := c.n % MaxOutput
	return "[... " + strconv.FormatInt(c.n-MaxOutput, 10) + " bytes left out ...]\n" + string(c.ring[start:]) + string(c.ring[:start])
}
