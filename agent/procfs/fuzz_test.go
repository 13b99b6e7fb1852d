package procfs

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// Every parser is fuzzed twice over: arbitrary bytes must never panic, and
// values printed the way the kernel prints them must parse back exactly.

func seedFiles(f *testing.F, paths ...string) {
	for _, p := range paths {
		f.Add(readTestdata(f, p))
	}
}

func FuzzParseStatus(f *testing.F) {
	seedFiles(f, "v2/proc/4242/status")
	f.Add([]byte("Name:\tx\nPid:\t1\nVmRSS:\t 1 kB"))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := parseStatus(data)
		if err == nil && !bytes.Contains(data, []byte("Pid:")) {
			t.Errorf("parsed %+v without a Pid line", st)
		}
	})
}

func FuzzStatusRoundTrip(f *testing.F) {
	f.Add("bash", 1, 0, uint32(1234), uint32(5))
	f.Add("a\\b\nc", 77, 3, uint32(0), uint32(1))
	f.Fuzz(func(t *testing.T, name string, pid, ppid int, rssKB, threads uint32) {
		if pid < 0 || ppid < 0 {
			return
		}
		// The kernel escapes only '\n' and '\\' in Name.
		esc := strings.NewReplacer("\\", "\\\\", "\n", "\\n").Replace(name)
		in := fmt.Sprintf("Name:\t%s\nUmask:\t0022\nPid:\t%d\nPPid:\t%d\nVmRSS:\t%8d kB\nThreads:\t%d\n", esc, pid, ppid, rssKB, threads)
		st, err := parseStatus([]byte(in))
		want := Status{Name: name, PID: pid, PPID: ppid, VmRSS: uint64(rssKB) * 1024, Threads: int(threads)}
		if err != nil || st != want {
			t.Errorf("parseStatus(%q) = %+v, %v; want %+v", in, st, err, want)
		}
	})
}

func FuzzParseSmapsRollup(f *testing.F) {
	seedFiles(f, "v2/proc/4242/smaps_rollup")
	f.Fuzz(func(t *testing.T, data []byte) {
		parseSmapsRollup(data)
	})
}

func FuzzParseStat(f *testing.F) {
	seedFiles(f, "v2/proc/4242/stat", "tree/proc/100/stat")
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := parseStat(data, time.Unix(1e9, 0))
		if err == nil && !bytes.Contains(data, []byte(st.Comm)) {
			t.Errorf("comm %q is not in the input", st.Comm)
		}
	})
}

func FuzzStatRoundTrip(f *testing.F) {
	f.Add("my (app) x)", 4242, 1, uint32(1234), uint32(99), uint32(360000))
	f.Add(") R 1 2 3", 1, 0, uint32(0), uint32(0), uint32(0))
	f.Fuzz(func(t *testing.T, comm string, pid, ppid int, utime, threads, start uint32) {
		if pid < 0 || ppid < 0 {
			return
		}
		in := fmt.Sprintf("%d (%s) S %d 1 1 0 -1 4194560 0 0 0 0 %d 7 0 0 20 0 %d 0 %d 1000 10 18446744073709551615 1 1\n",
			pid, comm, ppid, utime, threads, start)
		btime := time.Unix(1700000000, 0)
		st, err := parseStat([]byte(in), btime)
		want := Stat{PID: pid, PPID: ppid, Comm: comm, State: 'S', Flags: 4194560, UTime: time.Duration(utime) * tick, STime: 7 * tick,
			NumThreads: int(threads), StartTime: btime.Add(time.Duration(start) * tick)}
		if err != nil || st != want {
			t.Errorf("parseStat(%q) = %+v, %v\nwant %+v", in, st, err, want)
		}
	})
}

func FuzzParseProcCgroup(f *testing.F) {
	seedFiles(f, "v1/proc/4242/cgroup", "hybrid/proc/4242/cgroup", "v2/proc/4242/cgroup")
	f.Fuzz(func(t *testing.T, data []byte) {
		pc, err := parseProcCgroup(data)
		if err != nil {
			return
		}
		if pc.hasV1 && !strings.HasPrefix(pc.v1Path, "/") || pc.hasV2 && !strings.HasPrefix(pc.v2Path, "/") {
			t.Errorf("relative path in %+v", pc)
		}
		// Mapping any path through any mount must not panic.
		m := cgroupMount{root: pc.v1Path, point: "/sys/fs/cgroup"}
		if dir, below := m.dir(pc.v2Path); below && !strings.HasPrefix(dir, "/sys/fs/cgroup") {
			t.Errorf("dir %q is not below the mount point", dir)
		}
	})
}

func FuzzParseMountinfoLine(f *testing.F) {
	for _, p := range []string{"v1/proc/4242/mountinfo", "v2/proc/4242/mountinfo", "v1-docker/proc/4242/mountinfo"} {
		for _, line := range bytes.Split(readTestdata(f, p), []byte("\n")) {
			f.Add(line)
		}
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		m, err := parseMountinfoLine(line)
		if err != nil {
			return
		}
		if len(m.FSType) == 0 || len(m.Root) == 0 || len(m.Point) == 0 {
			t.Errorf("empty field in %+v", m)
		}
		unescapeOctal(m.Root)
		unescapeOctal(m.Point)
	})
}

