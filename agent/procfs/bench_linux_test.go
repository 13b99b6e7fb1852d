//go:build linux

package procfs

import (
	"net"
	"net/netip"
	"os"
	"testing"
)

// BenchmarkSample is one full per-second sample of a process: what the
// collectors and the agent call every second.
func BenchmarkSample(b *testing.B) {
	fsys := realFS(b)
	pid := os.Getpid()
	if _, err := fsys.Cgroup(pid); err != nil {
		b.Skip(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := fsys.Status(pid); err != nil {
			b.Fatal(err)
		}
		if _, err := fsys.SmapsRollup(pid); err != nil {
			b.Fatal(err)
		}
		if _, err := fsys.Stat(pid); err != nil {
			b.Fatal(err)
		}
		if _, err := fsys.Cgroup(pid); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReaders(b *testing.B) {
	fsys := realFS(b)
	pid := os.Getpid()
	for _, bm := range []struct {
		name string
		fn   func() error
	}{
		{"Status", func() error { _, err := fsys.Status(pid); return err }},
		{"SmapsRollup", func() error { _, err := fsys.SmapsRollup(pid); return err }},
		{"Stat", func() error { _, err := fsys.Stat(pid); return err }},
		{"Cgroup", func() error { _, err := fsys.Cgroup(pid); return err }},
		{"Cmdline", func() error { _, err := fsys.Cmdline(pid); return err }},
		{"Descendants", func() error { _, err := fsys.Descendants(pid); return err }},
		{"ListeningPorts", func() error { _, err := fsys.ListeningPorts(pid); return err }},
	} {
		b.Run(bm.name, func(b *testing.B) {
			if err := bm.fn(); err != nil {
				b.Skip(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := bm.fn(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPIDListeningOn scans every process's open files: a lookup done
// once when attaching to a service, not every second.
func BenchmarkPIDListeningOn(b *testing.B) {
	fsys := realFS(b)
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	b.ReportAllocs()
	for b.Loop() {
		if _, err := fsys.PIDListeningOn(netip.Addr{}, port); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadStatus compares this package's pooled raw read with
// os.ReadFile on the same file, the reason sys_linux.go exists.
func BenchmarkReadStatus(b *testing.B) {
	realFS(b)
	b.Run("os.ReadFile", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			data, err := os.ReadFile("/proc/self/status")
			if err != nil {
				b.Fatal(err)
			}
			if _, err := parseStatus(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("withFile", func(b *testing.B) {
		b.ReportAllocs()
		path := []byte("/proc/self/status\x00")
		for b.Loop() {
			err := withFile(path, func(data []byte) error {
				_, err := parseStatus(data)
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}
