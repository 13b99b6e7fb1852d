package pprofio

import (
	"bytes"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/google/pprof/profile"
)

// realProfiles are every real profile the repository holds: this package's and the shared
// corpus.
func allRealProfiles(t testing.TB) []string {
	var out []string
	for _, glob := range []string{"testdata/real/*", "../../testdata/profiles/*.pb*", "../../testdata/profiles/*.heap", "../../testdata/profiles/parca_heap_series/*"} {
		m, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range m {
			if filepath.Ext(p) != ".tsv" {
				out = append(out, p)
			}
		}
	}
	if len(out) < 20 {
		t.Fatalf("found %d real profiles, want the corpus", len(out))
	}
	return out
}

// TestSummarizeMatchesParse: on every real protobuf profile the summary read from the
// encoding is the one of the fully parsed profile; legacy text is refused as not a protobuf.
func TestSummarizeMatchesParse(t *testing.T) {
	for _, path := range allRealProfiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := Default.ReadFileData(path)
			if err != nil {
				t.Fatal(err)
			}
			p, perr := profile.ParseData(data)
			s, err := Summarize(path, data)
			if _, protoErr := profile.ParseUncompressed(data); protoErr != nil {
				if err == nil {
					t.Fatalf("summarized bytes pprof does not decode as a protobuf (%v)", protoErr)
				}
				return
			}
			if perr != nil || err != nil {
				t.Fatalf("parse: %v, summarize: %v", perr, err)
			}
			want := SummaryOf(p)
			if !reflect.DeepEqual(s, want) {
				t.Errorf("summary\n got %+v\nwant %+v", s, want)
			}
		})
	}
}

func TestSummarizeRefusesBadInput(t *testing.T) {
	good := encode(t, &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "goroutine", Unit: "count"}},
		Sample:     []*profile.Sample{{Value: []int64{3}}},
	})
	for name, data := range map[string][]byte{
		"empty":               nil,
		"truncated":           good[:len(good)-1],
		"text":                []byte("heap profile: 1: 2 [3: 4] @ heap/1048576\n"),
		"values mismatch":     encode(t, &profile.Profile{SampleType: []*profile.ValueType{{Type: "a"}, {Type: "b"}}, Sample: []*profile.Sample{{Value: []int64{1}}}}),
		"string out of range": {0x0a, 0x02, 0x08, 0x05, 0x32, 0x00}, // sample_type{type: 5}, string_table[""]
	} {
		if _, err := Summarize(name, data); err == nil {
			t.Errorf("%s: summarized", name)
		}
	}
	s, err := Summarize("good", good)
	if err != nil || s.Samples != 1 || s.Totals[0] != 3 || s.SampleTypes[0] != (ValueType{"goroutine", "count"}) {
		t.Errorf("good: %+v, %v", s, err)
	}
}

func encode(t testing.TB, p *profile.Profile) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := p.WriteUncompressed(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// FuzzSummarize: no input panics; what summarizes is a protobuf pprof decodes, with the
// same summary; and summarizing allocates little whatever the input (no per-sample memory).
func FuzzSummarize(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		var s *Summary
		var err error
		alloc := allocatedBy(func() { s, err = Summarize("fuzz", data) })
		if max := uint64(64<<10 + 2*len(data)); alloc > max {
			t.Errorf("allocated %d bytes for %d bytes of input", alloc, len(data))
		}
		if err != nil {
			return
		}
		p, perr := profile.ParseUncompressed(data)
		if perr != nil {
			return // the encoding and the values are sound; the stacks are not checked
		}
		if perr = p.CheckValid(); perr != nil {
			return
		}
		if want := SummaryOf(p); !reflect.DeepEqual(s.Totals, want.Totals) || !reflect.DeepEqual(s.SampleTypes, want.SampleTypes) || s.TimeNanos != want.TimeNanos {
			t.Errorf("summary %+v, parsed %+v", s, want)
		}
	})
}
