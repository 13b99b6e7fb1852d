package words

import "github.com/memdoctor/memdoctor/facts"

// patternAdvice says what fixes each known allocation pattern (facts.Patterns): in an
// allocation hotspot, and in a transient spike ("" = nothing specific).
var patternAdvice = map[string]struct{ hotspot, spike string }{
	facts.PatternRegexp: {
		hotspot: "A regular expression is compiled on every call: compile it once (a package-level var x = regexp.MustCompile(...)) and reuse it; a *regexp.Regexp is safe for concurrent use.",
	},
	facts.PatternJSON: {
		hotspot: "encoding/json decodes whole documents into memory: stream large bodies with json.NewDecoder(r) and Decoder.Token/More to handle one element at a time, and decode into reused structs.",
		spike:   "Do not unmarshal large documents whole: stream them with json.NewDecoder(body) and Decoder.Token/More, one record at a time, so the peak is one record, not the document.",
	},
	facts.PatternReadAll: {
		hotspot: "Whole payloads are read into memory (io.ReadAll / bytes.Buffer growth): process the stream as it comes, cap it with io.LimitReader or http.MaxBytesReader, and when a whole copy is needed, size it once from Content-Length.",
		spike:   "Read request bodies as streams instead of io.ReadAll, and cap them with http.MaxBytesReader: a burst of large bodies read whole is the spike.",
	},
	facts.PatternGzip: {
		hotspot: "gzip/flate readers and writers are created per call (each holds tens of KiB of state): keep them in a sync.Pool and Reset them for each stream.",
	},
	facts.PatternReflection: {
		hotspot: "Reflection-heavy code (reflect.Value boxing, fmt of reflected values, temporary key/value slices) allocates per field: hash or encode the fields directly, or generate the code; reuse scratch slices.",
	},
	facts.PatternFmt: {
		hotspot: "fmt.Sprint*/Sprintf in a hot path allocates for every call: use strconv.Append* into a reused []byte or a pooled buffer.",
	},
	facts.PatternGrowth: {
		hotspot: "Slices and maps grow by reallocation: give make() a capacity or size hint when the size is known, and reuse them (s = s[:0], clear(m)) across calls.",
	},
	facts.PatternSort: {
		hotspot: "Sorting builds temporary slices on every call: sort once and keep the result, or reuse the scratch slice.",
	},
}
