package culprit

import "testing"

func TestPackagePathAndIsStdlib(t *testing.T) {
	tests := []struct {
		fn, pkg string
		std     bool
	}{
		{"main.main", "main", false},
		{"main.(*server).handle.func2.1", "main", false},
		{"runtime.mallocgc", "runtime", true},
		{"runtime/internal/atomic.Xadd64", "runtime/internal/atomic", true},
		{"internal/runtime/maps.newarray", "internal/runtime/maps", true},
		{"io.ReadAll", "io", true},
		{"encoding/json.(*decodeState).object", "encoding/json", true},
		{"net/http.HandlerFunc.ServeHTTP", "net/http", true},
		{"net/http.(*conn).serve", "net/http", true},
		{"internal/poll.(*FD).Read", "internal/poll", true},
		{"vendor/golang.org/x/net/http2/hpack.(*Decoder).Write", "vendor/golang.org/x/net/http2/hpack", true},
		{"golang.org/x/net/http2.(*Framer).ReadFrame", "golang.org/x/net/http2", false},
		{"github.com/a/b.(*T).M", "github.com/a/b", false},
		{"github.com/a/b.T.M", "github.com/a/b", false},
		{"github.com/a/b.F.func1", "github.com/a/b", false},
		{"github.com/a/b.(*T).M.func2.1", "github.com/a/b", false},
		{"github.com/a/b/v2.New", "github.com/a/b/v2", false},
		{"github.com/klauspost/compress/zstd.(*Decoder).DecodeAll", "github.com/klauspost/compress/zstd", false},
		{"gopkg.in/yaml.v3.(*parser).parse", "gopkg.in/yaml.v3", false},
		{"gopkg.in/yaml.v3.Unmarshal", "gopkg.in/yaml.v3", false},
		{"gopkg.in/yaml%2ev3.Unmarshal", "gopkg.in/yaml.v3", false},
		{"gopkg.in/go-playground/validator%2ev9.New", "gopkg.in/go-playground/validator.v9", false},
		{"gopkg.in/inf%2ev0.glob..func1", "gopkg.in/inf.v0", false},
		{"gopkg.in/DataDog/dd-trace-go.v1/ddtrace/tracer.StartSpan", "gopkg.in/DataDog/dd-trace-go.v1/ddtrace/tracer", false},
		// A method of type v2 in package prometheus, not a versioned path.
		{"github.com/prometheus/client_golang/prometheus.v2.NewDesc", "github.com/prometheus/client_golang/prometheus", false},
		{"github.com/grafana/loki/pkg/storage/stores/series/index.v10Entries.GetChunkWriteEntries", "github.com/grafana/loki/pkg/storage/stores/series/index", false},
		// Generics: type arguments may hold paths, dots and spaces.
		{"slices.Sort[...]", "slices", true},
		{"github.com/a/b.Map[...].func1", "github.com/a/b", false},
		{"github.com/google/btree.(*BTreeG[go.shape.interface { Less(github.com/google/btree.Item) bool }]).ReplaceOrInsert", "github.com/google/btree", false},
		{"encoding/json.appendString[go.shape.string]", "encoding/json", true},
		{"github.com/bboreham/go-loser.New[go.shape.uint64,go.shape.interface { At() github.com/prometheus/prometheus/storage.SeriesRef }]", "github.com/bboreham/go-loser", false},
		{"crypto/ecdh.(*nistCurve[go.shape.*uint8]).GenerateKey", "crypto/ecdh", true},
		{"command-line-arguments.handler", "command-line-arguments", false},
		{"type:.eq.[2]interface {}", "type:", true},
		// No package: C symbols, raw addresses, markers.
		{"malloc", "", false},
		{"0x4b3dd4", "", false},
		{"(unknown)", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		if got := PackagePath(tt.fn); got != tt.pkg {
			t.Errorf("PackagePath(%q) = %q, want %q", tt.fn, got, tt.pkg)
		}
		if got := IsStdlib(tt.fn); got != tt.std {
			t.Errorf("IsStdlib(%q) = %v, want %v", tt.fn, got, tt.std)
		}
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		fn, mod string
		want    frameClass
	}{
		{"runtime.mallocgc", "", classAlloc},
		{"runtime.malg", "", classRuntime},
		{"runtime.gopark", "github.com/acme/svc", classRuntime},
		{"internal/poll.runtime_pollWait", "", classRuntime},
		{"sync.runtime_SemacquireMutex", "", classRuntime},
		{"internal/runtime/maps.newarray", "", classAlloc},
		{"runtime/pprof.StartCPUProfile", "", classStd},
		{"sync.(*Mutex).Lock", "", classStd},
		{"main.main", "", classMain},
		{"main.main", "github.com/acme/svc", classMain},
		{"github.com/acme/svc/internal/api.(*Server).upload", "github.com/acme/svc", classMain},
		{"github.com/acme/svc.Run", "github.com/acme/svc", classMain},
		{"github.com/acme/svc2.Run", "github.com/acme/svc", classThirdParty},
		{"github.com/acme/svc/internal/api.(*Server).upload", "", classThirdParty},
		{"github.com/klauspost/compress/zstd.(*Decoder).DecodeAll", "github.com/acme/svc", classThirdParty},
		// A dotless module path is the main module when named.
		{"myapp/internal/handler.Serve", "myapp", classMain},
		{"myapp/internal/handler.Serve", "", classStd},
		{"gopkg.in/yaml%2ev3.Unmarshal", "gopkg.in/yaml.v3", classMain},
		{"malloc", "", classUnknown},
		{"0x4b3dd4", "github.com/acme/svc", classUnknown},
	}
	for _, tt := range tests {
		if got := classify(tt.fn, Options{MainModule: tt.mod}); got != tt.want {
			t.Errorf("classify(%q, %q) = %d, want %d", tt.fn, tt.mod, got, tt.want)
		}
	}
}

func TestNormalizeFunc(t *testing.T) {
	tests := map[string]string{
		"main.main":           "main.main",
		"pkg.F[...]":          "pkg.F[...]",
		"pkg.F[go.shape.int]": "pkg.F[...]",
		"pkg.(*T[go.shape.struct { X int }]).M.func1":               "pkg.(*T[...]).M.func1",
		"github.com/a/b.New[go.shape.uint64,go.shape.interface {}]": "github.com/a/b.New[...]",
		"pkg.broken[": "pkg.broken[",
	}
	for in, want := range tests {
		if got := normalizeFunc(in); got != want {
			t.Errorf("normalizeFunc(%q) = %q, want %q", in, got, want)
		}
	}
}
