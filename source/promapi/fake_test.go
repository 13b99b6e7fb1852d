package promapi

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/model"
)

// fakeProm answers the queries Read sends as a Prometheus would, from a value function per
// quantity and target: it recognises each range query by its expression with the selector
// taken out, so that tests check what the package does with the answers (the PromQL
// arithmetic itself is the server's job, proved against a real Prometheus in
// cmd/memdoctor's fleet end-to-end test).
type fakeProm struct {
	targets  []Labels
	interval time.Duration // the targets' scrape interval
	// value returns target i's reading of q at t (false: no reading).
	value func(q quantity, i int, t time.Time) (float64, bool)
	// version is go_info's version label.
	version string

	mu      sync.Mutex
	queries []string
	headers []http.Header
	// status, when set, is the HTTP status and body of every answer.
	status int
	body   string
}

var selectorRE = regexp.MustCompile(`\{[^}]*\}`)

func (f *fakeProm) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	q := r.Form.Get("query")
	f.mu.Lock()
	f.queries = append(f.queries, r.URL.Path+" "+q)
	f.headers = append(f.headers, r.Header.Clone())
	f.mu.Unlock()
	if f.status != 0 {
		w.WriteHeader(f.status)
		fmt.Fprint(w, f.body)
		return
	}
	targets := f.matching(q)
	var data any
	switch r.URL.Path {
	case "/api/v1/query":
		at := parseTS(r.Form.Get("time"))
		data = f.instant(q, targets, at)
	case "/api/v1/query_range":
		start, end := parseTS(r.Form.Get("start")), parseTS(r.Form.Get("end"))
		step, _ := strconv.ParseFloat(r.Form.Get("step"), 64)
		data = f.rangeQuery(q, targets, start, end, time.Duration(step*float64(time.Second)))
	default:
		http.NotFound(w, r)
		return
	}
	json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": data})
}

func parseTS(s string) time.Time {
	v, _ := strconv.ParseFloat(s, 64)
	return time.UnixMilli(int64(math.Round(v * 1000)))
}

// matching returns the indexes of the targets the query's matchers select (job and
// instance, = or =~).
func (f *fakeProm) matching(q string) []int {
	m := regexp.MustCompile(`(job|instance)(=~|=)"((?:[^"\\]|\\.)*)"`).FindAllStringSubmatch(q, -1)
	var out []int
	for i, t := range f.targets {
		ok := true
		for _, mm := range m {
			v, _ := strconv.Unquote(`"` + mm[3] + `"`)
			if mm[2] == "=" && t[mm[1]] != v || mm[2] == "=~" && !regexp.MustCompile("^(?:"+v+")$").MatchString(t[mm[1]]) {
				ok = false
			}
		}
		if ok {
			out = append(out, i)
		}
	}
	return out
}

func (f *fakeProm) metric(i int, extra ...string) model.Metric {
	m := model.Metric{}
	for k, v := range f.targets[i] {
		m[model.LabelName(k)] = model.LabelValue(v)
	}
	for j := 0; j+1 < len(extra); j += 2 {
		m[model.LabelName(extra[j])] = model.LabelValue(extra[j+1])
	}
	return m
}

func (f *fakeProm) instant(q string, targets []int, at time.Time) map[string]any {
	vec := model.Vector{}
	switch {
	case strings.HasPrefix(q, "count_over_time(go_goroutines"):
		for _, i := range targets {
			vec = append(vec, &model.Sample{Metric: f.metric(i), Value: 100, Timestamp: model.TimeFromUnixNano(at.UnixNano())})
		}
	case strings.HasPrefix(q, "go_goroutines") && strings.HasSuffix(q, "]"):
		// Raw readings: a range vector selector.
		look, _ := model.ParseDuration(q[strings.LastIndex(q, "[")+1 : len(q)-1])
		mat := model.Matrix{}
		for _, i := range targets {
			s := &model.SampleStream{Metric: f.metric(i, "__name__", "go_goroutines")}
			for t := at.Add(-time.Duration(look)).Truncate(f.interval); !t.After(at); t = t.Add(f.interval) {
				if v, ok := f.value(qGoroutines, i, t); ok && t.After(at.Add(-time.Duration(look))) {
					s.Values = append(s.Values, model.SamplePair{Timestamp: model.TimeFromUnixNano(t.UnixNano()), Value: model.SampleValue(v)})
				}
			}
			mat = append(mat, s)
		}
		return map[string]any{"resultType": "matrix", "result": mat}
	}
	return map[string]any{"resultType": "vector", "result": vec}
}

func (f *fakeProm) rangeQuery(q string, targets []int, start, end time.Time, step time.Duration) map[string]any {
	template := selectorRE.ReplaceAllString(q, "%[1]s")
	mat := model.Matrix{}
	for _, qu := range queries {
		if qu.expr != template && qu.promql("") != q {
			continue
		}
		for _, i := range targets {
			s := &model.SampleStream{Metric: f.metric(i)}
			if qu.q == qInfo {
				s.Metric["version"] = model.LabelValue(f.version)
			}
			for t := start; !t.After(end); t = t.Add(step) {
				// The reading Prometheus would pick: the last scrape at or before t.
				scrape := t.Truncate(f.interval)
				if v, ok := f.value(qu.q, i, scrape); ok {
					s.Values = append(s.Values, model.SamplePair{Timestamp: model.TimeFromUnixNano(t.UnixNano()), Value: model.SampleValue(v)})
				}
			}
			if len(s.Values) > 0 {
				mat = append(mat, s)
			}
		}
	}
	return map[string]any{"resultType": "matrix", "result": mat}
}

// start serves the fake and returns its URL.
func (f *fakeProm) start(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return srv.URL
}

func (f *fakeProm) rangeQueries() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, q := range f.queries {
		if rest, ok := strings.CutPrefix(q, "/api/v1/query_range "); ok {
			out = append(out, rest)
		}
	}
	return out
}
