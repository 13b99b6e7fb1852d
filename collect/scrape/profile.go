package scrape

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/pprof/profile"

	"github.com/memdoctor/memdoctor/collect/pprofio"
)

// cpuProfileDefault is how long /debug/pprof/profile samples without
// seconds=N.
const cpuProfileDefault = 30 * time.Second

// Profile fetches the proto profile name ("heap", "goroutine", "allocs",
// "block", "mutex", "profile", ...) with an optional query (seconds=N asks
// for a delta profile, or the CPU profile's duration; the timeout grows by
// N). It validates the body (gzip or raw protobuf, parsed and checked) and
// returns it exactly as served, so it can be written to disk and opened by
// go tool pprof, together with the parsed profile. A text or HTML body is
// ErrNotProfile; gc=N and debug=N are refused (memdoctor never forces a GC,
// and debug=N returns text).
func (c *Client) Profile(ctx context.Context, name string, query url.Values) (raw []byte, p *profile.Profile, err error) {
	extra, err := checkProfileQuery(name, query)
	if err != nil {
		return nil, nil, fmt.Errorf("profile %q from %s: %w", name, c.BaseURL(), err)
	}
	u := c.endpoint(name, query)
	if err := c.get(ctx, u, name, extra, c.consumeProfile(&raw, &p)); err != nil {
		return nil, nil, err
	}
	return raw, p, nil
}

// consumeProfile reads and validates a proto profile body into raw and p, within the
// client's profile limits.
func (c *Client) consumeProfile(raw *[]byte, p **profile.Profile) consumeFunc {
	lim := c.profileLimits()
	return func(body io.Reader, resp *http.Response) error {
		b, err := readBody(body, resp.ContentLength, lim.Compressed)
		if err != nil {
			return err
		}
		data := b.Bytes()
		b = nil // the chunks are garbage once joined
		pp, err := parseProfile(data, lim)
		if err != nil {
			return err
		}
		*raw, *p = data, pp
		return nil
	}
}

// GoroutineLeak fetches the goroutineleak profile (/goroutineleak, proto), served by Go 1.27
// and by Go 1.26 built with GOEXPERIMENT=goroutineleakprofile: the goroutines the GC proved
// blocked forever on channels, mutexes or conditions that no running goroutine can reach.
// It checks the goroutineleak/count sample type.
//
// Unlike every other request of this package it costs the target a garbage collection: the
// runtime runs a full GC cycle with leak detection before it writes the profile (gctrace
// marks it "(checking for goroutine leaks)" and "(forced)"; it counts in
// /gc/cycles/forced), and the cycle's cost grows with the number of goroutines. Fetch it
// sparingly. It makes one attempt, never retried. A target that does not serve it answers
// 404: the error wraps ErrNotFound.
func (c *Client) GoroutineLeak(ctx context.Context) (raw []byte, p *profile.Profile, err error) {
	return c.once(ctx, "goroutineleak", nil, goroutineLeakSampleTypes)
}

// once fetches a profile that costs the target a GC (GoroutineLeak, HeapAfterGC): one
// attempt, never retried, and its sample types checked.
func (c *Client) once(ctx context.Context, name string, query url.Values, want []sampleType) (raw []byte, p *profile.Profile, err error) {
	u := c.endpoint(name, query)
	if _, _, err := c.try(ctx, u, name, 0, c.consumeProfile(&raw, &p)); err != nil {
		return nil, nil, err
	}
	if err := checkSampleTypes(p, name, want); err != nil {
		return nil, nil, fmt.Errorf("GET %s: %w", u.Redacted(), err)
	}
	return raw, p, nil
}

// HeapAfterGC fetches the heap profile with gc=1 (/heap?gc=1, proto): the runtime runs a full
// GC before it writes the profile, so the profile shows the heap reachable now and the
// runtime's figures read the live heap as of that cycle (it counts in /gc/cycles/forced).
// Like GoroutineLeak it costs the target a garbage collection, whose work grows with its live
// heap: fetch it only when a reading of the live heap now decides something, and never on a
// heap larger than the cost allows. It makes one attempt, never retried, and checks the four
// sample types Heap checks.
func (c *Client) HeapAfterGC(ctx context.Context) (raw []byte, p *profile.Profile, err error) {
	return c.once(ctx, "heap", url.Values{"gc": {"1"}}, heapSampleTypes)
}

