package facts

import "testing"

func TestReceiver(t *testing.T) {
	for fn, want := range map[string]string{
		"net/http.(*persistConn).readLoop":                 "net/http.(*persistConn).",
		"github.com/acme/pubsub.Subscription.receive":      "github.com/acme/pubsub.Subscription.",
		"github.com/acme/pubsub.newSubscription":           "",
		"github.com/acme/pubsub.(*Client).Subscribe.func1": "github.com/acme/pubsub.(*Client).",
		"net/http.(*Transport).dialConn":                   "net/http.(*Transport).",
		"example.com/svc/events.watch.func2":               "",
		"gopkg.in/yaml.v3.(*parser).parse":                 "gopkg.in/yaml.v3.(*parser).",
		"runtime.gopark":                                   "",
	} {
		if got := receiver(fn); got != want {
			t.Errorf("receiver(%q) = %q, want %q", fn, got, want)
		}
	}
}
