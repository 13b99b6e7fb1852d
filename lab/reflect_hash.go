package lab

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"reflect"
	"sort"
	"strconv"
	"sync"
	"time"
)

func reflectHash() Scenario {
	return Scenario{
		Name: "reflect-hash",
		Story: "A pricing service caches a price per line item, keyed by a hash of the request " +
			"(customer, currency, channel, flags) and the item. The key is computed by reflection, " +
			"like a generic hashstructure: it walks the fields of nested structs and maps, boxes " +
			"every value, formats it with fmt, collects field/value pairs into temporary slices and " +
			"sorts them with sort.Slice before feeding them to FNV. Every item of every request " +
			"pays thousands of bytes of garbage for a 64-bit key. The fix is a hand-written key: " +
			"append the fields in a fixed order to a reused buffer (strconv.Append*, sorted map " +
			"keys in a reused slice) or hash them directly with maphash.",
		Expect: Expect{
			Kinds: []string{kindAllocationHotspot},
			// The hotspot makes the GC run several times a second at a tenth of the CPU
			// or more: GOGC is the other lever on the same work.
			Allowed:  []string{kindGCOverhead},
			Culprit:  "github.com/memdoctor/memdoctor/lab.hashValue",
			Absent:   []string{kindHeapLeak},
			Watch:    20 * time.Second,
			Interval: 2 * time.Second,
		},
		Run: runReflectHash,
	}
}

func runReflectHash(ctx context.Context, env Env) error {
	ps := &pricingService{cache: make(map[uint64]float64)}
	return serve(ctx, env, service{
		name:   "reflect-hash",
		routes: map[string]http.HandlerFunc{"POST /quote": ps.handleQuote},
		loads:  []load{quoteLoad(400)},
	})
}

type quoteRequest struct {
	Customer customerInfo    `json:"customer"`
	Currency string          `json:"currency"`
	Channel  string          `json:"channel"`
	Flags    map[string]bool `json:"flags"`
	Items    []lineItem      `json:"items"`
}

type customerInfo struct {
	ID       string            `json:"id"`
	Tier     string            `json:"tier"`
	Region   string            `json:"region"`
	Segments []string          `json:"segments"`
	Attrs    map[string]string `json:"attrs"`
}

type lineItem struct {
	SKU     string            `json:"sku"`
	Qty     int               `json:"qty"`
	List    float64           `json:"list"`
	Options map[string]string `json:"options"`
}

// pricingKey is what a line item's price depends on.
type pricingKey struct {
	Customer *customerInfo
	Currency string
	Channel  string
	Flags    map[string]bool
	Item     *lineItem
}

type pricingService struct {
	mu    sync.Mutex
	cache map[uint64]float64
	hits  int64
}

const pricingCacheMax = 50000

func (ps *pricingService) handleQuote(w http.ResponseWriter, r *http.Request) {
	var req quoteRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil {
		http.Error(w, "decoding quote: "+err.Error(), http.StatusBadRequest)
		return
	}
	total := 0.0
	for i := range req.Items {
		key := hashKey(&pricingKey{Customer: &req.Customer, Currency: req.Currency, Channel: req.Channel,
			Flags: req.Flags, Item: &req.Items[i]})
		total += ps.price(key, &req.Customer, &req.Items[i])
	}
	var b [64]byte
	w.Header().Set("Content-Type", "text/plain")
	w.Write(strconv.AppendFloat(b[:0], total, 'f', 2, 64))
}

func (ps *pricingService) price(key uint64, c *customerInfo, it *lineItem) float64 {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if p, ok := ps.cache[key]; ok {
		ps.hits++
		return p
	}
	p := it.List * float64(it.Qty)
	if c.Tier == "gold" {
		p *= 0.9
	}
	if len(ps.cache) >= pricingCacheMax {
		clear(ps.cache)
	}
	ps.cache[key] = p
	return p
}

// hashKey hashes v by reflection.
func hashKey(v any) uint64 {
	h := fnv.New64a()
	hashValue(h, "", reflect.ValueOf(v))
	return h.Sum64()
}

type fieldPair struct{ name, value string }

// hashValue writes a canonical text of v to w: scalar fields and map entries
// as sorted name=value pairs, nested values recursively.
func hashValue(w io.Writer, prefix string, v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			hashValue(w, prefix, v.Elem())
		}
	case reflect.Struct:
		t := v.Type()
		var pairs []fieldPair
		for i := range v.NumField() {
			name := prefix + "." + t.Field(i).Name
			f := v.Field(i)
			switch f.Kind() {
			case reflect.Struct, reflect.Map, reflect.Slice, reflect.Pointer, reflect.Interface:
				hashValue(w, name, f)
			default:
				pairs = append(pairs, fieldPair{name, fmt.Sprint(f.Interface())})
			}
		}
		sort.Slice(pairs, func(i, j int) bool { return pairs[i].name < pairs[j].name })
		for _, p := range pairs {
			fmt.Fprintf(w, "%s=%s;", p.name, p.value)
		}
	case reflect.Map:
		var pairs []fieldPair
		for _, k := range v.MapKeys() {
			pairs = append(pairs, fieldPair{fmt.Sprint(k.Interface()), fmt.Sprint(v.MapIndex(k).Interface())})
		}
		sort.Slice(pairs, func(i, j int) bool { return pairs[i].name < pairs[j].name })
		for _, p := range pairs {
			fmt.Fprintf(w, "%s[%s]=%s;", prefix, p.name, p.value)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			hashValue(w, prefix+"["+strconv.Itoa(i)+"]", v.Index(i))
		}
	default:
		fmt.Fprintf(w, "%s=%v;", prefix, v.Interface())
	}
}

// quoteLoad posts quotes of 24 line items, about perSecond a second.
func quoteLoad(perSecond int) load {
	tiers := []string{"bronze", "silver", "gold"}
	var bodies [][]byte
	for i := range 8 {
		q := quoteRequest{
			Customer: customerInfo{ID: fmt.Sprintf("cust-%04d", i*37), Tier: tiers[i%3], Region: "eu-west",
				Segments: []string{"retail", "loyalty"}, Attrs: map[string]string{"lang": "nl", "vat": "NL123", "since": "2019"}},
			Currency: "EUR", Channel: "web",
			Flags: map[string]bool{"promo": i%2 == 0, "b2b": false, "express": i%3 == 0},
		}
		for j := range 24 {
			q.Items = append(q.Items, lineItem{SKU: fmt.Sprintf("SKU-%05d", i*100+j), Qty: 1 + j%3, List: 9.99 + float64(j),
				Options: map[string]string{"color": "blue", "size": strconv.Itoa(36 + j%8), "gift": "no"}})
		}
		b, _ := json.Marshal(q) // plain strings, numbers and maps: cannot fail
		bodies = append(bodies, b)
	}
	return load{
		workers: 2,
		every:   time.Second / time.Duration(perSecond),
		send: func(ctx context.Context, c *client, w int) error {
			body := bodies[int(c.requests.Load())%len(bodies)]
			return c.send(ctx, call{method: http.MethodPost, path: "/quote",
				contentType: "application/json", body: bytes.NewReader(body)})
		},
	}
}
