//go:build linux

package procfs

import (
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"slices"
	"time"
)

// PIDListeningOn finds the process that listens on the TCP port (optionally
// only on addr), scanning /proc/net/tcp{,6} for the inode then /proc/*/fd for
// socket:[inode]. It returns a descriptive error when the socket exists but
// its owner can't be seen (permission, other PID namespace), and a different
// one when nothing listens on that port.
//
// /proc/net is the reader's network namespace: a service in another one
// (another container) is not found. With a valid addr, a listener on the
// same address (IPv4-mapped IPv6 compared as IPv4) is preferred over one on
// a wildcard that also accepts it (0.0.0.0, or :: which accepts IPv4 too
// unless IPV6_V6ONLY, which /proc does not show). When several processes
// hold the socket (a pre-forking server), the one whose parent is not also a
// holder is returned, the lowest PID on a tie. The errors wrap ErrNoListener
// and ErrOwnerNotVisible.
func (fsys FS) PIDListeningOn(addr netip.Addr, port int) (int, error) {
	where := netip.AddrPortFrom(addr, uint16(port)).String()
	if !addr.IsValid() {
		where = fmt.Sprintf("port %d", port)
	}
	if port < 1 || port > 65535 {
		return 0, fmt.Errorf("procfs: bad TCP port %d (want 1-65535)", port)
	}
	root := fsys.root()
	var exact, wild []uint64 // LISTEN socket inodes
	err := eachTCPRow(root, "", func(row tcpRow) {
		if row.State != tcpListen || row.Port != port {
			return
		}
		if match, ex := listenerMatches(row.Addr, addr); ex {
			exact = append(exact, row.Inode)
		} else if match {
			wild = append(wild, row.Inode)
		}
	})
	if err != nil {
		return 0, fmt.Errorf("procfs: listener on TCP %s: %w", where, err)
	}
	if len(exact)+len(wild) == 0 {
		return 0, fmt.Errorf("procfs: TCP %s: %w in this network namespace", where, ErrNoListener)
	}
	slices.Sort(exact)
	slices.Sort(wild)
	var exactPIDs, wildPIDs []int
	var denied int
	var pb [pathMax]byte
	err = eachDirInt(joinPath(pb[:0], root, "/proc"), func(pid int) bool {
		var isExact, isWild bool
		err := eachFDSocket(root, pid, func(ino uint64) {
			_, e := slices.BinarySearch(exact, ino)
			_, w := slices.BinarySearch(wild, ino)
			isExact, isWild = isExact || e, isWild || w
		})
		switch {
		case errors.Is(err, fs.ErrPermission):
			denied++
		case isExact:
			exactPIDs = append(exactPIDs, pid)
		case isWild:
			wildPIDs = append(wildPIDs, pid)
		}
		return true
	})
	if err != nil {
		return 0, fmt.Errorf("procfs: listener on TCP %s: %w", where, err)
	}
	if len(exactPIDs) > 0 {
		return fsys.eldest(exactPIDs), nil
	}
	if len(wildPIDs) > 0 {
		return fsys.eldest(wildPIDs), nil
	}
	ino := append(exact, wild...)[0]
	why := "it belongs to a process in another PID namespace (e.g. another container sharing this network), or the holder exited"
	if denied > 0 {
		why = fmt.Sprintf("the open files of %d processes could not be read (permission denied: run as the owner's user or as root)", denied)
	}
	return 0, fmt.Errorf("procfs: TCP %s (socket inode %d): %w: %s", where, ino, ErrOwnerNotVisible, why)
}

// eldest returns the holder whose parent is not itself a holder (the
// process that opened the socket before forking), the lowest PID on a tie.
func (fsys FS) eldest(pids []int) int {
	slices.Sort(pids)
	for _, pid := range pids {
		var pb [pathMax]byte
		var ppid int
		err := withFile(procPath(pb[:0], fsys.root(), pid, "stat"), func(b []byte) error {
			st, err := parseStat(b, time.Time{})
			ppid = st.PPID
			return err
		})
		if _, held := slices.BinarySearch(pids, ppid); err == nil && !held {
			return pid
		}
	}
	return pids[0]
}
