package gctrace_test

import (
	"strings"
	"testing"

	"github.com/memdoctor/memdoctor/gctrace"
)

func BenchmarkParseLine(b *testing.B) {
	for _, bc := range []struct{ name, line string }{
		{"go1.19+", go119Line + " (forced)"},
		{"go1.5", parseTests[6].line},
		{"prefixed", parseTests[7].line},
		{"not-gc", "2024/05/01 12:00:00 GET /api/v1/users 200 1.2ms"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.line)))
			for b.Loop() {
				gctrace.ParseLine(bc.line)
			}
		})
	}
}

func BenchmarkIsRuntimeTrace(b *testing.B) {
	for _, bc := range []struct{ name, line string }{
		{"gc", go119Line},
		{"pacer", "pacer: assist ratio=0.95670166015625 (scan 0 MB in 3->4 MB) workers=0+0.25"},
		{"output", "2024/05/01 12:00:00 GET /api/v1/users 200 1.2ms"},
		{"output-long", strings.Repeat("request id=8f2c gc=off ", 40)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.line)))
			for b.Loop() {
				gctrace.IsRuntimeTrace(bc.line)
			}
		})
	}
}

func BenchmarkScanner(b *testing.B) {
	var sb strings.Builder
	for i := 0; i < 100; i++ {
		sb.WriteString(go119Line + "\n")
		sb.WriteString("scav 0 KiB work (bg), 0 KiB work (eager), 4792 KiB now, 99% util\n")
		sb.WriteString("2024/05/01 12:00:00 GET /api/v1/users 200 1.2ms\n")
	}
	in := sb.String()
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		s := gctrace.NewScanner(strings.NewReader(in))
		n := 0
		for s.Scan() {
			n++
		}
		if n != 100 {
			b.Fatalf("%d cycles", n)
		}
	}
}
