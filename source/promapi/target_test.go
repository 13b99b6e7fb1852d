package promapi

import (
	"net/url"
	"strings"
	"testing"
	"unicode"
)

func TestWatchURL(t *testing.T) {
	for _, tc := range []struct {
		instance string
		want     string // "" = not an address
	}{
		{"10.0.0.7:8080", "http://10.0.0.7:8080"},
		{"api-0.api.prod.svc:9090", "http://api-0.api.prod.svc:9090"},
		{"[::1]:6060", "http://[::1]:6060"},
		{"https://api.example.com:8443/metrics", "https://api.example.com:8443"},
		{"api-7d9f-abc", ""},
		{"10.0.0.7", ""},
		{"host:0", ""},
		{"host:99999", ""},
		{"host:08080", ""},
		{"ho st:80", ""},
		{"host;rm -rf /:80", ""},
		{"", ""},
	} {
		got, ok, why := Labels{"job": "api", "instance": tc.instance}.WatchURL()
		if got != tc.want || ok != (tc.want != "") || ok == (why != "") {
			t.Errorf("instance %q: %q, %v, %q; want %q", tc.instance, got, ok, why, tc.want)
		}
	}
}

func TestNormalizeSelector(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{"", "", ""},
		{`job="api"`, `job="api"`, ""},
		{` {job=~"api|web", env!="dev"} `, `job=~"api|web", env!="dev"`, ""},
		{`job="api",`, `job="api"`, ""},
		{`instance=~"10\\.0\\.\\d{1,3}:80"`, `instance=~"10\\.0\\.\\d{1,3}:80"`, ""},
		{`up{job="api"}`, "", "a metric name"},
		{`job="api`, "", "unterminated"},
		{`api`, "", "no matcher"},
	} {
		got, err := NormalizeSelector(tc.in)
		if got != tc.want || (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("NormalizeSelector(%q) = %q, %v; want %q, %q", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestNames(t *testing.T) {
	for _, tc := range []struct {
		l    Labels
		want string
	}{
		{Labels{"job": "api", "instance": "h:1"}, "api/h:1"},
		{Labels{"job": "api"}, "api"},
		{Labels{"pod": "p-1"}, `{pod="p-1"}`},
		{Labels{"job": "a\x1b[31mred", "instance": "h:1"}, "a?[31mred/h:1"},
	} {
		if got := tc.l.Name(); got != tc.want {
			t.Errorf("%v: name %q, want %q", tc.l, got, tc.want)
		}
	}
}

func TestGroupMatchersEscape(t *testing.T) {
	g := group{{"job": `a"b`, "instance": "h.1:80"}, {"job": `a"b`, "instance": `x|y\z:1`}}
	got := g.matchers()
	want := `job=~"a\"b", instance=~"h\\.1:80|x\\|y\\\\z:1"`
	if got != want {
		t.Errorf("matchers %s, want %s", got, want)
	}
}

// FuzzWatchURL: whatever the instance label, the command memdoctor prints is a plain
// http(s) URL of a host and a port, or nothing.
func FuzzWatchURL(f *testing.F) {
	for _, s := range []string{"10.0.0.7:8080", "[::1]:6060", "https://h:1/x", "a b:1", "h:1/../x", "h:1\n", "`x`:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, inst string) {
		u, ok, why := Labels{"instance": inst}.WatchURL()
		if !ok {
			if u != "" || why == "" {
				t.Fatalf("%q: %q, no reason %q", inst, u, why)
			}
			return
		}
		p, err := url.Parse(u)
		if err != nil || p.Path != "" || p.RawQuery != "" || p.User != nil || p.Port() == "" || (p.Scheme != "http" && p.Scheme != "https") {
			t.Fatalf("%q gave %q", inst, u)
		}
		for _, r := range u {
			if r <= ' ' || r == '\'' || r == '"' || r == '`' || r == ';' || r == '$' || !unicode.IsPrint(r) {
				t.Fatalf("%q gave %q, unsafe to print as a command", inst, u)
			}
		}
	})
}

// FuzzNormalizeSelector: a selector accepted is one list of matchers, without braces.
func FuzzNormalizeSelector(f *testing.F) {
	for _, s := range []string{`job="api"`, `{job="a"}`, `up{}`, ``, `{`, `a=~"{"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := NormalizeSelector(s)
		if err != nil {
			return
		}
		if again, err := NormalizeSelector(got); err != nil || again != got || got != strings.TrimSpace(got) || strings.HasPrefix(got, "{") {
			t.Fatalf("%q -> %q", s, got)
		}
		if sel := selector(got); got != "" && (!strings.HasPrefix(sel, "{") || !strings.HasSuffix(sel, "}")) {
			t.Fatalf("%q -> selector %q", s, sel)
		}
	})
}
