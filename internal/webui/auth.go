package webui

import (
	"crypto/sha256"
	"crypto/subtle"
	"net"
	"net/http"
	"strings"
)

// tokenCookie carries the token after a first visit with ?token=, so that pprof's own links,
// which do not keep our query, stay authorised.
const tokenCookie = "memdoctor_token"

// authorize wraps h with the token check (when token is set) or the loopback Host check.
func authorize(h http.Handler, token string) http.Handler {
	if token == "" {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !loopbackHost(r.Host) {
				http.Error(w, "memdoctor serve: refused: the Host header is not a loopback name (start with --token to serve other names)", http.StatusForbidden)
				return
			}
			h.ServeHTTP(w, r)
		})
	}
	want := sha256.Sum256([]byte(token))
	ok := func(got string) bool {
		g := sha256.Sum256([]byte(got))
		return got != "" && subtle.ConstantTimeCompare(g[:], want[:]) == 1
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if bearer, found := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); found && ok(strings.TrimSpace(bearer)) {
			h.ServeHTTP(w, r)
			return
		}
		if q := r.URL.Query().Get("token"); q != "" && ok(q) {
			http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: q, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			h.ServeHTTP(w, r)
			return
		}
		if c, err := r.Cookie(tokenCookie); err == nil && ok(c.Value) {
			h.ServeHTTP(w, r)
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="memdoctor"`)
		http.Error(w, "memdoctor serve: unauthorized: give the token (Authorization: Bearer TOKEN, or ?token=TOKEN)", http.StatusUnauthorized)
	})
}

// loopbackHost reports whether a Host header names this machine's loopback: localhost or a
// loopback IP, with or without a port.
func loopbackHost(host string) bool {
	h, _, err := net.SplitHostPort(host)
	if err != nil {
		h = strings.Trim(host, "[]")
	}
	return IsLoopback(h)
}

// IsLoopback reports whether host (a name or an IP, without port) is loopback: "localhost",
// 127.0.0.0/8 or ::1. The empty host (all interfaces) is not.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
