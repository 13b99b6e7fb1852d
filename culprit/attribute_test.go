package culprit

import (
	"slices"
	"testing"
)

func TestAttribute(t *testing.T) {
	const mod = "github.com/acme/svc"
	httpRoot := []string{"net/http.HandlerFunc.ServeHTTP:2294", "net/http.serverHandler.ServeHTTP:3301", "net/http.(*conn).serve:2102"}
	tests := []struct {
		name      string
		mod       string
		stack     []string // location specs, leaf first
		want      Site
		wantStack []string // nil: the frames' functions in order
	}{
		{
			name:  "own frame wins over stdlib",
			stack: append([]string{"io.ReadAll:712", "main.handleUpload:41"}, httpRoot...),
			want:  Site{"main.handleUpload", "/src/main/x.go", 41, true},
			wantStack: []string{"io.ReadAll", "main.handleUpload", "net/http.HandlerFunc.ServeHTTP",
				"net/http.serverHandler.ServeHTTP", "net/http.(*conn).serve"},
		},
		{
			name:  "main module wins over third party",
			mod:   mod,
			stack: []string{"github.com/klauspost/compress/zstd.(*Decoder).DecodeAll:390", "github.com/klauspost/compress/zstd.(*Decoder).Reset:201", mod + "/internal/ingest.(*Reader).Next:88", "main.main:12"},
			want:  Site{mod + "/internal/ingest.(*Reader).Next", "/src/" + mod + "/internal/ingest/x.go", 88, true},
		},
		{
			name:  "innermost non-stdlib wins without a main module",
			stack: []string{"github.com/klauspost/compress/zstd.(*Decoder).DecodeAll:390", mod + "/internal/ingest.(*Reader).Next:88", "main.main:12"},
			want:  Site{"github.com/klauspost/compress/zstd.(*Decoder).DecodeAll", "/src/github.com/klauspost/compress/zstd/x.go", 390, true},
		},
		{
			name:  "third party wins when no frame is in the main module",
			mod:   mod,
			stack: []string{"encoding/json.Unmarshal:100", "github.com/other/lib.Load:7", "github.com/other/lib.Init.func1:9"},
			want:  Site{"github.com/other/lib.Load", "/src/github.com/other/lib/x.go", 7, true},
		},
		{
			name:  "package main is the program's own even with a main module",
			mod:   mod,
			stack: []string{"github.com/other/lib.Load:7", "main.run:30", mod + "/cmd.Execute:5"},
			want:  Site{"main.run", "/src/main/x.go", 30, true},
		},
		{
			name:  "all stdlib falls back to the innermost non-runtime frame",
			stack: []string{"runtime.makeslice:103", "encoding/json.(*decodeState).literalStore:1012", "encoding/json.Unmarshal:106", "net/http.(*conn).serve:2102"},
			want:  Site{"encoding/json.(*decodeState).literalStore", "/usr/local/go/src/encoding/json/x.go", 1012, false},
		},
		{
			name:  "all runtime falls back to the leaf",
			mod:   mod,
			stack: []string{"runtime.malg:4800", "runtime.newproc1:4900", "runtime.newproc.func1:4870", "runtime.systemstack:514"},
			want:  Site{"runtime.malg", "/usr/local/go/src/runtime/x.go", 4800, false},
		},
		{
			// A goroutine's g, allocated on the system stack: the heap profile's stack holds
			// the runtime alone, from the allocator up.
			name:  "all runtime names the frame past the allocation plumbing",
			mod:   mod,
			stack: []string{"runtime.mallocgc:1000", "runtime.newobject:1700", "runtime.malg:4800", "runtime.newproc1:4900", "runtime.newproc.func1:4870", "runtime.systemstack:514"},
			want:  Site{"runtime.malg", "/usr/local/go/src/runtime/x.go", 4800, false},
		},
		{
			name:  "append's growth in the runtime names the runtime's slice",
			mod:   mod,
			stack: []string{"runtime.mallocgc:1000", "runtime.growslice:200", "runtime.allgadd:600", "runtime.newproc1:4900", "runtime.newproc.func1:4870", "runtime.systemstack:514"},
			want:  Site{"runtime.allgadd", "/usr/local/go/src/runtime/x.go", 600, false},
		},
		{
			name:  "a map's internals are plumbing too",
			stack: []string{"runtime.mallocgc:1000", "runtime.newarray:1800", "internal/runtime/maps.newarray:10", "internal/runtime/maps.(*table).grow:20", "runtime.mapassign_fast64:30", "runtime.addfinalizer:40", "runtime.systemstack:514"},
			want:  Site{"runtime.addfinalizer", "/usr/local/go/src/runtime/x.go", 40, false},
		},
		{
			name:  "plumbing alone falls back to the leaf",
			stack: []string{"runtime.mallocgc:1000", "runtime.systemstack:514"},
			want:  Site{"runtime.mallocgc", "/usr/local/go/src/runtime/x.go", 1000, false},
		},
		{
			name: "inlined frames count as frames",
			// bytes.growSlice and (*Buffer).grow were inlined into main.readBody.
			stack:     []string{"bytes.growSlice:249 < bytes.(*Buffer).grow:151 < main.readBody:77", "main.handler:20"},
			want:      Site{"main.readBody", "/src/main/x.go", 77, true},
			wantStack: []string{"bytes.growSlice", "bytes.(*Buffer).grow", "main.readBody", "main.handler"},
		},
		{
			name:      "own code inlined into a stdlib frame",
			stack:     []string{"runtime.mallocgc:1000", "main.(*T).Less:15 < sort.insertionSort:12", "sort.Sort:40", "main.sortAll:60"},
			want:      Site{"main.(*T).Less", "/src/main/x.go", 15, true},
			wantStack: []string{"runtime.mallocgc", "main.(*T).Less", "sort.insertionSort", "sort.Sort", "main.sortAll"},
		},
		{
			name:  "closures and methods",
			mod:   mod,
			stack: []string{"strings.(*Builder).grow:69", mod + ".(*Server).handle.func2.1:33", mod + ".(*Server).handle.func2:30", mod + ".Server.Serve:10"},
			want:  Site{mod + ".(*Server).handle.func2.1", "/src/" + mod + "/x.go", 33, true},
		},
		{
			name:      "generic names are normalized",
			stack:     []string{"slices.Grow[go.shape.[]uint8,go.shape.uint8]:90", mod + ".Collect[go.shape.int]:12"},
			want:      Site{mod + ".Collect[...]", "/src/" + mod + "/x.go", 12, true},
			wantStack: []string{"slices.Grow[...]", mod + ".Collect[...]"},
		},
		{
			name:      "gopkg.in paths",
			mod:       "gopkg.in/yaml.v3",
			stack:     []string{"reflect.New:3100", "gopkg.in/yaml%2ev3.(*decoder).unmarshal:500", "github.com/acme/cfg.Load:9"},
			want:      Site{"gopkg.in/yaml%2ev3.(*decoder).unmarshal", "/src/gopkg.in/yaml.v3/x.go", 500, true},
			wantStack: []string{"reflect.New", "gopkg.in/yaml%2ev3.(*decoder).unmarshal", "github.com/acme/cfg.Load"},
		},
		{
			name:      "unsymbolized frames are not own",
			stack:     []string{"?a", "?b"},
			want:      Site{Function: "0x400010"},
			wantStack: []string{"0x400010", "0x400020"},
		},
		{
			name:      "no stack",
			stack:     nil,
			want:      Site{Function: unknownFunction},
			wantStack: []string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSynth(0, "alloc_space/bytes")
			locs := s.stack(tt.stack...)
			site, stack := Attribute(locs, Options{MainModule: tt.mod})
			if site != tt.want {
				t.Errorf("site = %+v, want %+v", site, tt.want)
			}
			want := tt.wantStack
			if want == nil {
				want = appendFrameNamesForTest(tt.stack)
			}
			if !slices.Equal(stack, want) {
				t.Errorf("stack = %q, want %q", stack, want)
			}
		})
	}
}

// appendFrameNamesForTest returns the functions of location specs without
// inlining (one frame per spec).
func appendFrameNamesForTest(specs []string) []string {
	out := []string{}
	for _, s := range specs {
		name, _, _ := cutLast(s, ":")
		out = append(out, name)
	}
	return out
}

func cutLast(s, sep string) (string, string, bool) {
	for i := len(s) - len(sep); i >= 0; i-- {
		if s[i:i+len(sep)] == sep {
			return s[:i], s[i+len(sep):], true
		}
	}
	return s, "", false
}