// checkProfileQuery refuses parameters that change what Profile returns
// and computes the extra time seconds=N needs.
func checkProfileQuery(name string, query url.Values) (time.Duration, error) {
	if err := checkProfileName(name); err != nil {
		return 0, err
	}
	if query.Has("gc") {
		return 0, fmt.Errorf("the gc parameter is refused: it forces a garbage collection in the target (HeapAfterGC asks for one on purpose)")
	}
	if d := query.Get("debug"); d != "" && d != "0" {
		return 0, fmt.Errorf("debug=%s asks for text, not a proto profile (use GoroutineText or MemStats)", d)
	}
	if !query.Has("seconds") {
		if name == "profile" {
			return cpuProfileDefault, nil
		}
		return 0, nil
	}
	secs, err := strconv.ParseInt(query.Get("seconds"), 10, 64)
	if err != nil || secs <= 0 || secs > 24*3600 {
		return 0, fmt.Errorf("seconds=%q: want a whole number of seconds between 1 and 86400", query.Get("seconds"))
	}
	return time.Duration(secs) * time.Second, nil
}

// profileLimits are the bounds on a profile body: pprofio's, within the client's body limit.
func (c *Client) profileLimits() pprofio.Limits {
	lim := pprofio.Default
	lim.Compressed = min(lim.Compressed, c.maxBody)
	lim.Decompressed = min(lim.Decompressed, c.maxBody)
	return lim
}

// Heap fetches the heap profile (/heap, proto) and checks that it has the
// four sample types alloc_objects/count, alloc_space/bytes,
// inuse_objects/count and inuse_space/bytes.
func (c *Client) Heap(ctx context.Context) ([]byte, *profile.Profile, error) {
	return c.profileOfKind(ctx, "heap", heapSampleTypes)
}

// Goroutine fetches the goroutine profile (/goroutine, proto) and checks
// that it has the goroutine/count sample type.
func (c *Client) Goroutine(ctx context.Context) ([]byte, *profile.Profile, error) {
	return c.profileOfKind(ctx, "goroutine", goroutineSampleTypes)
}

func (c *Client) profileOfKind(ctx context.Context, name string, want []sampleType) ([]byte, *profile.Profile, error) {
	raw, p, err := c.Profile(ctx, name, nil)
	if err != nil {
		return nil, nil, err
	}
	if err := checkSampleTypes(p, name, want); err != nil {
		return nil, nil, fmt.Errorf("GET %s: %w", c.endpoint(name, nil).Redacted(), err)
	}
	return raw, p, nil
}

type sampleType struct{ typ, unit string }

var (
	heapSampleTypes = []sampleType{
		{"alloc_objects", "count"}, {"alloc_space", "bytes"},
		{"inuse_objects", "count"}, {"inuse_space", "bytes"},
	}
	goroutineSampleTypes     = []sampleType{{"goroutine", "count"}}
	goroutineLeakSampleTypes = []sampleType{{"goroutineleak", "count"}}
)

// checkSampleTypes reports the wanted sample types a profile lacks.
func checkSampleTypes(p *profile.Profile, name string, want []sampleType) error {
	have := make(map[sampleType]bool, len(p.SampleType))
	var names []string
	for _, st := range p.SampleType {
		have[sampleType{st.Type, st.Unit}] = true
		names = append(names, sampleTypeName(st.Type, st.Unit))
	}
	var missing []string
	for _, w := range want {
		if !have[w] {
			missing = append(missing, sampleTypeName(w.typ, w.unit))
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("%w: the %s profile lacks sample types [%s] (it has [%s]); is this a Go %s profile?",
		ErrUnexpectedProfile, name, strings.Join(missing, " "), strings.Join(names, " "), name)
}

func sampleTypeName(typ, unit string) string {
	if typ == "" {
		typ = "(unnamed)"
	}
	if unit == "" {
		unit = "(no unit)"
	}
	return typ + "/" + unit
}
