package promapi

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/prometheus/common/model"
)

// Labels are a target's labels: what identifies its series (job, instance, and whatever
// else the scrape attached, such as namespace or pod).
type Labels map[string]string

// Name is job/instance, the target's usual name.
func (l Labels) Name() string {
	job, inst := l["job"], l["instance"]
	switch {
	case job == "" && inst == "":
		return l.String()
	case inst == "":
		return sanitize(job)
	case job == "":
		return sanitize(inst)
	}
	return sanitize(job) + "/" + sanitize(inst)
}

// String writes the labels as PromQL matchers, sorted: {instance="...", job="..."}.
func (l Labels) String() string {
	keys := make([]string, 0, len(l))
	for k := range l {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(sanitize(k) + "=" + strconv.Quote(l[k]))
	}
	b.WriteByte('}')
	return b.String()
}

// WatchURL is the base URL to point memdoctor watch at: the instance label's host:port,
// assuming the service serves net/http/pprof (or memdoctor's agent) where it serves its
// metrics. ok is false when the instance label is not an address (relabelled to a pod or
// host name without a port); why then says so.
func (l Labels) WatchURL() (u string, ok bool, why string) {
	inst := strings.TrimSpace(l["instance"])
	if inst == "" {
		return "", false, "the target has no instance label"
	}
	scheme := "http"
	if p, err := url.Parse(inst); err == nil && (p.Scheme == "http" || p.Scheme == "https") && p.Host != "" {
		scheme, inst = p.Scheme, p.Host
	}
	host, port, err := net.SplitHostPort(inst)
	if err != nil || host == "" || !validPort(port) || !validHost(host) {
		return "", false, fmt.Sprintf("its instance label %q is not a host:port address", sanitize(l["instance"]))
	}
	return scheme + "://" + net.JoinHostPort(host, port), true, ""
}

func validPort(p string) bool {
	n, err := strconv.Atoi(p)
	return err == nil && n > 0 && n < 65536 && strconv.Itoa(n) == p
}

// validHost accepts IP addresses and DNS names (letters, digits, '-', '.', '_').
func validHost(h string) bool {
	if net.ParseIP(h) != nil {
		return true
	}
	if len(h) > 253 {
		return false
	}
	for _, r := range h {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '_') {
			return false
		}
	}
	return true
}

// sanitize makes a string from the server safe to print on a terminal: control and
// non-printable characters become '?', and it is cut at 200 bytes.
func sanitize(s string) string {
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return strings.Map(func(r rune) rune {
		if r == unicode.ReplacementChar || !unicode.IsPrint(r) {
			return '?'
		}
		return r
	}, s)
}

// labelsOf returns a series' target: its labels without the metric name and without the
// labels of the metric itself (drop: go_info's version).
func labelsOf(m model.Metric, drop ...model.LabelName) Labels {
	l := make(Labels, len(m))
	for k, v := range m {
		if k == model.MetricNameLabel || slices.Contains(drop, k) {
			continue
		}
		l[string(k)] = string(v)
	}
	return l
}

func (l Labels) fingerprint() model.Fingerprint {
	ls := make(model.LabelSet, len(l))
	for k, v := range l {
		ls[model.LabelName(k)] = model.LabelValue(v)
	}
	return ls.Fingerprint()
}

// NormalizeSelector checks a label selector and returns it as matchers without braces:
// `job="api"` and `{job="api"}` both give `job="api"`. It refuses a metric name, braces outside
// quoted values and unterminated quotes; the server checks the matchers themselves.
func NormalizeSelector(sel string) (string, error) {
	s := strings.TrimSpace(sel)
	if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
		s = strings.TrimSpace(s[1 : len(s)-1])
	}
	bad := func(what string) (string, error) {
		return "", fmt.Errorf("selector %q: %s: want label matchers such as job=\"api\" or {job=~\"api|web\",env=\"prod\"}", sel, what)
	}
	var quote rune
	escaped := false
	for _, r := range s {
		switch {
		case escaped:
			escaped = false
		case quote != 0 && r == '\\' && quote != '`':
			escaped = true
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
		case r == '"' || r == '\'' || r == '`':
			quote = r
		case r == '{' || r == '}':
			return bad("a metric name or braces outside quotes")
		}
	}
	if quote != 0 {
		return bad("an unterminated quote")
	}
	if s != "" && !strings.ContainsAny(s, "=~!") {
		return bad("no matcher")
	}
	// Trailing commas and white space of any kind (a vertical tab too), however they mix.
	return strings.TrimRightFunc(s, func(r rune) bool { return r == ',' || unicode.IsSpace(r) }), nil
}

// selector joins matchers into a PromQL selector: {a, b}, or "" when there is none.
func selector(matchers ...string) string {
	var keep []string
	for _, m := range matchers {
		if m = strings.TrimSpace(m); m != "" {
			keep = append(keep, m)
		}
	}
	if len(keep) == 0 {
		return ""
	}
	return "{" + strings.Join(keep, ", ") + "}"
}
