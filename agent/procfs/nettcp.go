package procfs

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net/netip"
)

// tcpListen is the state of a listening socket in /proc/net/tcp (TCP_LISTEN).
const tcpListen = 0x0A

// hostOrder is the byte order the kernel uses when it prints each 32-bit word
// of an address in /proc/net/tcp{,6} as hex: the host's own.
var hostOrder binary.ByteOrder = binary.NativeEndian

// tcpRow is the part of a /proc/net/tcp or tcp6 row memdoctor uses.
type tcpRow struct {
	Addr  netip.Addr
	Port  int
	State uint8
	Inode uint64
}

// parseTCPLine parses one row of /proc/net/tcp or /proc/net/tcp6:
//
//	0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000  0 43107 1 ...
//
// (slot, local address:port, remote address:port, state, tx:rx queue, timer,
// retransmits, uid, timeout, inode, ...). Addresses are hex, each 32-bit word
// in the byte order order (the host's, see hostOrder); ports are plain hex.
// ok is false for the header line and blank lines.
func parseTCPLine(line []byte, order binary.ByteOrder) (row tcpRow, ok bool, err error) {
	slot, rest := nextField(line)
	if len(slot) == 0 || string(slot) == "sl" {
		return tcpRow{}, false, nil
	}
	var f [9][]byte // local, remote, st, queues, timer, retrnsmt, uid, timeout, inode
	for i := range f {
		if f[i], rest = nextField(rest); len(f[i]) == 0 {
			return tcpRow{}, false, fmt.Errorf("bad tcp row %q: too few fields", line)
		}
	}
	addr, port, found := bytes.Cut(f[0], []byte{':'})
	a, okA := parseHexAddr(addr, order)
	p, okP := parseHex(port)
	if !found || !okA || !okP || len(port) != 4 {
		return tcpRow{}, false, fmt.Errorf("bad tcp row %q: bad local address %q", line, f[0])
	}
	st, okS := parseHex(f[2])
	if !okS || len(f[2]) != 2 {
		return tcpRow{}, false, fmt.Errorf("bad tcp row %q: bad state %q", line, f[2])
	}
	ino, okI := parseUint(f[8])
	if !okI {
		return tcpRow{}, false, fmt.Errorf("bad tcp row %q: bad inode %q", line, f[8])
	}
	return tcpRow{Addr: a, Port: int(p), State: uint8(st), Inode: ino}, true, nil
}

// parseHexAddr decodes an IPv4 (8 hex digits) or IPv6 (32 hex digits) address
// printed as 32-bit words in the given byte order.
func parseHexAddr(b []byte, order binary.ByteOrder) (netip.Addr, bool) {
	var ip [16]byte
	n := len(b) / 2
	if len(b) != 8 && len(b) != 32 {
		return netip.Addr{}, false
	}
	for w := 0; w < n/4; w++ {
		v, ok := parseHex(b[w*8 : w*8+8])
		if !ok {
			return netip.Addr{}, false
		}
		order.PutUint32(ip[w*4:], uint32(v))
	}
	if n == 4 {
		return netip.AddrFrom4([4]byte(ip[:4])), true
	}
	return netip.AddrFrom16(ip), true
}

// parseSocketLink returns the inode of an fd link target "socket:[12345]".
func parseSocketLink(b []byte) (uint64, bool) {
	const prefix = "socket:["
	if len(b) < len(prefix)+2 || string(b[:len(prefix)]) != prefix || b[len(b)-1] != ']' {
		return 0, false
	}
	return parseUint(b[len(prefix) : len(b)-1])
}

// listenerMatches reports whether a listener on la accepts connections to
// want: the same address (IPv4-mapped IPv6 compared as IPv4), or the
// wildcard of want's family, or "::", which on Linux also accepts IPv4
// unless the socket is IPV6_V6ONLY (not visible in /proc; assumed off, the
// default). exact tells the two apart. An invalid want matches everything.
func listenerMatches(la, want netip.Addr) (match, exact bool) {
	if !want.IsValid() {
		return true, true
	}
	la, want = la.Unmap(), want.Unmap()
	switch {
	case la == want:
		return true, true
	case la == netip.IPv6Unspecified():
		return true, false
	case la == netip.IPv4Unspecified() && want.Is4():
		return true, false
	}
	return false, false
}
