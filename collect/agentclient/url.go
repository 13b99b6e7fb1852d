package agentclient

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

const (
	agentDir = "/debug/memdoctor"
	pprofDir = "/debug/pprof"
)

// AgentURL normalises a service, agent or pprof URL to the agent's URL, ending in
// "/debug/memdoctor/". A missing scheme means http.
func AgentURL(raw string) (*url.URL, error) {
	u, p, err := parse(raw)
	if err != nil {
		return nil, err
	}
	switch {
	case strings.HasSuffix(p, agentDir):
	case strings.HasSuffix(p, pprofDir):
		p = strings.TrimSuffix(p, pprofDir) + agentDir
	case strings.Contains(p+"/", agentDir+"/"):
		return nil, fmt.Errorf("agent URL %q: points inside the agent's tree, not at /debug/memdoctor/ or the service", raw)
	default:
		p += agentDir
	}
	u.Path = p + "/"
	u.RawPath = ""
	// url.Parse accepts some hosts that its own String escapes into a URL it then rejects
	// (an IPv6 zone holding a byte that is not UTF-8): the URL must survive a round trip.
	if again, err := url.Parse(u.String()); err != nil || again.Host != u.Host {
		return nil, fmt.Errorf("agent URL %q: bad host %q", raw, u.Host)
	}
	return u, nil
}

// PointsAtAgent reports whether raw names the agent's tree itself (".../debug/memdoctor/")
// rather than a service or its pprof index.
func PointsAtAgent(raw string) bool {
	_, p, err := parse(raw)
	return err == nil && strings.HasSuffix(p, agentDir)
}

// PprofURL returns the pprof index URL beside an agent URL (".../debug/memdoctor/" ->
// ".../debug/pprof/"); other URLs are returned as they are.
func PprofURL(raw string) string {
	u, p, err := parse(raw)
	if err != nil || !strings.HasSuffix(p, agentDir) {
		return raw
	}
	u.Path = strings.TrimSuffix(p, agentDir) + pprofDir + "/"
	u.RawPath = ""
	return u.String()
}

// parse returns the URL and its path without trailing slashes.
func parse(raw string) (*url.URL, string, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return nil, "", fmt.Errorf("agent URL: empty")
	}
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // it repeats the URL, password included
		}
		return nil, "", fmt.Errorf("agent URL %q: %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, "", fmt.Errorf("agent URL %q: unsupported scheme %q (want http or https)", raw, u.Scheme)
	}
	if u.Hostname() == "" {
		return nil, "", fmt.Errorf("agent URL %q: no host", raw)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, "", fmt.Errorf("agent URL %q: a query or fragment is not allowed", raw)
	}
	return u, strings.TrimRight(u.Path, "/"), nil
}
