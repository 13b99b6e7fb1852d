//go:build linux

package procfs

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"
)

// socketRoot is the v2 tree with the processes' open files: the fixture's
// /proc/net/tcp{,6} rows are written for a little-endian host.
func socketRoot(t *testing.T) FS {
	t.Helper()
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		t.Skip("the fixture's /proc/net/tcp is from a little-endian host")
	}
	root := fakeRoot(t, "v2")
	long := "/var/log/" + strings.Repeat("x", 100) // longer than any socket link
	symlinks(t, root, map[string]string{
		"proc/4242/fd/0":  "/dev/null",
		"proc/4242/fd/1":  "pipe:[99]",
		"proc/4242/fd/2":  long,
		"proc/4242/fd/3":  "socket:[1001]", // 0.0.0.0:8080
		"proc/4242/fd/4":  "socket:[1004]", // 127.0.0.1:9090
		"proc/4242/fd/5":  "socket:[1002]", // [::]:6060
		"proc/4242/fd/6":  "socket:[1003]", // established, not listening
		"proc/4242/fd/7":  "socket:[1005]", // [2001:db8::1]:443
		"proc/4242/fd/8":  "socket:[1006]", // [::ffff:127.0.0.1]:7000
		"proc/4242/fd/9":  "socket:[777]",  // not in this namespace's tables
		"proc/4300/fd/3":  "socket:[2001]", // 127.0.0.1:5432, and its forked child:
		"proc/4301/fd/3":  "socket:[2001]",
		"proc/4301/fd/4":  "anon_inode:[eventfd]",
		"proc/4301/net":   "../net",        // the same network namespace as /proc/net
		"proc/4400/fd/3":  "socket:[4001]", // 127.0.0.1:3000
		"proc/4401/fd/3":  "socket:[4002]", // 0.0.0.0:3000
		"proc/4401/fd/10": "/dev/null",
	})
	return FS{Root: root}
}

func TestFakeListeningPorts(t *testing.T) {
	fsys := socketRoot(t)
	a := netip.MustParseAddr
	want := []Listener{
		{a("2001:db8::1"), 443, 1005},
		{a("::"), 6060, 1002},
		{a("::ffff:127.0.0.1"), 7000, 1006},
		{a("0.0.0.0"), 8080, 1001},
		{a("127.0.0.1"), 9090, 1004},
	}
	got, err := fsys.ListeningPorts(4242)
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("ListeningPorts(4242) = %v, %v\nwant %v", got, err, want)
	}
	got, err = fsys.ListeningPorts(4301)
	if want := []Listener{{a("127.0.0.1"), 5432, 2001}}; err != nil || !slices.Equal(got, want) {
		t.Errorf("ListeningPorts(4301) = %v, %v; want %v", got, err, want)
	}
	// A process without sockets, and one whose namespace has no IPv6.
	removeFile(t, fsys.Root, "proc/4242/net/tcp6")
	got, err = fsys.ListeningPorts(4242)
	if err != nil || len(got) != 2 || got[0].Port != 8080 || got[1].Port != 9090 {
		t.Errorf("ListeningPorts without tcp6 = %v, %v", got, err)
	}
	writeFile(t, fsys.Root, "proc/4242/net/tcp", "  sl  local_address\n   0: zz\n")
	if _, err := fsys.ListeningPorts(4242); err == nil || !strings.Contains(err.Error(), "net/tcp: bad tcp row") {
		t.Errorf("corrupt net/tcp: %v", err)
	}
}

func TestFakePIDListeningOn(t *testing.T) {
	fsys := socketRoot(t)
	a := netip.MustParseAddr
	any := netip.Addr{}
	tests := []struct {
		addr    netip.Addr
		port    int
		want    int
		is      error
		wantErr string
	}{
		{addr: any, port: 8080, want: 4242},
		{addr: a("127.0.0.1"), port: 8080, want: 4242},                 // via 0.0.0.0
		{addr: a("::1"), port: 8080, is: ErrNoListener},                // 0.0.0.0 takes no IPv6
		{addr: a("10.0.0.10"), port: 6060, want: 4242},                 // via [::]
		{addr: a("127.0.0.1"), port: 7000, want: 4242},                 // IPv4-mapped
		{addr: a("2001:db8::1"), port: 443, want: 4242},                //
		{addr: a("2001:db8::2"), port: 443, is: ErrNoListener},         //
		{addr: any, port: 5432, want: 4300},                            // the parent of the pre-forked holder
		{addr: a("127.0.0.1"), port: 3000, want: 4400},                 // exact beats wildcard
		{addr: a("10.1.1.1"), port: 3000, want: 4401},                  // only the wildcard accepts it
		{addr: any, port: 3000, want: 4400},                            // both: lowest PID, neither is the other's parent
		{addr: any, port: 0xAB2D, is: ErrNoListener},                   // a TIME_WAIT row, not a listener
		{addr: any, port: 1, is: ErrNoListener, wantErr: "TCP port 1"}, //
		{addr: a("127.0.0.1"), port: 7070, is: ErrOwnerNotVisible, wantErr: "socket inode 3001"},
		{addr: any, port: 0, wantErr: "bad TCP port 0"},
		{addr: any, port: 65536, wantErr: "bad TCP port 65536"},
	}
	for _, tt := range tests {
		got, err := fsys.PIDListeningOn(tt.addr, tt.port)
		if tt.is == nil && tt.wantErr == "" {
			if err != nil || got != tt.want {
				t.Errorf("PIDListeningOn(%v, %d) = %d, %v; want %d", tt.addr, tt.port, got, err, tt.want)
			}
			continue
		}
		if err == nil || (tt.is != nil && !errors.Is(err, tt.is)) || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("PIDListeningOn(%v, %d) = %d, %v; want error %v containing %q", tt.addr, tt.port, got, err, tt.is, tt.wantErr)
		}
		if errors.Is(err, ErrNoListener) && errors.Is(err, ErrOwnerNotVisible) {
			t.Errorf("both sentinels: %v", err)
		}
	}
}