func FuzzMountinfoRoundTrip(f *testing.F) {
	f.Add("/docker/abc", "/sys/fs/cgroup/memory", "rw,memory")
	f.Add("/a b\\c", "/my\tdata\n", "rw")
	f.Fuzz(func(t *testing.T, root, point, opts string) {
		// The kernel octal-escapes space, tab, newline and backslash in paths.
		mangle := strings.NewReplacer(" ", `\040`, "\t", `\011`, "\n", `\012`, "\\", `\134`)
		if root == "" || point == "" || opts == "" || strings.ContainsAny(opts, " \t\n\r") || strings.ContainsRune(root+point, '\r') {
			return
		}
		line := fmt.Sprintf("36 35 0:32 %s %s rw,relatime shared:1 - cgroup cgroup %s", mangle.Replace(root), mangle.Replace(point), opts)
		m, err := parseMountinfoLine([]byte(line))
		if err != nil || unescapeOctal(m.Root) != root || unescapeOctal(m.Point) != point || string(m.SuperOpts) != opts {
			t.Errorf("parseMountinfoLine(%q) = %+v, %v", line, m, err)
		}
	})
}

func FuzzParseMemoryStat(f *testing.F) {
	seedFiles(f, "v2/sys/fs/cgroup/app/worker/memory.stat", "v1/sys/fs/cgroup/memory/kubepods/burstable/pod1/abc/memory.stat")
	f.Fuzz(func(t *testing.T, data []byte) {
		for v := 1; v <= 2; v++ {
			ms, err := parseMemoryStat(data, v)
			if err != nil || ms.hierLimit >= noLimit {
				t.Errorf("parseMemoryStat(v%d) = %+v, %v", v, ms, err)
			}
		}
		parseLimit(data)
		lookupKV(data, "oom_kill")
	})
}

func FuzzParseTCPLine(f *testing.F) {
	for _, p := range []string{"v2/proc/net/tcp", "v2/proc/net/tcp6"} {
		for _, line := range bytes.Split(readTestdata(f, p), []byte("\n")) {
			f.Add(line)
		}
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		row, ok, err := parseTCPLine(line, binary.LittleEndian)
		if ok && (err != nil || !row.Addr.IsValid() || row.Port < 0 || row.Port > 65535) {
			t.Errorf("parseTCPLine(%q) = %+v, %v, %v", line, row, ok, err)
		}
		parseSocketLink(line)
	})
}

func FuzzTCPLineRoundTrip(f *testing.F) {
	f.Add([]byte{127, 0, 0, 1}, uint16(8080), uint8(0x0A), uint64(12345))
	f.Add([]byte{0x20, 0x01, 0x0d, 0xb8, 15: 1}, uint16(443), uint8(1), uint64(0))
	f.Fuzz(func(t *testing.T, ip []byte, port uint16, state uint8, inode uint64) {
		addr, ok := netip.AddrFromSlice(ip)
		if !ok {
			return
		}
		for _, order := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
			// The kernel prints each 32-bit word of the address as the host sees it.
			var hex strings.Builder
			raw := addr.AsSlice()
			for w := 0; w < len(raw); w += 4 {
				fmt.Fprintf(&hex, "%08X", order.Uint32(raw[w:]))
			}
			line := fmt.Sprintf("  12: %s:%04X %s:0000 %02X 00000000:00000000 00:00000000 00000000  1000        0 %d 1 0000000000000000 100 0 0 10 0",
				hex.String(), port, strings.Repeat("0", hex.Len()), state, inode)
			row, ok, err := parseTCPLine([]byte(line), order)
			want := tcpRow{Addr: addr, Port: int(port), State: state, Inode: inode}
			if !ok || err != nil || row != want {
				t.Errorf("parseTCPLine(%q) = %+v, %v, %v; want %+v", line, row, ok, err, want)
			}
		}
	})
}

func FuzzSplitNUL(f *testing.F) {
	seedFiles(f, "v2/proc/4242/cmdline", "v2/proc/4242/environ")
	f.Fuzz(func(t *testing.T, data []byte) {
		got := splitNUL(data)
		joined := strings.Join(got, "\x00")
		if trimmed := bytes.TrimSuffix(data, []byte{0}); joined != string(trimmed) {
			t.Errorf("splitNUL(%q) = %q does not join back", data, got)
		}
	})
}

func FuzzParseSchedstat(f *testing.F) {
	seedFiles(f, "v2/proc/4242/task/4242/schedstat")
	f.Add([]byte("18446744073709551615 1 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		run, wait, err := parseSchedstat(data)
		if err == nil && (run < 0 || wait < 0) {
			t.Errorf("negative times %v %v from %q", run, wait, data)
		}
	})
}
