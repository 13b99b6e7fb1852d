package report

// PageData is the data part of the HTML report: everything the page's script draws, embedded
// in the page as JSON (<script type="application/json" id="memdoctor-data">). Times are
// seconds since T0, the start of the session's window; values are in bytes, counts, per
// second or fractions, as each series' Unit says. The text of the page (headline figures,
// finding cards) is rendered as HTML around it.
type PageData struct {
	Version int `json:"version"`
	// T0 is the window's start in Unix seconds; Start and End bound the window, relative to T0.
	T0        float64       `json:"t0"`
	End       float64       `json:"end"`
	Zone      Zone          `json:"zone"`
	Charts    []Chart       `json:"charts"`
	Findings  []FindingMark `json:"findings"`
	Snapshots []Snapshot    `json:"snapshots"`
	// Serve is true on the page `memdoctor serve` serves: it links snapshots to pprof's web UI.
	Serve bool `json:"serve,omitempty"`
	// Elapsed: times are seconds since each session's start, shown as such (the comparison
	// page: T0 is 0 and Zone is UTC).
	Elapsed bool `json:"elapsed,omitempty"`
}

// Zone is the time zone the page shows times in.
type Zone struct {
	// Name is what the page states, e.g. "Europe/Paris (CET, UTC+01:00)".
	Name string `json:"name"`
	// Offsets are the zone's offsets east of UTC in seconds, each from a time (seconds since
	// T0) on; the first applies before the second's time too. A window that crosses a
	// daylight-saving change has two.
	Offsets []ZoneOffset `json:"offsets"`
}

// ZoneOffset is the offset in force from From on.
type ZoneOffset struct {
	From   float64 `json:"from"`
	Offset int     `json:"offset"`
	Abbrev string  `json:"abbrev"`
}

// Chart is one time chart. All its series share X.
type Chart struct {
	ID      string `json:"id"`
	Title   string `json:"title"`
	Caption string `json:"caption,omitempty"`
	// Unit and Unit2 are the units of the left and right axes: bytes, per_second, fraction,
	// count ("" = no right axis).
	Unit    string   `json:"unit"`
	Unit2   string   `json:"unit2,omitempty"`
	Stacked bool     `json:"stacked,omitempty"`
	X       nums     `json:"x"`
	Series  []Series `json:"series"`
	// Marks are instants drawn as ticks along the bottom (GC cycles), MarksLabel names them.
	Marks      *nums  `json:"marks,omitempty"`
	MarksLabel string `json:"marks_label,omitempty"`
	// Lines are horizontal lines: the memory budget, the cgroup limit.
	Lines []Line `json:"lines,omitempty"`
	// Points is how many source points the chart was drawn from, before downsampling.
	Points int `json:"points"`
	// Empty says why a chart has nothing to draw (then X and Series are empty).
	Empty string `json:"empty,omitempty"`
}

// Series is one line or stacked area of a chart.
type Series struct {
	Name string `json:"name"`
	Unit string `json:"unit"`
	// Axis is 0 for the left axis, 1 for the right.
	Axis int `json:"axis,omitempty"`
	// Area: a stacked band (Stacked charts); otherwise a line.
	Area bool `json:"area,omitempty"`
	// Color is an index into the page's palette; Pattern names the fill pattern of an area and
	// Dash the dash pattern of a line, so that series differ without colour.
	Color   int    `json:"color"`
	Pattern string `json:"pattern,omitempty"`
	Dash    []int  `json:"dash,omitempty"`
	Values  nums   `json:"values"`
}

// Line is a horizontal line across a chart.
type Line struct {
	Label string  `json:"label"`
	Value float64 `json:"value"`
	Dash  []int   `json:"dash"`
}

// FindingMark places a finding on the timeline and carries its flame graph.
type FindingMark struct {
	N        int      `json:"n"` // the card's number, from 1
	Kind     string   `json:"kind"`
	Severity string   `json:"severity"`
	Start    *float64 `json:"start,omitempty"`
	End      *float64 `json:"end,omitempty"`
	Flame    *Flame   `json:"flame,omitempty"`
	// Pair names the two snapshots (Snapshot.ID, old then new) to diff in pprof; nil = none.
	Pair []int `json:"pair,omitempty"`
	// SampleIndex is the sample type to open the pair with ("" = the profile's default).
	SampleIndex string `json:"sample_index,omitempty"`
}

// Snapshot is a stored profile the page marks on the timeline or links to.
type Snapshot struct {
	ID    int     `json:"id"` // index in the session's profile list (memdoctor serve's URLs)
	Kind  string  `json:"kind"`
	T     float64 `json:"t"`
	Label string  `json:"label,omitempty"`
	Name  string  `json:"name"`
}

// Flame is an icicle: a tree of stacks, root first, each node as wide as its value.
type Flame struct {
	// Title says what the widths measure: "alloc_space allocated between 07:13:30 and 07:13:33".
	Title string `json:"title"`
	Unit  string `json:"unit"` // bytes or count
	Total int64  `json:"total"`
	// Shrank is the sum of the stacks that shrank (not drawn); 0 for a single profile.
	Shrank int64    `json:"shrank,omitempty"`
	Names  []string `json:"names"`
	// Nodes lists the tree in pre-order: [name index, value, number of children, flags];
	// flags bit 0: the culprit frame attribution picked; bit 1: the program's own code.
	Nodes [][4]int64 `json:"nodes"`
	// Dropped counts the nodes left out because they would be too narrow to see.
	Dropped int `json:"dropped,omitempty"`
}
