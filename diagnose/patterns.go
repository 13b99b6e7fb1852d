package diagnose

import "strings"

// pattern is a known allocation pattern, recognised by a frame of the stacks that allocate,
// with the advice that fixes it.
type pattern struct {
	name string
	// frames: a stack matches when one of its frames starts with one of these.
	frames []string
	// advice for an allocation hotspot; spikeAdvice for a transient spike ("" = none).
	advice, spikeAdvice string
}

var patterns = []pattern{
	{
		name:   "regexp compiled per call",
		frames: []string{"regexp.Compile", "regexp.MustCompile", "regexp.compile", "regexp/syntax."},
		advice: "A regular expression is compiled on every call: compile it once (a package-level var x = regexp.MustCompile(...)) and reuse it; a *regexp.Regexp is safe for concurrent use.",
	},
	{
		name:        "encoding/json on whole bodies",
		frames:      []string{"encoding/json.Unmarshal", "encoding/json.(*decodeState)", "encoding/json.(*Decoder).Decode", "encoding/json.Marshal", "encoding/json.(*encodeState)"},
		advice:      "encoding/json decodes whole documents into memory: stream large bodies with json.NewDecoder(r) and Decoder.Token/More to handle one element at a time, and decode into reused structs.",
		spikeAdvice: "Do not unmarshal large documents whole: stream them with json.NewDecoder(body) and Decoder.Token/More, one record at a time, so the peak is one record, not the document.",
	},
	{
		name:        "whole-body reads",
		frames:      []string{"io.ReadAll", "io/ioutil.ReadAll", "bytes.(*Buffer).grow", "bytes.(*Buffer).ReadFrom", "bytes.growSlice", "os.ReadFile"},
		advice:      "Whole payloads are read into memory (io.ReadAll / bytes.Buffer growth): process the stream as it comes, cap it with io.LimitReader or http.MaxBytesReader, and when a whole copy is needed, size it once from Content-Length.",
		spikeAdvice: "Read request bodies as streams instead of io.ReadAll, and cap them with http.MaxBytesReader: a burst of large bodies read whole is the spike.",
	},
	{
		name:   "gzip/flate per call",
		frames: []string{"compress/flate.NewReader", "compress/flate.NewWriter", "compress/gzip.NewReader", "compress/gzip.NewWriter", "compress/flate.(*compressor).init", "compress/flate.(*decompressor)"},
		advice: "gzip/flate readers and writers are created per call (each holds tens of KiB of state): keep them in a sync.Pool and Reset them for each stream.",
	},
	{
		name:   "reflection",
		frames: []string{"reflect."},
		advice: "Reflection-heavy code (reflect.Value boxing, fmt of reflected values, temporary key/value slices) allocates per field: hash or encode the fields directly, or generate the code; reuse scratch slices.",
	},
	{
		name:   "fmt in a hot path",
		frames: []string{"fmt.Sprint", "fmt.Sprintf", "fmt.Sprintln", "fmt.Fprintf", "fmt.(*pp)", "fmt.newPrinter"},
		advice: "fmt.Sprint*/Sprintf in a hot path allocates for every call: use strconv.Append* into a reused []byte or a pooled buffer.",
	},
	{
		name:   "slice and map growth without size hints",
		frames: []string{"runtime.growslice", "runtime.mapassign", "runtime.hashGrow", "runtime.makemap", "runtime.(*hmap)", "internal/runtime/maps."},
		advice: "Slices and maps grow by reallocation: give make() a capacity or size hint when the size is known, and reuse them (s = s[:0], clear(m)) across calls.",
	},
	{
		name:   "sorting with temporary slices",
		frames: []string{"sort.Slice", "sort.SliceStable", "slices.SortFunc"},
		advice: "Sorting builds temporary slices on every call: sort once and keep the result, or reuse the scratch slice.",
	},
}

// matchPatterns returns the patterns a stack matches, in the table's order.
func matchPatterns(stack []string) []pattern {
	var out []pattern
	for _, p := range patterns {
		if p.matches(stack) {
			out = append(out, p)
		}
	}
	return out
}

func (p pattern) matches(stack []string) bool {
	for _, fr := range stack {
		for _, pre := range p.frames {
			if strings.HasPrefix(fr, pre) {
				return true
			}
		}
	}
	return false
}
