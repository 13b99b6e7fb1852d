package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

const (
	axfrZone    = "example.org."
	axfrRecords = 5000
	axfrPerSec  = 30
)

// setupCoreDNS writes a zone of axfrRecords A records and a Corefile serving it with transfers
// allowed and the pprof plugin on.
func setupCoreDNS(work string) (*launch, error) {
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	dnsPort, pprofPort := ports[0], ports[1]
	if err := writeZone(filepath.Join(work, "db.example.org"), axfrRecords); err != nil {
		return nil, err
	}
	const corefile = `%s:%d {
    bind 127.0.0.1
    file db.example.org
    transfer {
        to *
    }
%s}
`
	withPprof := fmt.Sprintf(corefile, axfrZone, dnsPort, fmt.Sprintf("    pprof 127.0.0.1:%d\n", pprofPort))
	if err := os.WriteFile(filepath.Join(work, "Corefile"), []byte(withPprof), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(work, "Corefile.nopprof"), []byte(fmt.Sprintf(corefile, axfrZone, dnsPort, "")), 0o644); err != nil {
		return nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", dnsPort)
	return &launch{
		args:    []string{"-conf", filepath.Join(work, "Corefile")},
		noPprof: func() ([]string, string) { return []string{"-conf", filepath.Join(work, "Corefile.nopprof")}, addr },
		pprof:   localURL(pprofPort, "/debug/pprof/"),
		load:    func(ctx context.Context) string { return axfrAbortLoad(ctx, addr, axfrPerSec) },
	}, nil
}

// writeZone writes a zone file for axfrZone with n A records.
func writeZone(path string, n int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	fmt.Fprintf(w, "$ORIGIN %s\n$TTL 3600\n", axfrZone)
	fmt.Fprintf(w, "@ IN SOA ns1.%s hostmaster.%s 1 7200 3600 1209600 3600\n", axfrZone, axfrZone)
	fmt.Fprintf(w, "@ IN NS ns1.%s\nns1 IN A 127.0.0.1\n", axfrZone)
	for i := 0; i < n; i++ {
		fmt.Fprintf(w, "h%d IN A 10.%d.%d.%d\n", i, i>>16&255, i>>8&255, i&255)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// axfrQuery is a DNS-over-TCP AXFR query for zone: the two-byte length, then the message.
func axfrQuery(id uint16, zone string) ([]byte, error) {
	msg := binary.BigEndian.AppendUint16(nil, id)
	msg = append(msg, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0) // flags 0, QDCOUNT 1
	for _, label := range strings.Split(strings.TrimSuffix(zone, "."), ".") {
		if len(label) == 0 || len(label) > 63 {
			return nil, fmt.Errorf("bad zone %q", zone)
		}
		msg = append(msg, byte(len(label)))
		msg = append(msg, label...)
	}
	msg = append(msg, 0)
	msg = binary.BigEndian.AppendUint16(msg, 252) // QTYPE AXFR
	msg = binary.BigEndian.AppendUint16(msg, 1)   // QCLASS IN
	return append(binary.BigEndian.AppendUint16(nil, uint16(len(msg))), msg...), nil
}

// axfrAbortLoad starts perSec zone transfers a second and resets each connection as soon as
// the first bytes of the answer arrive, like a dig interrupted mid-transfer.
func axfrAbortLoad(ctx context.Context, addr string, perSec int) string {
	tick := time.NewTicker(time.Second / time.Duration(perSec))
	defer tick.Stop()
	var started, answered, failed int
	var lastErr error
	for id := uint16(1); ; id++ {
		select {
		case <-ctx.Done():
			s := fmt.Sprintf("%d AXFRs aborted after the first answer bytes", answered)
			if failed > 0 {
				s += fmt.Sprintf(", %d of %d failed (%v)", failed, started, lastErr)
			}
			return s
		case <-tick.C:
		}
		started++
		if err := abortedTransfer(addr, id); err != nil {
			failed++
			lastErr = err
			continue
		}
		answered++
	}
}

func abortedTransfer(addr string, id uint16) error {
	q, err := axfrQuery(id, axfrZone)
	if err != nil {
		return err
	}
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	tc := c.(*net.TCPConn)
	defer tc.Close()
	tc.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := tc.Write(q); err != nil {
		return err
	}
	var head [2]byte
	if _, err := tc.Read(head[:]); err != nil {
		return err
	}
	if binary.BigEndian.Uint16(head[:]) == 0 {
		return errors.New("empty answer")
	}
	// Linger 0: Close sends a reset, and the server's next write fails at once.
	return tc.SetLinger(0)
}
