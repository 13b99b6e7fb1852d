package procfs

import (
	"encoding/binary"
	"net/netip"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

func readTestdata(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseStatus(t *testing.T) {
	tests := []struct {
		name, in string
		want     Status
		wantErr  string
	}{
		{name: "fixture", in: string(readTestdata(t, "v2/proc/4242/status")), want: Status{
			Name: "weird\\name\nx", PID: 4242, PPID: 4200, Threads: 12,
			VmRSS: 289452 << 10, RssAnon: 204800 << 10, RssFile: 80556 << 10, RssShmem: 4096 << 10,
			VmHWM: 312340 << 10, VmSize: 1224012 << 10,
		}},
		{name: "kernel thread", in: "Name:\tkworker/0:1\nState:\tI (idle)\nPid:\t7\nPPid:\t2\nThreads:\t1\n",
			want: Status{Name: "kworker/0:1", PID: 7, PPID: 2, Threads: 1}},
		{name: "name with colon and spaces", in: "Name:\ta: b  c\nPid:\t9\n", want: Status{Name: "a: b  c", PID: 9}},
		{name: "no trailing newline", in: "Name:\tx\nPid:\t1\nVmRSS:\t  12 kB", want: Status{Name: "x", PID: 1, VmRSS: 12 << 10}},
		{name: "missing pid", in: "Name:\tx\n", wantErr: "no Name or Pid"},
		{name: "empty", in: "", wantErr: "no Name or Pid"},
		{name: "bad size", in: "Name:\tx\nPid:\t1\nVmRSS:\tlots kB\n", wantErr: "bad VmRSS line"},
		{name: "bad unit", in: "Name:\tx\nPid:\t1\nVmRSS:\t1 MB\n", wantErr: "bad VmRSS line"},
		{name: "overflow", in: "Name:\tx\nPid:\t1\nVmRSS:\t18446744073709551615 kB\n", wantErr: "bad VmRSS line"},
		{name: "bad pid", in: "Name:\tx\nPid:\t-\n", wantErr: "bad Pid line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStatus([]byte(tt.in))
			checkErr(t, err, tt.wantErr)
			if got != tt.want {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Fatalf("unexpected error: %v", err)
	case want != "" && err == nil:
		t.Fatalf("no error, want one containing %q", want)
	case want != "" && !strings.Contains(err.Error(), want):
		t.Fatalf("error %q does not contain %q", err, want)
	}
}

func TestParseSmapsRollup(t *testing.T) {
	tests := []struct {
		name, in string
		want     Rollup
		wantErr  string
	}{
		{name: "fixture", in: string(readTestdata(t, "v2/proc/4242/smaps_rollup")), want: Rollup{
			Rss: 289452 << 10, Pss: 280000 << 10, Anonymous: 204800 << 10, LazyFree: 153600 << 10,
			AnonHugePages: 20480 << 10, Swap: 1024 << 10,
		}},
		{name: "kernel thread (empty)", in: "", want: Rollup{}},
		{name: "SwapPss is not Swap", in: "SwapPss:  5 kB\nSwap: 3 kB\n", want: Rollup{Swap: 3 << 10}},
		{name: "bad", in: "Rss: x kB\n", wantErr: "bad Rss line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseSmapsRollup([]byte(tt.in))
			checkErr(t, err, tt.wantErr)
			if got != tt.want {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestParseStat(t *testing.T) {
	btime := time.Unix(1700000000, 0)
	tests := []struct {
		name, in string
		btime    time.Time
		want     Stat
		wantErr  string
	}{
		{name: "comm with spaces and parens", in: string(readTestdata(t, "v2/proc/4242/stat")), btime: btime, want: Stat{
			PID: 4242, PPID: 4200, Comm: "my (app) x)", State: 'S', Flags: 4194560,
			UTime: 12340 * time.Millisecond, STime: 5670 * time.Millisecond,
			StartTime: btime.Add(time.Hour), NumThreads: 12,
		}},
		{name: "zero btime", in: "1 (init) S 0 1 1 0 -1 4194560 0 0 0 0 7 3 0 0 20 0 1 0 5 0 0",
			want: Stat{PID: 1, Comm: "init", State: 'S', Flags: 4194560, UTime: 70 * time.Millisecond, STime: 30 * time.Millisecond, NumThreads: 1}},
		{name: "comm with newline", in: "12 (a\nb) R 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 3 0 100 0 0\n", btime: btime,
			want: Stat{PID: 12, PPID: 1, Comm: "a\nb", State: 'R', NumThreads: 3, StartTime: btime.Add(time.Second)}},
		{name: "empty comm", in: "12 () Z 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 0 0 0",
			want: Stat{PID: 12, PPID: 1, State: 'Z', NumThreads: 1}},
		{name: "exiting", in: "12 (x) R 1 1 1 0 -1 4210756 0 0 0 0 0 0 0 0 20 0 1 0 0 0 0",
			want: Stat{PID: 12, PPID: 1, Comm: "x", State: 'R', Flags: 4210756, NumThreads: 1}},
		{name: "flags past 32 bits", in: "1 (y) R 1 1 1 0 -1 4294967296 0 0 0 0 0 0 0 0 20 0 1 0 0 0", wantErr: "bad field 9"},
		{name: "truncated", in: "12 (x) R 1 1 1 0 -1 0 0 0 0 0 0 0", wantErr: "only 13 fields"},
		{name: "no comm", in: "12 x R 1", wantErr: "no (comm)"},
		{name: "bad pid", in: "x (y) R 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 0 0", wantErr: "bad pid"},
		{name: "bad utime", in: "1 (y) R 1 1 1 0 -1 0 0 0 0 0 -5 0 0 0 20 0 1 0 0 0", wantErr: "bad field 14"},
		{name: "bad state", in: "1 (y) RR 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 0 0", wantErr: "bad state"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStat([]byte(tt.in), tt.btime)
			checkErr(t, err, tt.wantErr)
			if got != tt.want {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestStatExiting(t *testing.T) {
	for _, tt := range []struct {
		st   Stat
		want bool
	}{
		{Stat{State: 'S', Flags: 4194560}, false}, // PF_RANDOMIZE | PF_FORKNOEXEC
		{Stat{State: 'R', Flags: 4210756}, true},  // PF_EXITING among them
		{Stat{State: 'Z'}, true},
		{Stat{State: 'X'}, true},
		{Stat{State: 'D'}, false},
	} {
		if got := tt.st.Exiting(); got != tt.want {
			t.Errorf("%+v.Exiting() = %v, want %v", tt.st, got, tt.want)
		}
	}
}

func TestParseBtimeLine(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"btime 1700000000", 1700000000, true},
		{"btime  42 ", 42, true},
		{"btimex 1", 0, false},
		{"cpu 1 2 3", 0, false},
		{"btime", 0, false},
		{"btime -1", 0, false},
	} {
		got, ok := parseBtimeLine([]byte(tt.in))
		if ok != tt.ok || ok && got.Unix() != tt.want {
			t.Errorf("parseBtimeLine(%q) = %v, %v; want %v, %v", tt.in, got.Unix(), ok, tt.want, tt.ok)
		}
	}
}

func TestSplitNUL(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"\x00", nil},
		{"a\x00b c\x00", []string{"a", "b c"}},
		{"a\x00\x00b\x00", []string{"a", "", "b"}},
		{"nginx: worker process", []string{"nginx: worker process"}},
	} {
		if got := splitNUL([]byte(tt.in)); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("splitNUL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseProcCgroup(t *testing.T) {
	tests := []struct {
		name, in string
		want     procCgroup
		wantErr  string
	}{
		{name: "v2", in: "0::/user.slice/a.scope\n", want: procCgroup{v2Path: "/user.slice/a.scope", hasV2: true}},
		{name: "v2 root", in: "0::/\n", want: procCgroup{v2Path: "/", hasV2: true}},
		{name: "v1 alone", in: "4:memory:/process_api/x\n3:cpuset:/\n",
			want: procCgroup{v1Path: "/process_api/x", hasV1: true}},
		{name: "v1 combined", in: "7:cpu,memory,cpuacct:/kubepods/p\n", want: procCgroup{v1Path: "/kubepods/p", hasV1: true}},
		{name: "memory must be a whole item", in: "7:memoryx,name=memory:/a\n0::/b\n", want: procCgroup{v2Path: "/b", hasV2: true}},
		{name: "hybrid", in: string(readTestdata(t, "hybrid/proc/4242/cgroup")), want: procCgroup{
			v1Path: "/system.slice/api.service", hasV1: true, v2Path: "/system.slice/api.service", hasV2: true}},
		{name: "colon in path", in: "0::/a:b/c\n", want: procCgroup{v2Path: "/a:b/c", hasV2: true}},
		{name: "deleted", in: "0::/gone (deleted)\n", want: procCgroup{v2Path: "/gone", hasV2: true}},
		{name: "blank lines", in: "\n0::/x\n\n", want: procCgroup{v2Path: "/x", hasV2: true}},
		{name: "garbage", in: "hello\n", wantErr: "bad line"},
		{name: "relative path", in: "0::x\n", wantErr: "bad line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseProcCgroup([]byte(tt.in))
			checkErr(t, err, tt.wantErr)
			if got != tt.want {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestParseMountinfoLine(t *testing.T) {
	type m struct{ Root, Point, FSType, Source, SuperOpts string }
	tests := []struct {
		name, in string
		want     m
		wantErr  string
	}{
		{name: "v1 memory", in: "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory",
			want: m{"/", "/sys/fs/cgroup/memory", "cgroup", "cgroup", "rw,memory"}},
		{name: "optional fields", in: "887 885 0:29 /docker/0123abcd /sys/fs/cgroup/cpuacct,memory ro,nosuid master:13 shared:2 - cgroup cgroup rw,cpuacct,memory",
			want: m{"/docker/0123abcd", "/sys/fs/cgroup/cpuacct,memory", "cgroup", "cgroup", "rw,cpuacct,memory"}},
		{name: "cgroup2", in: "1187 1001 0:30 / /sys/fs/cgroup ro,nosuid - cgroup2 cgroup rw,nsdelegate",
			want: m{"/", "/sys/fs/cgroup", "cgroup2", "cgroup", "rw,nsdelegate"}},
		{name: "no super options", in: "1 0 0:1 / / rw - rootfs rootfs",
			want: m{"/", "/", "rootfs", "rootfs", ""}},
		{name: "no separator", in: "1 0 0:1 / / rw shared:1", wantErr: "no \" - \" separator"},
		{name: "too short", in: "1 0 0:1 /", wantErr: "too few fields"},
		{name: "no fstype", in: "1 0 0:1 / / rw -", wantErr: "no filesystem type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseMountinfoLine([]byte(tt.in))
			checkErr(t, err, tt.wantErr)
			g := m{string(got.Root), string(got.Point), string(got.FSType), string(got.Source), string(got.SuperOpts)}
			if g != tt.want {
				t.Errorf("got  %+v\nwant %+v", g, tt.want)
			}
		})
	}
}

func TestUnescapeOctal(t *testing.T) {
	for in, want := range map[string]string{
		`/plain`:            "/plain",
		`/my\040data`:       "/my data",
		`/a\011b\012c\134d`: "/a\tb\nc\\d",
		`/short\04`:         `/short\04`,
		`/not\999octal`:     `/not\999octal`,
		`/high\777`:         `/high\777`,
		`\`:                 `\`,
	} {
		if got := unescapeOctal([]byte(in)); got != want {
			t.Errorf("unescapeOctal(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCgroupMountDir(t *testing.T) {
	tests := []struct {
		root, point, path string
		want              string
		below             bool
	}{
		{"/", "/sys/fs/cgroup/memory", "/process_api/x", "/sys/fs/cgroup/memory/process_api/x", true},
		{"/", "/sys/fs/cgroup", "/", "/sys/fs/cgroup", true},
		{"/", "/sys/fs/cgroup/", "/a/", "/sys/fs/cgroup/a", true},
		{"/docker/abc", "/sys/fs/cgroup/memory", "/docker/abc", "/sys/fs/cgroup/memory", true},
		{"/docker/abc", "/sys/fs/cgroup/memory", "/docker/abc/sub", "/sys/fs/cgroup/memory/sub", true},
		{"/docker/abc", "/sys/fs/cgroup/memory", "/docker/abcdef", "/sys/fs/cgroup/memory", false},
		{"/docker/abc", "/sys/fs/cgroup/memory", "/other", "/sys/fs/cgroup/memory", false},
		{"/", "/sys/fs/cgroup", "/../../kubepods/x", "/sys/fs/cgroup", false},
		{"/a", "/", "/a/b", "/b", true},
	}
	for _, tt := range tests {
		m := cgroupMount{root: tt.root, point: tt.point}
		got, below := m.dir(tt.path)
		if got != tt.want || below != tt.below {
			t.Errorf("%+v.dir(%q) = %q, %v; want %q, %v", m, tt.path, got, below, tt.want, tt.below)
		}
	}
}

func TestMountPicker(t *testing.T) {
	tests := []struct {
		name   string
		path   string
		mounts []cgroupMount
		want   cgroupMount
		below  bool
	}{
		{"first when none contains the path", "/x", []cgroupMount{{"/a", "/m1"}, {"/b", "/m2"}}, cgroupMount{"/a", "/m1"}, false},
		{"containing beats first", "/b/c", []cgroupMount{{"/a", "/m1"}, {"/b", "/m2"}}, cgroupMount{"/b", "/m2"}, true},
		{"longest root wins", "/b/c/d", []cgroupMount{{"/", "/m0"}, {"/b/c", "/m2"}, {"/b", "/m1"}}, cgroupMount{"/b/c", "/m2"}, true},
		{"equal roots keep the first", "/b", []cgroupMount{{"/", "/m0"}, {"/", "/m1"}}, cgroupMount{"/", "/m0"}, true},
	}
	for _, tt := range tests {
		p := mountPicker{path: tt.path}
		for _, m := range tt.mounts {
			p.consider(m)
		}
		if !p.found || p.best != tt.want || p.below != tt.below {
			t.Errorf("%s: got %+v (below %v), want %+v (below %v)", tt.name, p.best, p.below, tt.want, tt.below)
		}
	}
}

func TestParseLimitAndValue(t *testing.T) {
	for _, tt := range []struct {
		in      string
		want    uint64
		wantErr bool
	}{
		{"max\n", 0, false},
		{"-1\n", 0, false},
		{"9223372036854771712\n", 0, false}, // v1 unlimited, 4 KiB pages
		{"9223372036854710272\n", 0, false}, // v1 unlimited, 64 KiB pages
		{"4611686018427387904\n", 0, false}, // 1<<62
		{"4611686018427387903\n", 1<<62 - 1, false},
		{"536870912\n", 536870912, false},
		{"0\n", 0, false},
		{"", 0, true},
		{"12k", 0, true},
	} {
		got, err := parseLimit([]byte(tt.in))
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("parseLimit(%q) = %d, %v; want %d, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
	if v, err := parseValue([]byte(" 42\n")); v != 42 || err != nil {
		t.Errorf("parseValue = %d, %v", v, err)
	}
	if _, err := parseValue([]byte("max\n")); err == nil {
		t.Error("parseValue(max): no error")
	}
}

func TestLookupKV(t *testing.T) {
	data := []byte("low 0\nhigh 12\nmax 7\noom 2\noom_kill 3\n")
	for key, want := range map[string]uint64{"max": 7, "oom_kill": 3, "oom": 2, "low": 0} {
		if got, ok := lookupKV(data, key); !ok || got != want {
			t.Errorf("lookupKV(%q) = %d, %v; want %d", key, got, ok, want)
		}
	}
	if _, ok := lookupKV(data, "oom_group_kill"); ok {
		t.Error("absent key found")
	}
}

func TestParseMemoryStat(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		version int
		want    memStat
		wantErr string
	}{
		{name: "v2 with kernel", in: string(readTestdata(t, "v2/sys/fs/cgroup/app/worker/memory.stat")), version: 2,
			want: memStat{anon: 209715200, file: 73400320, inactiveFile: 52428800, kernel: 8388608, sock: 1048576}},
		{name: "v2 before 5.18 (kernel summed)", in: string(readTestdata(t, "container-root/sys/fs/cgroup/memory.stat")), version: 2,
			want: memStat{anon: 62914560, file: 31457280, inactiveFile: 20971520, kernel: 524288 + 1048576 + 65536 + 3145728}},
		{name: "v1 hierarchical totals", in: string(readTestdata(t, "v1/sys/fs/cgroup/memory/kubepods/burstable/pod1/abc/memory.stat")), version: 1,
			want: memStat{anon: 94371840, file: 100663296, inactiveFile: 33554432, hierLimit: 268435456, hasHierLimit: true}},
		{name: "v1 without totals", in: "cache 10\nrss 20\ninactive_file 5\nhierarchical_memory_limit 9223372036854771712\n", version: 1,
			want: memStat{anon: 20, file: 10, inactiveFile: 5, hasHierLimit: true}},
		{name: "odd lines skipped", in: "anon x\n\nfile 3\nweird\n", version: 2, want: memStat{file: 3}},
		{name: "bad version", in: "", version: 3, wantErr: "bad cgroup version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseMemoryStat([]byte(tt.in), tt.version)
			checkErr(t, err, tt.wantErr)
			if got != tt.want {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestParseTCPLine(t *testing.T) {
	le, be := binary.LittleEndian, binary.BigEndian
	tests := []struct {
		name    string
		in      string
		order   binary.ByteOrder
		want    tcpRow
		ok      bool
		wantErr string
	}{
		{name: "header", in: "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode", order: le},
		{name: "blank", in: "   ", order: le},
		{name: "v4 listen", order: le, ok: true,
			in:   "   1: 0100007F:2382 00000000:0000 0A 00000000:00000001 00:00000000 00000000     0        0 43988 2 00000000c28a752a 100 0 0 10 0",
			want: tcpRow{Addr: netip.MustParseAddr("127.0.0.1"), Port: 9090, State: tcpListen, Inode: 43988}},
		{name: "v4 big-endian host", order: be, ok: true,
			in:   "   1: 7F000001:2382 00000000:0000 0A 00000000:00000001 00:00000000 00000000     0        0 43988 2 0 100 0 0 10 0",
			want: tcpRow{Addr: netip.MustParseAddr("127.0.0.1"), Port: 9090, State: tcpListen, Inode: 43988}},
		{name: "v4 time-wait", order: le, ok: true,
			in:   "   2: 0100007F:AB2D 0100007F:AB3A 06 00000000:00000000 03:0000071A 00000000     0        0 0 3 000000005124503d",
			want: tcpRow{Addr: netip.MustParseAddr("127.0.0.1"), Port: 0xAB2D, State: 6}},
		{name: "v6 ::1", order: le, ok: true,
			in:   "   0: 00000000000000000000000001000000:17AD 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 43987 1 00000000a8732de3 100 0 0 10 0",
			want: tcpRow{Addr: netip.MustParseAddr("::1"), Port: 6061, State: tcpListen, Inode: 43987}},
		{name: "v6 2001:db8::1", order: le, ok: true,
			in:   "   1: B80D0120000000000000000001000000:01BB 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 1005 1 0 100 0 0 10 0",
			want: tcpRow{Addr: netip.MustParseAddr("2001:db8::1"), Port: 443, State: tcpListen, Inode: 1005}},
		{name: "v6 big-endian host", order: be, ok: true,
			in:   "   1: 20010DB8000000000000000000000001:01BB 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 1005 1 0 100 0 0 10 0",
			want: tcpRow{Addr: netip.MustParseAddr("2001:db8::1"), Port: 443, State: tcpListen, Inode: 1005}},
		{name: "v4-mapped", order: le, ok: true,
			in:   "   2: 0000000000000000FFFF00000100007F:1B58 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 1006 1 0 100 0 0 10 0",
			want: tcpRow{Addr: netip.MustParseAddr("::ffff:127.0.0.1"), Port: 7000, State: tcpListen, Inode: 1006}},
		{name: "short", order: le, in: "   1: 0100007F:2382 00000000:0000 0A", wantErr: "too few fields"},
		{name: "bad addr", order: le, in: "   1: 0100007:2382 00000000:0000 0A 0:0 0:0 0 0 0 1", wantErr: "bad local address"},
		{name: "bad port", order: le, in: "   1: 0100007F:238 00000000:0000 0A 0:0 0:0 0 0 0 1", wantErr: "bad local address"},
		{name: "bad state", order: le, in: "   1: 0100007F:2382 00000000:0000 A 0:0 0:0 0 0 0 1", wantErr: "bad state"},
		{name: "bad inode", order: le, in: "   1: 0100007F:2382 00000000:0000 0A 0:0 0:0 0 0 0 -1", wantErr: "bad inode"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, err := parseTCPLine([]byte(tt.in), tt.order)
			checkErr(t, err, tt.wantErr)
			if got != tt.want || ok != tt.ok {
				t.Errorf("got %+v, %v; want %+v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestParseSocketLink(t *testing.T) {
	for in, want := range map[string]uint64{"socket:[12345]": 12345, "socket:[0]": 0} {
		if got, ok := parseSocketLink([]byte(in)); !ok || got != want {
			t.Errorf("parseSocketLink(%q) = %d, %v", in, got, ok)
		}
	}
	for _, in := range []string{"socket:[]", "socket:[12", "pipe:[123]", "/dev/null", "anon_inode:[eventfd]", "socket:[x]"} {
		if _, ok := parseSocketLink([]byte(in)); ok {
			t.Errorf("parseSocketLink(%q) accepted", in)
		}
	}
}

func TestListenerMatches(t *testing.T) {
	a := netip.MustParseAddr
	for _, tt := range []struct {
		listen, want netip.Addr
		match, exact bool
	}{
		{a("127.0.0.1"), netip.Addr{}, true, true},
		{a("127.0.0.1"), a("127.0.0.1"), true, true},
		{a("::ffff:127.0.0.1"), a("127.0.0.1"), true, true},
		{a("127.0.0.1"), a("::ffff:127.0.0.1"), true, true},
		{a("0.0.0.0"), a("10.0.0.1"), true, false},
		{a("::"), a("10.0.0.1"), true, false},
		{a("::"), a("::1"), true, false},
		{a("0.0.0.0"), a("::1"), false, false},
		{a("127.0.0.1"), a("10.0.0.1"), false, false},
		{a("::1"), a("127.0.0.1"), false, false},
	} {
		match, exact := listenerMatches(tt.listen, tt.want)
		if match != tt.match || exact != tt.exact {
			t.Errorf("listenerMatches(%v, %v) = %v, %v; want %v, %v", tt.listen, tt.want, match, exact, tt.match, tt.exact)
		}
	}
}

func TestNumbers(t *testing.T) {
	for in, want := range map[string]uint64{"0": 0, "18446744073709551615": 1<<64 - 1} {
		if got, ok := parseUint([]byte(in)); !ok || got != want {
			t.Errorf("parseUint(%q) = %d, %v", in, got, ok)
		}
	}
	for _, in := range []string{"", "18446744073709551616", "99999999999999999999", "1a", "-1", "+1"} {
		if _, ok := parseUint([]byte(in)); ok {
			t.Errorf("parseUint(%q) accepted", in)
		}
	}
	if n, ok := parseInt([]byte("-42")); !ok || n != -42 {
		t.Errorf("parseInt(-42) = %d, %v", n, ok)
	}
	if _, ok := parseInt([]byte("9223372036854775808")); ok {
		t.Error("parseInt accepted MaxInt64+1")
	}
	if n, ok := parseKB([]byte("\t 3 kB")); !ok || n != 3072 {
		t.Errorf("parseKB = %d, %v", n, ok)
	}
	if n, ok := parseHex([]byte("fFfF")); !ok || n != 0xffff {
		t.Errorf("parseHex = %d, %v", n, ok)
	}
	if _, ok := parseHex([]byte("12345678901234567")); ok {
		t.Error("parseHex accepted 17 digits")
	}
}
