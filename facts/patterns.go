package facts

import (
	"sort"
	"strings"

	"github.com/memdoctor/memdoctor/evidence"
)

// Pattern is a known allocation pattern, recognised by a frame of the stacks that allocate.
// What fixes each is said by the words layer, by Name.
type Pattern struct {
	Name string
	// Frames: a stack matches when one of its frames starts with one of these.
	Frames []string
}

// The known allocation patterns, by name.
const (
	PatternRegexp     = "regexp compiled per call"
	PatternJSON       = "encoding/json on whole bodies"
	PatternReadAll    = "whole-body reads"
	PatternGzip       = "gzip/flate per call"
	PatternReflection = "reflection"
	PatternFmt        = "fmt in a hot path"
	PatternGrowth     = "slice and map growth without size hints"
	PatternSort       = "sorting with temporary slices"
)

// Patterns are the known allocation patterns, in the order they are matched.
var Patterns = []Pattern{
	{PatternRegexp, []string{"regexp.Compile", "regexp.MustCompile", "regexp.compile", "regexp/syntax."}},
	{PatternJSON, []string{"encoding/json.Unmarshal", "encoding/json.(*decodeState)", "encoding/json.(*Decoder).Decode", "encoding/json.Marshal", "encoding/json.(*encodeState)"}},
	{PatternReadAll, []string{"io.ReadAll", "io/ioutil.ReadAll", "bytes.(*Buffer).grow", "bytes.(*Buffer).ReadFrom", "bytes.growSlice", "os.ReadFile"}},
	{PatternGzip, []string{"compress/flate.NewReader", "compress/flate.NewWriter", "compress/gzip.NewReader", "compress/gzip.NewWriter", "compress/flate.(*compressor).init", "compress/flate.(*decompressor)"}},
	{PatternReflection, []string{"reflect."}},
	{PatternFmt, []string{"fmt.Sprint", "fmt.Sprintf", "fmt.Sprintln", "fmt.Fprintf", "fmt.(*pp)", "fmt.newPrinter"}},
	{PatternGrowth, []string{"runtime.growslice", "runtime.mapassign", "runtime.hashGrow", "runtime.makemap", "runtime.(*hmap)", "internal/runtime/maps."}},
	{PatternSort, []string{"sort.Slice", "sort.SliceStable", "slices.SortFunc"}},
}

// MatchPatterns returns the patterns a stack matches, in the table's order.
func MatchPatterns(stack []string) []Pattern {
	var out []Pattern
	for _, p := range Patterns {
		if p.matches(stack) {
			out = append(out, p)
		}
	}
	return out
}

func (p Pattern) matches(stack []string) bool {
	for _, fr := range stack {
		for _, pre := range p.Frames {
			if strings.HasPrefix(fr, pre) {
				return true
			}
		}
	}
	return false
}

// sitePatterns returns, for each of the functions named, the known patterns its allocating
// stacks go through, heaviest first, keeping those with at least 10% of its bytes. It reads
// the cumulative alloc_space of one snapshot: the mix of stacks, not its amount, matters.
func sitePatterns(ev *evidence.Evidence, snap Snapshot, fns []string) map[string][]Pattern {
	out := map[string][]Pattern{}
	want := map[string]bool{}
	for _, fn := range fns {
		want[fn] = true
	}
	weights := map[string][]float64{} // function -> weight per pattern
	totals := map[string]float64{}
	err := ev.EachStack(snap, "alloc_space", func(site evidence.Site, stack []string, v int64) {
		if !want[site.Function] {
			return
		}
		totals[site.Function] += float64(v)
		w := weights[site.Function]
		if w == nil {
			w = make([]float64, len(Patterns))
			weights[site.Function] = w
		}
		for i, pat := range Patterns {
			if pat.matches(stack) {
				w[i] += float64(v)
			}
		}
	})
	if err != nil {
		return out
	}
	for fn, w := range weights {
		var idxs []int
		for i, v := range w {
			if v >= 0.1*totals[fn] && v > 0 {
				idxs = append(idxs, i)
			}
		}
		sort.SliceStable(idxs, func(a, b int) bool { return w[idxs[a]] > w[idxs[b]] })
		for _, i := range idxs {
			out[fn] = append(out[fn], Patterns[i])
		}
	}
	return out
}
