package mcpserver

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memdoctor/memdoctor/session"
)

// A session's resources: memdoctor:///<its absolute path>/report (the text report) and
// .../diagnosis.json (the diagnosis, memdoctor/diagnosis/v1), both made afresh on each read
// without changing the session.
const (
	scheme       = "memdoctor:///"
	reportSuffix = "/report"
	jsonSuffix   = "/diagnosis.json"
)

// sessionURI is the URI of a session directory's resource (suffix: reportSuffix or jsonSuffix).
func sessionURI(dir, suffix string) string {
	segs := strings.Split(strings.TrimPrefix(filepath.ToSlash(dir), "/"), "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return scheme + strings.Join(segs, "/") + suffix
}

// parseSessionURI is the inverse of sessionURI.
func parseSessionURI(uri string) (dir, suffix string, err error) {
	rest, ok := strings.CutPrefix(uri, scheme)
	switch {
	case !ok:
	case strings.HasSuffix(rest, reportSuffix):
		suffix = reportSuffix
	case strings.HasSuffix(rest, jsonSuffix):
		suffix = jsonSuffix
	}
	if suffix == "" {
		return "", "", fmt.Errorf("resource %q: want %s<session directory>%s or ...%s", uri, scheme, reportSuffix, jsonSuffix)
	}
	p, err := url.PathUnescape(strings.TrimSuffix(rest, suffix))
	if err != nil {
		return "", "", fmt.Errorf("resource %q: %w", uri, err)
	}
	if filepath.VolumeName(filepath.FromSlash(p)) == "" {
		p = "/" + p
	}
	return filepath.FromSlash(p), suffix, nil
}

func (s *server) addResources() {
	for _, suffix := range []string{reportSuffix, jsonSuffix} {
		s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{
			Name:        "session" + strings.ReplaceAll(suffix, "/", "-"),
			URITemplate: scheme + "{+path}" + suffix,
			Description: "The " + describe(suffix) + " of the memdoctor session directory at path (absolute, under the server's roots).",
			MIMEType:    mimeType(suffix),
		}, s.readSession)
	}
	for _, dir := range s.roots.sessions() {
		s.addSession(dir)
	}
}

// addSession lists a session directory's two resources.
func (s *server) addSession(dir string) {
	name, when := filepath.Base(dir), ""
	if sess, err := session.Open(dir); err == nil {
		m := sess.Manifest
		if m.Target.Name != "" {
			name = fmt.Sprintf("%s (%s of %s)", filepath.Base(dir), m.Mode, m.Target.Name)
		}
		if !m.Start.IsZero() {
			when = ", from " + m.Start.UTC().Format(time.RFC3339)
		}
	}
	for _, suffix := range []string{reportSuffix, jsonSuffix} {
		s.mcp.AddResource(&mcp.Resource{
			URI:         sessionURI(dir, suffix),
			Name:        name + " " + strings.TrimPrefix(suffix, "/"),
			Description: "The " + describe(suffix) + " of the session " + dir + when,
			MIMEType:    mimeType(suffix),
		}, s.readSession)
	}
}

func describe(suffix string) string {
	if suffix == reportSuffix {
		return "text report"
	}
	return "diagnosis (JSON, memdoctor/diagnosis/v1)"
}

func mimeType(suffix string) string {
	if suffix == reportSuffix {
		return "text/plain"
	}
	return "application/json"
}

// readSession diagnoses the session a resource names and serves its report or its JSON.
func (s *server) readSession(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	p, suffix, err := parseSessionURI(uri)
	if err != nil {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	dir, err := s.roots.resolve("session", p)
	if err != nil || !isSessionDir(dir) {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	stdout, stderr, err := s.run(ctx, "report", "--json", "-", "--", dir)
	if err != nil {
		return nil, err
	}
	text := string(stdout)
	if suffix == reportSuffix {
		text = string(stderr)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mimeType(suffix), Text: text}}}, nil
}

// sessionInfo is one session of the list_sessions tool.
type sessionInfo struct {
	Dir    string    `json:"dir"`
	Target string    `json:"target,omitempty"`
	Mode   string    `json:"mode,omitempty"`
	Status string    `json:"status,omitempty"`
	Start  time.Time `json:"start,omitzero"`
	End    time.Time `json:"end,omitzero"`
	Report string    `json:"report_uri"`
}

func (s *server) listSessions(ctx context.Context, _ *mcp.CallToolRequest, _ ListSessionsInput) (*mcp.CallToolResult, any, error) {
	list := []sessionInfo{}
	var b strings.Builder
	for _, dir := range s.roots.sessions() {
		info := sessionInfo{Dir: dir, Report: sessionURI(dir, reportSuffix)}
		if sess, err := session.Open(dir); err == nil {
			m := sess.Manifest
			info.Target, info.Mode, info.Status, info.Start, info.End = m.Target.Name, m.Mode, m.Status, m.Start, m.End
		}
		list = append(list, info)
		fmt.Fprintf(&b, "%s  %s of %s, %s", dir, info.Mode, info.Target, info.Status)
		if !info.Start.IsZero() {
			fmt.Fprintf(&b, ", from %s", info.Start.UTC().Format(time.RFC3339))
		}
		b.WriteString("\n")
	}
	if len(list) == 0 {
		fmt.Fprintf(&b, "No memdoctor session under %s.\n", s.roots)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: b.String()}}}, map[string]any{"sessions": list}, nil
}
