package scrape

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

const (
	pprofDir     = "/debug/pprof"
	validURLHint = `a valid URL looks like "http://127.0.0.1:6060", "127.0.0.1:6060" or "https://host:6060/prefix/debug/pprof/"`
)

// parseBaseURL normalises a service or pprof URL to the pprof index URL,
// ending in "/debug/pprof/". A missing scheme means http.
func parseBaseURL(raw string) (*url.URL, error) {
	s := strings.TrimSpace(raw)
	bad := func(format string, args ...any) error {
		return fmt.Errorf("pprof URL %q: %s; %s", redactRaw(raw), fmt.Sprintf(format, args...), validURLHint)
	}
	if s == "" {
		return nil, bad("empty URL")
	}
	if !strings.Contains(s, "://") {
		if scheme, _, ok := strings.Cut(s, ":"); ok && (strings.EqualFold(scheme, "http") || strings.EqualFold(scheme, "https")) {
			return nil, bad(`malformed URL: want "%s://host:port"`, strings.ToLower(scheme))
		}
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // *url.Error repeats the URL, password included
		}
		return nil, bad("%v", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, bad("unsupported scheme %q (want http or https)", u.Scheme)
	}
	if u.Opaque != "" || u.Hostname() == "" {
		return nil, bad("no host")
	}
	if !strings.HasPrefix(u.Host, "[") && strings.Contains(u.Hostname(), ":") || strings.ContainsAny(u.Host, " \t") {
		return nil, bad("bad host %q", u.Host)
	}
	if err := checkPort(u); err != nil {
		return nil, bad("%v", err)
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return nil, bad("a query or fragment is not allowed")
	}
	p := strings.TrimRight(u.EscapedPath(), "/")
	switch {
	case strings.HasSuffix(p, pprofDir):
	case strings.Contains(p+"/", pprofDir+"/"):
		return nil, bad("points inside the pprof tree, not at its index or the service")
	default:
		p += pprofDir
	}
	p += "/"
	dec, err := url.PathUnescape(p)
	if err != nil {
		return nil, bad("%v", err)
	}
	u.Path, u.RawPath = dec, p
	// url.Parse accepts some hosts that its own String escapes into a URL it then rejects
	// (an IPv6 zone holding a byte that is not UTF-8): the base URL must survive a round trip.
	if again, err := url.Parse(u.String()); err != nil || again.Host != u.Host {
		return nil, bad("bad host %q", u.Host)
	}
	return u, nil
}

func checkPort(u *url.URL) error {
	port := u.Port()
	if port == "" {
		if strings.HasSuffix(u.Host, ":") {
			return errors.New("empty port")
		}
		return nil
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("bad port %q (want 1-65535)", port)
	}
	return nil
}

// redactRaw hides a password in a URL that may not parse.
func redactRaw(s string) string {
	start := strings.Index(s, "://")
	if start < 0 {
		start = 0
	} else {
		start += 3
	}
	end := len(s)
	if i := strings.IndexAny(s[start:], "/?#"); i >= 0 {
		end = start + i
	}
	at := strings.LastIndex(s[start:end], "@")
	if at < 0 {
		return s
	}
	userinfo := s[start : start+at]
	user, _, hasPass := strings.Cut(userinfo, ":")
	if !hasPass {
		return s
	}
	return s[:start] + user + ":xxxxx" + s[start+at:]
}

// endpoint is the URL of a profile under the index, with a query.
func (c *Client) endpoint(name string, query url.Values) *url.URL {
	u := *c.base
	u.Path = c.base.Path + name
	u.RawPath = c.base.EscapedPath() + escapeSegments(name)
	u.RawQuery = query.Encode()
	return &u
}

func escapeSegments(name string) string {
	segs := strings.Split(name, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// checkProfileName rejects names that would leave the pprof tree.
func checkProfileName(name string) error {
	if name == "" {
		return errors.New("empty profile name")
	}
	if strings.HasPrefix(name, "/") || strings.ContainsAny(name, "?#\\") {
		return fmt.Errorf("bad profile name %q", name)
	}
	for _, seg := range strings.Split(name, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return fmt.Errorf("bad profile name %q", name)
		}
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("bad profile name %q", name)
		}
	}
	return nil
}
