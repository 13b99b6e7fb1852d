package culprit

import (
	"testing"

	"github.com/google/pprof/profile"
)

// TestMainModuleRealProfiles: real profiles of programs built every way (GOPATH with a vendor
// directory, a module cache, -trimpath) name their main module.
func TestMainModuleRealProfiles(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{"prometheus_heap_4types.pb.gz", "github.com/prometheus/prometheus"},                 // /app/..., deps in /go/pkg/mod
		{"pyroscope_server_heap_4types.pb.gz", "github.com/pyroscope-io/pyroscope"},          // -trimpath
		{"parca_heap_series/1644509272337470000.pb.gz", "github.com/parca-dev/parca"},        // a laptop's module cache
		{"goroutine_unnamed_sampletype.pb.gz", "github.com/parca-dev/parca"},                 // GOPATH
		{"node_exporter_heap_4types.pb.gz", "github.com/prometheus/node_exporter/collector"}, // vendor/: its deps are left out
		{"loki_heap_4types.pb.gz", "github.com/grafana/enterprise-logs/pkg/enterprise/loki"}, // vendors loki itself
	} {
		if got := MainModule(sharedProfile(t, c.file)); got != c.want {
			t.Errorf("%s: main module %q, want %q", c.file, got, c.want)
		}
	}
}

func TestMainModule(t *testing.T) {
	fn := func(name, file string) *profile.Function { return &profile.Function{Name: name, Filename: file} }
	for _, c := range []struct {
		name  string
		funcs []*profile.Function
		want  string
	}{
		{"none", nil, ""},
		{"std and main only", []*profile.Function{fn("main.main", "/src/main.go"), fn("io.ReadAll", "/usr/local/go/src/io/io.go")}, ""},
		{"no file names", []*profile.Function{fn("github.com/a/b.F", "")}, ""},
		{"module cache dependency", []*profile.Function{fn("github.com/dep/x.F", "/root/go/pkg/mod/github.com/dep/x@v1.0.0/x.go")}, ""},
		{"trimpath dependency", []*profile.Function{fn("github.com/dep/x.F", "github.com/dep/x@v1.0.0/x.go")}, ""},
		{"vendored", []*profile.Function{fn("github.com/dep/x.F", "/src/app/vendor/github.com/dep/x/x.go")}, ""},
		{"two packages", []*profile.Function{
			fn("github.com/acme/svc/internal/store.(*S).Put", "/build/internal/store/store.go"),
			fn("github.com/acme/svc/server.Run", "/build/server/server.go"),
			fn("github.com/dep/x.F", "/root/go/pkg/mod/github.com/dep/x@v1.0.0/x.go"),
		}, "github.com/acme/svc"},
		{"no dot", []*profile.Function{fn("myapp/store.Put", "/src/store/store.go"), fn("myapp/api.Get", "/src/api/api.go")}, ""},
		{"a locally replaced dependency", []*profile.Function{
			fn("github.com/acme/svc/a.F", "/b/a/a.go"), fn("github.com/acme/svc/b.F", "/b/b/b.go"),
			fn("example.org/lib.G", "/lib/lib.go"),
		}, "github.com/acme/svc"},
		{"a generic function", []*profile.Function{fn("github.com/acme/svc/cache.(*LRU[go.shape.string]).Add", "/b/cache/lru.go")}, "github.com/acme/svc/cache"},
	} {
		if got := MainModule(&profile.Profile{Function: c.funcs}); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
