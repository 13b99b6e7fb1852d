//go:build !nopprof

package lab

import (
	"encoding/json"
	"io"
	"testing"
)

func TestAccountsDocumentIsValidJSON(t *testing.T) {
	d := newAccountsDocument(1 << 20)
	data, err := io.ReadAll(d.reader())
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(data)) != d.size() {
		t.Fatalf("read %d bytes, size() says %d", len(data), d.size())
	}
	var records []importRecord
	if err := json.Unmarshal(data, &records); err != nil {
		t.Fatal(err)
	}
	if want := 1 + 200*d.times; len(records) != want {
		t.Errorf("%d records, want %d", len(records), want)
	}
	if len(data) < 900<<10 || len(data) > 1<<20 {
		t.Errorf("document of %d bytes, asked for about 1 MiB", len(data))
	}
}

func TestSniffFormat(t *testing.T) {
	want := []string{"json", "xml", "syslog-rfc5424", "syslog-rfc3164", "apache-combined", "apache-common",
		"nginx-error", "logfmt", "csv", "text"}
	if len(want) != len(sniffSamples) {
		t.Fatalf("%d samples, %d formats", len(sniffSamples), len(want))
	}
	for i, s := range sniffSamples {
		if got := sniffFormat([]byte(s)); got != want[i] {
			t.Errorf("sniffFormat(%.40q) = %q, want %q", s, got, want[i])
		}
	}
}

func TestHashKeyIsDeterministic(t *testing.T) {
	c := customerInfo{ID: "c1", Tier: "gold", Attrs: map[string]string{"a": "1", "b": "2", "c": "3"}}
	it := lineItem{SKU: "s", Qty: 2, Options: map[string]string{"x": "1", "y": "2"}}
	k := func(qty int) uint64 {
		it := it
		it.Qty = qty
		return hashKey(&pricingKey{Customer: &c, Currency: "EUR", Item: &it})
	}
	first := k(2)
	for range 20 { // map iteration order varies; the key must not
		if k(2) != first {
			t.Fatal("hashKey differs between calls on equal values")
		}
	}
	if k(3) == first {
		t.Error("hashKey ignores a field")
	}
}

func TestVisitorsAgree(t *testing.T) {
	doc := newOrdersDocument(1, 50)
	for _, field := range []string{"price", "qty", "total", "missing"} {
		q1 := &sumQuery{field: field}
		(&ctxVisitor{cb: sumCallback{q1}}).visit(nil, doc, 0)
		q2 := &sumQuery{field: field}
		stackVisitors.Get().(*stackVisitor).visit(doc, q2)
		if *q1 != *q2 {
			t.Errorf("field %q: context visitor %+v, stack visitor %+v", field, *q1, *q2)
		}
	}
	q := &sumQuery{field: "price"}
	(&ctxVisitor{cb: sumCallback{q}}).visit(nil, doc, 0)
	if q.nodes < 50*45 || q.matches != 50*5 || q.maxDepth != 6 {
		t.Errorf("walk of 50 orders: %+v", *q)
	}
}
