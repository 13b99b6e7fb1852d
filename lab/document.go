package lab

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"
)

// This file holds what the visitor scenarios share: a parsed JSON-like
// document (orders with customers and line items, about 5,000 nodes), the
// query they answer by walking it, and the load that asks it.

type docKind uint8

const (
	docObject docKind = iota
	docArray
	docString
	docNumber
)

type docNode struct {
	key  string // member name in the parent object; "" in arrays
	kind docKind
	num  float64
	str  string
	kids []*docNode
}

func obj(key string, kids ...*docNode) *docNode {
	return &docNode{key: key, kind: docObject, kids: kids}
}
func arr(key string, kids ...*docNode) *docNode {
	return &docNode{key: key, kind: docArray, kids: kids}
}
func str(key, v string) *docNode         { return &docNode{key: key, kind: docString, str: v} }
func num(key string, v float64) *docNode { return &docNode{key: key, kind: docNumber, num: v} }

// newOrdersDocument builds a document of orders with about 50 nodes each.
func newOrdersDocument(seed uint64, orders int) *docNode {
	rng := rand.New(rand.NewPCG(seed, 3))
	cities := []string{"Lisbon", "Utrecht", "Osaka", "Denver", "Nairobi"}
	colors := []string{"red", "green", "blue", "black"}
	list := make([]*docNode, 0, orders)
	for i := range orders {
		items := make([]*docNode, 0, 5)
		for j := range 5 {
			items = append(items, obj("",
				str("sku", fmt.Sprintf("SKU-%05d", rng.IntN(100000))),
				num("qty", float64(1+rng.IntN(4))),
				num("price", float64(rng.IntN(20000))/100),
				obj("attrs", str("color", colors[(i+j)%len(colors)]), str("size", strconv.Itoa(36+j))),
			))
		}
		list = append(list, obj("",
			num("id", float64(i)),
			str("status", "paid"),
			num("total", float64(rng.IntN(100000))/100),
			obj("customer",
				str("name", fmt.Sprintf("customer %d", rng.IntN(5000))),
				str("email", fmt.Sprintf("c%d@example.com", rng.IntN(5000))),
				obj("address", str("street", "1 Main St"), str("city", cities[i%len(cities)]), str("zip", strconv.Itoa(10000+i))),
			),
			arr("items", items...),
		))
	}
	return obj("", str("version", "3"), arr("orders", list...))
}

// sumQuery sums the numbers whose member name is field.
type sumQuery struct {
	field    string
	sum      float64
	matches  int
	nodes    int
	maxDepth int
}

func (q *sumQuery) match(n *docNode, depth int) {
	q.nodes++
	q.maxDepth = max(q.maxDepth, depth)
	if n.kind == docNumber && n.key == q.field {
		q.sum += n.num
		q.matches++
	}
}

// documentStore holds the parsed documents the visitor scenarios query.
type documentStore struct {
	docs []*docNode
}

func newDocumentStore() *documentStore {
	s := &documentStore{}
	for i := range 4 {
		s.docs = append(s.docs, newOrdersDocument(uint64(i), 100))
	}
	return s
}

// lookup parses the {doc} path value.
func (s *documentStore) lookup(r *http.Request) (*docNode, bool) {
	i, err := strconv.Atoi(r.PathValue("doc"))
	if err != nil || i < 0 || i >= len(s.docs) {
		return nil, false
	}
	return s.docs[i], true
}

func writeSum(w http.ResponseWriter, q *sumQuery) {
	var b [64]byte
	w.Header().Set("Content-Type", "text/plain")
	w.Write(strconv.AppendFloat(b[:0], q.sum, 'f', 2, 64))
}

// queryLoad asks for the sum of a field of one of the documents, about
// perSecond times a second.
func queryLoad(perSecond int) load {
	paths := []string{"/docs/0/sum/price", "/docs/1/sum/qty", "/docs/2/sum/total", "/docs/3/sum/price"}
	return load{
		workers: 2,
		every:   time.Second / time.Duration(perSecond),
		send: func(ctx context.Context, c *client, w int) error {
			return c.send(ctx, call{method: http.MethodGet, path: paths[int(c.requests.Load())%len(paths)]})
		},
	}
}
