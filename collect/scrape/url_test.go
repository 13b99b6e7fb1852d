package scrape

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestNewNormalisesURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:6060":                    "http://127.0.0.1:6060/debug/pprof/",
		"127.0.0.1:6060":                           "http://127.0.0.1:6060/debug/pprof/",
		"localhost:6060":                           "http://localhost:6060/debug/pprof/",
		"http://h:6060/debug/pprof":                "http://h:6060/debug/pprof/",
		"http://h:6060/debug/pprof/":               "http://h:6060/debug/pprof/",
		"http://h:6060/debug/pprof//":              "http://h:6060/debug/pprof/",
		"http://h:6060/custom/prefix/debug/pprof/": "http://h:6060/custom/prefix/debug/pprof/",
		"http://h:6060/custom/prefix":              "http://h:6060/custom/prefix/debug/pprof/",
		"http://h:6060/custom/prefix/":             "http://h:6060/custom/prefix/debug/pprof/",
		"  https://h.example.com  ":                "https://h.example.com/debug/pprof/",
		"HTTP://H:6060":                            "http://H:6060/debug/pprof/",
		"[::1]:6060":                               "http://[::1]:6060/debug/pprof/",
		"http://[::1]:6060/debug/pprof":            "http://[::1]:6060/debug/pprof/",
		"http://user:pw@h:6060":                    "http://user:xxxxx@h:6060/debug/pprof/",
		"http://h/a%2Fb":                           "http://h/a%2Fb/debug/pprof/",
	} {
		c, err := New(in)
		if err != nil {
			t.Errorf("New(%q): %v", in, err)
			continue
		}
		if got := c.BaseURL(); got != want {
			t.Errorf("New(%q).BaseURL() = %q, want %q", in, got, want)
		}
	}
}

func TestNewRejects(t *testing.T) {
	for in, why := range map[string]string{
		"":                               "empty URL",
		"   ":                            "empty URL",
		"http:h:6060":                    "malformed URL",
		"https:/h":                       "malformed URL",
		"http://a b:1":                   "invalid character",
		"ftp://h:6060":                   `unsupported scheme "ftp"`,
		"unix:///tmp/app.sock":           `unsupported scheme "unix"`,
		"http://":                        "no host",
		"http://:6060":                   "no host",
		"h:abc":                          "invalid port",
		"http://h:0":                     `bad port "0"`,
		"http://h:70000":                 `bad port "70000"`,
		"http://h:":                      "empty port",
		"http://h:6060/debug/pprof/heap": "points inside the pprof tree",
		"http://h:6060/?debug=1":         "query",
		"http://h:6060/#frag":            "fragment",
		"http://u:hunter2@h:99999":       `bad port "99999"`,
	} {
		_, err := New(in)
		if err == nil {
			t.Errorf("New(%q) succeeded, want an error about %s", in, why)
			continue
		}
		msg := err.Error()
		for _, part := range []string{why, "a valid URL looks like", "pprof URL " + strconv.Quote(redactRaw(in))} {
			if !strings.Contains(msg, part) {
				t.Errorf("New(%q) error %q lacks %q", in, msg, part)
			}
		}
		if strings.Contains(msg, "hunter2") {
			t.Errorf("New(%q) error leaks the password: %q", in, msg)
		}
	}
}

func TestNewOptionErrors(t *testing.T) {
	for name, opt := range map[string]Option{
		"WithHTTPClient(nil)":   WithHTTPClient(nil),
		"WithTimeout(0)":        WithTimeout(0),
		"WithRetries(0, 1s)":    WithRetries(0, time.Second),
		"WithRetries(2, -1s)":   WithRetries(2, -time.Second),
		"WithBearerToken(\"\")": WithBearerToken(""),
		"WithBearerToken(nl)":   WithBearerToken("a\nb"),
		"WithMaxBodyBytes(0)":   WithMaxBodyBytes(0),
	} {
		if _, err := New("h:1", opt); err == nil || !strings.Contains(err.Error(), "http://h:1/debug/pprof/") {
			t.Errorf("%s: error %v, want one naming the URL", name, err)
		}
	}
	c, err := New("h:1", WithTimeout(time.Second), WithRetries(1, 0), WithBearerToken("t"),
		WithMaxBodyBytes(10), WithHTTPClient(http.DefaultClient))
	if err != nil {
		t.Fatal(err)
	}
	if c.timeout != time.Second || c.attempts != 1 || c.backoff != 0 || c.token != "t" || c.maxBody != 10 || c.hc != http.DefaultClient {
		t.Errorf("options not applied: %+v", c)
	}
	d, err := New("h:1")
	if err != nil {
		t.Fatal(err)
	}
	if d.timeout != 10*time.Second || d.attempts != 3 || d.backoff != 250*time.Millisecond || d.maxBody != 256<<20 || d.hc.Timeout != 0 {
		t.Errorf("defaults: %+v", d)
	}
}

func TestEndpoint(t *testing.T) {
	c, err := New("http://u:pw@h:1/my%20app")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"heap":                  "http://u:pw@h:1/my%20app/debug/pprof/heap?debug=1",
		"github.com/x/y.things": "http://u:pw@h:1/my%20app/debug/pprof/github.com/x/y.things?debug=1",
		"a b":                   "http://u:pw@h:1/my%20app/debug/pprof/a%20b?debug=1",
	} {
		if got := c.endpoint(name, debug1).String(); got != want {
			t.Errorf("endpoint(%q) = %q, want %q", name, got, want)
		}
	}
}
