package recorder

import "strings"

// WithGCTrace returns a GODEBUG value that keeps every setting of godebug and turns on
// gctrace=1. A gctrace setting of 1 or more that the user chose is kept as it is.
func WithGCTrace(godebug string) string {
	var kept []string
	for _, kv := range strings.Split(godebug, ",") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		if k, v, _ := strings.Cut(kv, "="); k == "gctrace" {
			if v != "" && v != "0" {
				return godebug
			}
			continue
		}
		kept = append(kept, kv)
	}
	return strings.Join(append(kept, "gctrace=1"), ",")
}

// setEnv returns env with key set to value, replacing every earlier setting of key.
func setEnv(env []string, key, value string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return append(out, key+"="+value)
}

// getEnv returns the value of key in env ("" if unset).
func getEnv(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if strings.HasPrefix(kv, key+"=") {
			v = kv[len(key)+1:]
		}
	}
	return v
}
