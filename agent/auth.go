package agent

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"
)

// tokenMatches reports whether an Authorization header carries "Bearer <token>". It compares
// digests in constant time, so neither the token's bytes nor its length leak through timing.
func tokenMatches(header, token string) bool {
	scheme, got, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		got = "" // compare anyway: the time taken does not depend on the header
	}
	g := sha256.Sum256([]byte(strings.TrimSpace(got)))
	w := sha256.Sum256([]byte(token))
	return subtle.ConstantTimeCompare(g[:], w[:]) == 1 && ok && token != ""
}

// requireToken wraps h so that requests without the bearer token get 401.
func requireToken(token string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !tokenMatches(r.Header.Get("Authorization"), token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="memdoctor agent"`)
			httpError(w, http.StatusUnauthorized, "the memdoctor agent needs Authorization: Bearer <token> (memdoctor watch --token, or MEMDOCTOR_TOKEN)")
			return
		}
		h.ServeHTTP(w, r)
	})
}
