package proof

import (
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/leaktest"
	"github.com/valyala/fasthttp/fasthttpproxy"
)

// A dialer per client, each through the tenant's authenticated HTTP proxy, as a service that
// builds a fasthttp.Client per tenant does. fasthttpproxy v1.69.0 cached each proxy URL's
// credentials in a package-level sync.Map keyed by the parsed URL's pointer, so every dialer
// made kept its entry for good (valyala/fasthttp#2143); v1.70.0 scoped the cache to the dialer
// (valyala/fasthttp#2144).
func TestDialerPerClient(t *testing.T) {
	leaktest.Loop(t, func() {
		dial := fasthttpproxy.FasthttpHTTPDialerTimeout("tenant:secret@127.0.0.1:3128", time.Second)
		_ = dial
	})
}
