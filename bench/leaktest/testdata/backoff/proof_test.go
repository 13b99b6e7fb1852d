package proof

import (
	"context"
	"testing"
	"time"

	"github.com/lestrrat-go/backoff/v2"
	"github.com/memdoctor/memdoctor/leaktest"
)

// A retry loop whose operation succeeds at its first try, after the policy's timer fired
// twice. In lestrrat-go/backoff v2.0.7 the controller's goroutine then blocks for good on its
// send to the Next channel, which nobody reads once the operation is done and the context
// cancelled (lestrrat-go/backoff#30); v2.0.8 selects on the context around the send.
func TestRetryThatSucceeds(t *testing.T) {
	policy := backoff.Constant(backoff.WithInterval(100 * time.Microsecond))
	leaktest.Loop(t, func() {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		c := policy.Start(ctx)
		for backoff.Continue(c) {
			time.Sleep(2 * time.Millisecond) // the operation, which succeeds
			return
		}
	})
}
