//go:build linux

package procfs

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
)

// ListeningPorts returns the TCP ports pid listens on (IPv4 and IPv6), by
// matching the socket inodes in /proc/PID/fd with LISTEN (state 0A) rows of
// /proc/PID/net/tcp and tcp6 (pid's network namespace). Listing another
// user's fds needs root: the error then wraps fs.ErrPermission. The result is
// sorted by port, then address.
func (fsys FS) ListeningPorts(pid int) ([]Listener, error) {
	if err := checkPID(pid); err != nil {
		return nil, err
	}
	root := fsys.root()
	var inodes []uint64
	err := eachFDSocket(root, pid, func(ino uint64) { inodes = append(inodes, ino) })
	if err != nil {
		return nil, fmt.Errorf("procfs: sockets of pid %d: %w", pid, permHint(err))
	}
	slices.Sort(inodes)
	var out []Listener
	err = eachTCPRow(root, strconv.Itoa(pid), func(row tcpRow) {
		if _, ok := slices.BinarySearch(inodes, row.Inode); ok && row.State == tcpListen {
			out = append(out, Listener{Addr: row.Addr, Port: row.Port, Inode: row.Inode})
		}
	})
	if err != nil {
		return nil, fmt.Errorf("procfs: sockets of pid %d: %w", pid, err)
	}
	slices.SortFunc(out, func(a, b Listener) int {
		return cmp.Or(cmp.Compare(a.Port, b.Port), a.Addr.Compare(b.Addr), cmp.Compare(a.Inode, b.Inode))
	})
	return out, nil
}

// eachTCPRow calls fn with every row of /proc/<dir>/net/tcp and tcp6, where
// dir is a PID or "" for /proc/net. A missing tcp6 (IPv6 disabled) is not an
// error.
func eachTCPRow(root, dir string, fn func(tcpRow)) error {
	prefix := "/proc/"
	if dir == "" {
		prefix = "/proc"
	}
	for _, name := range [...]string{"/net/tcp", "/net/tcp6"} {
		var pb [pathMax]byte
		var perr error
		path := joinPath(pb[:0], root, prefix, dir, name)
		err := eachLine(path, func(line []byte) bool {
			row, ok, err := parseTCPLine(line, hostOrder)
			if err != nil {
				perr = fmt.Errorf("parse %s: %w", pathString(path), err)
				return false
			}
			if ok {
				fn(row)
			}
			return true
		})
		if errors.Is(err, fs.ErrNotExist) && name == "/net/tcp6" {
			continue
		}
		if err = cmp.Or(err, perr); err != nil {
			return err
		}
	}
	return nil
}

// fdPath appends root/proc/PID/fd/FD and a NUL to dst.
func fdPath(dst []byte, root string, pid, fd int) []byte {
	dst = append(dst, root...)
	dst = append(dst, "/proc/"...)
	dst = strconv.AppendInt(dst, int64(pid), 10)
	dst = append(dst, "/fd/"...)
	dst = strconv.AppendInt(dst, int64(fd), 10)
	return append(dst, 0)
}

// eachFDSocket calls fn with the inode of every socket among pid's open
// files. Files closed while the directory is read are skipped.
func eachFDSocket(root string, pid int, fn func(ino uint64)) error {
	var pb [pathMax]byte
	return eachDirInt(procPath(pb[:0], root, pid, "fd"), func(fd int) bool {
		var lb [pathMax]byte
		var tb [64]byte // "socket:[4294967295]"; longer targets are not sockets
		target, err := readlink(fdPath(lb[:0], root, pid, fd), tb[:])
		if err == nil {
			if ino, ok := parseSocketLink(target); ok {
				fn(ino)
			}
		}
		return true
	})
}

func permHint(err error) error {
	if errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("%w (only the process's user or root can list its files)", err)
	}
	return err
}
