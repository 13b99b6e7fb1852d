package culprit

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

var httpRoot = []string{"net/http.HandlerFunc.ServeHTTP:2294", "net/http.serverHandler.ServeHTTP:3301", "net/http.(*conn).serve:2102"}

func withRoot(frames ...string) []string { return append(frames, httpRoot...) }

func TestAggregateSynthetic(t *testing.T) {
	s := newSynth(0, "alloc_objects/count", "alloc_space/bytes")
	s.sample([]int64{1, 100}, withRoot("io.ReadAll:712", "main.handleUpload:41")...)
	s.sample([]int64{1, 100}, withRoot("io.ReadAll:712", "main.handleUpload:41")...) // same stack, other labels
	s.sample([]int64{2, 300}, withRoot("bytes.growSlice:249 < main.handleUpload:45")...)
	s.sample([]int64{1, 50}, "io.ReadAll:712", "main.handleUpload:41", "main.main:9")
	s.sample([]int64{1, 80}, "encoding/json.(*decodeState).literalStore:1012", "encoding/json.Unmarshal:106", "net/http.(*conn).serve:2102")
	s.sample([]int64{0, 0}, "main.never:1")
	s.sample([]int64{1, 10}, "main.b:1")
	s.sample([]int64{1, 10}, "main.a:1")

	tab, err := Aggregate(s.p, "alloc_space", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if tab.Type != "alloc_space" || tab.Unit != "bytes" || tab.Total != 650 {
		t.Fatalf("table %s/%s total %d", tab.Type, tab.Unit, tab.Total)
	}
	type row struct {
		fn    string
		line  int64
		own   bool
		value int64
		leaf  string
		root  string
	}
	rows := func(es []Entry) []row {
		var out []row
		for _, e := range es {
			out = append(out, row{e.Site.Function, e.Site.Line, e.Site.Own, e.Value, e.Stack[0], e.Stack[len(e.Stack)-1]})
		}
		return out
	}
	wantFunc := []row{
		{"main.handleUpload", 45, true, 550, "bytes.growSlice", "net/http.(*conn).serve"},
		{"encoding/json.(*decodeState).literalStore", 1012, false, 80, "encoding/json.(*decodeState).literalStore", "net/http.(*conn).serve"},
		{"main.a", 1, true, 10, "main.a", "main.a"},
		{"main.b", 1, true, 10, "main.b", "main.b"},
	}
	if got := rows(tab.ByFunction); !slices.Equal(got, wantFunc) {
		t.Errorf("ByFunction\n got %v\nwant %v", got, wantFunc)
	}
	wantLine := []row{
		{"main.handleUpload", 45, true, 300, "bytes.growSlice", "net/http.(*conn).serve"},
		// Line 41's heaviest stack is the one reached through net/http (200)
		// rather than from main.main (50).
		{"main.handleUpload", 41, true, 250, "io.ReadAll", "net/http.(*conn).serve"},
		{"encoding/json.(*decodeState).literalStore", 1012, false, 80, "encoding/json.(*decodeState).literalStore", "net/http.(*conn).serve"},
		{"main.a", 1, true, 10, "main.a", "main.a"},
		{"main.b", 1, true, 10, "main.b", "main.b"},
	}
	if got := rows(tab.ByLine); !slices.Equal(got, wantLine) {
		t.Errorf("ByLine\n got %v\nwant %v", got, wantLine)
	}
	if want := []string{"io.ReadAll", "main.handleUpload", "net/http.HandlerFunc.ServeHTTP", "net/http.serverHandler.ServeHTTP", "net/http.(*conn).serve"}; !slices.Equal(tab.ByLine[1].Stack, want) {
		t.Errorf("stack %q, want %q", tab.ByLine[1].Stack, want)
	}

	objs, err := Aggregate(s.p, "alloc_objects/count", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if objs.Total != 8 || objs.ByFunction[0].Site.Function != "main.handleUpload" || objs.ByFunction[0].Value != 5 {
		t.Errorf("alloc_objects: total %d, top %+v", objs.Total, objs.ByFunction[0])
	}
}

func TestSampleIndexErrors(t *testing.T) {
	s := newSynth(0, "alloc_objects/count", "alloc_space/bytes")
	for typ, want := range map[string]int{"alloc_space": 1, "alloc_objects": 0, "alloc_space/bytes": 1, "": 1} {
		if got, err := SampleIndex(s.p, typ); err != nil || got != want {
			t.Errorf("SampleIndex(%q) = %d, %v; want %d", typ, got, err, want)
		}
	}
	s.p.DefaultSampleType = "alloc_objects"
	if got, _ := SampleIndex(s.p, ""); got != 0 {
		t.Errorf("default sample type: %d", got)
	}
	for _, typ := range []string{"inuse_space", "alloc_space/count", "goroutine"} {
		_, err := SampleIndex(s.p, typ)
		if err == nil || !errors.Is(err, ErrNoSampleType) ||
			!strings.Contains(err.Error(), `"`+typ+`"`) || !strings.Contains(err.Error(), "alloc_objects/count, alloc_space/bytes") {
			t.Errorf("SampleIndex(%q) error: %v", typ, err)
		}
	}
	if _, err := Aggregate(s.p, "inuse_space", Options{}); !errors.Is(err, ErrNoSampleType) {
		t.Errorf("Aggregate: %v", err)
	}
	if _, err := Aggregate(nil, "inuse_space", Options{}); err == nil {
		t.Errorf("Aggregate(nil): no error")
	}
}
