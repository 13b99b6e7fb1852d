//go:build !linux

package procfs

import (
	"errors"
	"net/netip"
	"testing"
)

func TestUnsupported(t *testing.T) {
	var fsys FS
	for name, call := range map[string]func() error{
		"Status":         func() error { _, err := fsys.Status(1); return err },
		"SmapsRollup":    func() error { _, err := fsys.SmapsRollup(1); return err },
		"Stat":           func() error { _, err := fsys.Stat(1); return err },
		"Exe":            func() error { _, err := fsys.Exe(1); return err },
		"Cmdline":        func() error { _, err := fsys.Cmdline(1); return err },
		"Environ":        func() error { _, err := fsys.Environ(1); return err },
		"Descendants":    func() error { _, err := fsys.Descendants(1); return err },
		"Cgroup":         func() error { _, err := fsys.Cgroup(1); return err },
		"ListeningPorts": func() error { _, err := fsys.ListeningPorts(1); return err },
		"PIDListeningOn": func() error { _, err := fsys.PIDListeningOn(netip.Addr{}, 80); return err },
	} {
		if err := call(); !errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("%s: %v, want errors.ErrUnsupported", name, err)
		}
	}
}
