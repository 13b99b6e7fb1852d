package memread_test

import "testing"

// BenchmarkHeapProfile reads an idle program's heap profile from its memory, as watch does at
// each interval: what it costs memdoctor (the program runs on, unstopped).
func BenchmarkHeapProfile(b *testing.B) {
	tg := start(b, build(b, "", false))
	r := open(b, tg.pid)
	for b.Loop() {
		if _, _, err := r.HeapProfile(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStats reads an idle program's runtime figures from its memory, as watch does at
// each sample.
func BenchmarkStats(b *testing.B) {
	tg := start(b, build(b, "", false))
	r := open(b, tg.pid)
	for b.Loop() {
		if _, err := r.Stats(); err != nil {
			b.Fatal(err)
		}
	}
}
