//go:build linux

package procfs

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
)

func TestFakeCgroup(t *testing.T) {
	const (
		m    = "/sys/fs/cgroup/memory"
		pod  = m + "/kubepods/burstable/pod1"
		long = "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod2.slice/cri-containerd-def.scope"
	)
	tests := []struct {
		name   string
		tree   string
		mutate func(t *testing.T, root string)
		want   Cgroup // Dir and LimitDir are below the fake root
	}{
		{name: "v2: parent limit below the leaf's max", tree: "v2", want: Cgroup{
			Version: 2, Path: "/app/worker", Dir: "/sys/fs/cgroup/app/worker", Mount: "/sys/fs/cgroup",
			LimitBytes: 536870912, LimitDir: "/sys/fs/cgroup", HighBytes: 419430400,
			UsageBytes: 293601280, PeakBytes: 482344960, WorkingSetBytes: 293601280 - 52428800,
			AnonBytes: 209715200, FileBytes: 73400320, InactiveFileBytes: 52428800, KernelBytes: 8388608, SockBytes: 1048576,
			OOMKills: 2, MaxEvents: 7,
		}},
		{name: "v2: no limit anywhere", tree: "v2", mutate: func(t *testing.T, root string) {
			writeFile(t, root, "sys/fs/cgroup/memory.max", "max\n")
			writeFile(t, root, "sys/fs/cgroup/app/memory.max", "max\n")
		}, want: Cgroup{
			Version: 2, Path: "/app/worker", Dir: "/sys/fs/cgroup/app/worker", Mount: "/sys/fs/cgroup", HighBytes: 419430400,
			UsageBytes: 293601280, PeakBytes: 482344960, WorkingSetBytes: 293601280 - 52428800,
			AnonBytes: 209715200, FileBytes: 73400320, InactiveFileBytes: 52428800, KernelBytes: 8388608, SockBytes: 1048576,
			OOMKills: 2, MaxEvents: 7,
		}},
		{name: "v1: unlimited leaf, limit on the pod, hierarchical stat", tree: "v1", want: Cgroup{
			Version: 1, Path: "/kubepods/burstable/pod1/abc", Dir: pod + "/abc", Mount: "/sys/fs/cgroup/memory",
			LimitBytes: 268435456, LimitDir: pod,
			UsageBytes: 201326592, PeakBytes: 250000000, WorkingSetBytes: 201326592 - 33554432,
			AnonBytes: 94371840, FileBytes: 100663296, InactiveFileBytes: 33554432, KernelBytes: 5242880, SockBytes: 65536,
			OOMKills: 1, MaxEvents: 3,
		}},
		{name: "v1: use_hierarchy=0, the parent's limit does not apply", tree: "v1", mutate: func(t *testing.T, root string) {
			path := "sys/fs/cgroup/memory/kubepods/burstable/pod1/abc/memory.stat"
			stat := strings.Replace(string(readTestdata(t, "v1/"+path)), "hierarchical_memory_limit 268435456", "hierarchical_memory_limit 9223372036854771712", 1)
			writeFile(t, root, path, stat)
		}, want: Cgroup{
			Version: 1, Path: "/kubepods/burstable/pod1/abc", Dir: pod + "/abc", Mount: "/sys/fs/cgroup/memory",
			UsageBytes: 201326592, PeakBytes: 250000000, WorkingSetBytes: 201326592 - 33554432,
			AnonBytes: 94371840, FileBytes: 100663296, InactiveFileBytes: 33554432, KernelBytes: 5242880, SockBytes: 65536,
			OOMKills: 1, MaxEvents: 3,
		}},
		{name: "v1: no hierarchical_memory_limit, walk finds the pod", tree: "v1", mutate: func(t *testing.T, root string) {
			path := "sys/fs/cgroup/memory/kubepods/burstable/pod1/abc/memory.stat"
			writeFile(t, root, path, "total_rss 10\ntotal_cache 20\ntotal_inactive_file 5\n")
		}, want: Cgroup{
			Version: 1, Path: "/kubepods/burstable/pod1/abc", Dir: pod + "/abc", Mount: "/sys/fs/cgroup/memory",
			LimitBytes: 268435456, LimitDir: pod,
			UsageBytes: 201326592, PeakBytes: 250000000, WorkingSetBytes: 201326592 - 5,
			AnonBytes: 10, FileBytes: 20, InactiveFileBytes: 5, KernelBytes: 5242880, SockBytes: 65536,
			OOMKills: 1, MaxEvents: 3,
		}},
		{name: "hybrid: v1 memory preferred over the unified mount", tree: "hybrid", want: Cgroup{
			Version: 1, Path: "/system.slice/api.service", Dir: m + "/system.slice/api.service", Mount: m,
			LimitBytes: 1073741824, LimitDir: m + "/system.slice/api.service",
			UsageBytes: 524288000, PeakBytes: 600000000, WorkingSetBytes: 524288000 - 157286400,
			AnonBytes: 314572800, FileBytes: 209715200, InactiveFileBytes: 157286400,
		}},
		{name: "container-root: long path, own cgroup at the mount root", tree: "container-root", want: Cgroup{
			Version: 2, Path: long, Dir: "/sys/fs/cgroup", Mount: "/sys/fs/cgroup",
			LimitBytes: 268435456, LimitDir: "/sys/fs/cgroup",
			UsageBytes: 104857600, WorkingSetBytes: 104857600 - 20971520,
			AnonBytes: 62914560, FileBytes: 31457280, InactiveFileBytes: 20971520, KernelBytes: 524288 + 1048576 + 65536 + 3145728,
		}},
		{name: "container-root: path not below the mount root", tree: "container-root", mutate: func(t *testing.T, root string) {
			mi := strings.Replace(string(readTestdata(t, "container-root/proc/4242/mountinfo")), "0:27 / ", "0:27 /kubepods.slice/other.slice ", 1)
			writeFile(t, root, "proc/4242/mountinfo", mi)
		}, want: Cgroup{
			Version: 2, Path: long, Dir: "/sys/fs/cgroup", Mount: "/sys/fs/cgroup",
			LimitBytes: 268435456, LimitDir: "/sys/fs/cgroup",
			UsageBytes: 104857600, WorkingSetBytes: 104857600 - 20971520,
			AnonBytes: 62914560, FileBytes: 31457280, InactiveFileBytes: 20971520, KernelBytes: 524288 + 1048576 + 65536 + 3145728,
		}},
		{name: "v1-docker: mount root is the container, limit above it, co-mounted controllers", tree: "v1-docker", want: Cgroup{
			Version: 1, Path: "/docker/0123abcd", Dir: "/sys/fs/cgroup/cpuacct,memory", Mount: "/sys/fs/cgroup/cpuacct,memory",
			LimitBytes: 2147483648, LimitDir: "/sys/fs/cgroup/cpuacct,memory",
			UsageBytes: 52428800, PeakBytes: 62914560, WorkingSetBytes: 52428800 - 4194304,
			AnonBytes: 41943040, FileBytes: 10485760, InactiveFileBytes: 4194304,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := fakeRoot(t, tt.tree)
			if tt.mutate != nil {
				tt.mutate(t, root)
			}
			want := tt.want
			want.Dir, want.Mount = root+want.Dir, root+want.Mount
			if want.LimitDir != "" {
				want.LimitDir = root + want.LimitDir
			}
			got, err := FS{Root: root}.Cgroup(4242)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("got  %+v\nwant %+v", got, want)
			}
			// Read again from its directory alone, as after its process ended.
			if again, err := (FS{}).Reread(got); err != nil || again != got {
				t.Errorf("Reread: %v\ngot  %+v\nwant %+v", err, again, got)
			}
		})
	}
}

func TestFakeCgroupErrors(t *testing.T) {
	tests := []struct {
		name    string
		tree    string
		files   map[string]string // written over the tree; "" removes
		is      error
		wantErr string
	}{
		{name: "v2 only, without the memory controller", tree: "hybrid",
			files: map[string]string{"proc/4242/cgroup": "0::/system.slice/api.service\n"},
			is:    ErrNoMemoryCgroup, wantErr: "memory controller is not enabled in cgroup v2"},
		{name: "v1 memory cgroup but no mounted hierarchy", tree: "v1",
			files: map[string]string{"proc/4242/mountinfo": "21 1 259:1 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p1 rw\n"},
			is:    ErrNoMemoryCgroup, wantErr: "no cgroup v1 memory hierarchy is mounted"},
		{name: "v2 without a cgroup2 mount", tree: "v2",
			files: map[string]string{"proc/4242/mountinfo": "21 1 259:1 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p1 rw\n"},
			is:    ErrNoMemoryCgroup, wantErr: "no cgroup2 filesystem is mounted"},
		{name: "no memory line at all", tree: "v1",
			files: map[string]string{"proc/4242/cgroup": "9:pids:/a\n"},
			is:    ErrNoMemoryCgroup, wantErr: "no v1 memory cgroup nor v2 cgroup"},
		{name: "corrupt /proc/PID/cgroup", tree: "v1",
			files:   map[string]string{"proc/4242/cgroup": "garbage\n"},
			wantErr: "parse "},
		{name: "corrupt limit", tree: "v2",
			files:   map[string]string{"sys/fs/cgroup/app/memory.max": "lots\n"},
			wantErr: "bad limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := fakeRoot(t, tt.tree)
			for path, content := range tt.files {
				writeFile(t, root, path, content)
			}
			_, err := FS{Root: root}.Cgroup(4242)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error = %v; want one containing %q (is %v)", err, tt.wantErr, tt.is)
			}
		})
	}
}

// A v2 cgroup whose parent does not delegate the memory controller has no
// memory.* files: the error says so, and what was resolved is returned.
func TestFakeCgroupNoUsage(t *testing.T) {
	root := fakeRoot(t, "v2")
	removeFile(t, root, "sys/fs/cgroup/app/worker/memory.current")
	got, err := FS{Root: root}.Cgroup(4242)
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "no memory.current") {
		t.Errorf("error = %v", err)
	}
	if got.Version != 2 || got.Dir != root+"/sys/fs/cgroup/app/worker" || got.Path != "/app/worker" {
		t.Errorf("partial result = %+v", got)
	}
}

// A process in another mount namespace is read through /proc/PID/root, where
// its own mount points are.
func TestFakeCgroupOtherMountNamespace(t *testing.T) {
	for _, tt := range []struct {
		name, selfNS, pidNS, prefix string
	}{
		{"same namespace", "mnt:[4026531841]", "mnt:[4026531841]", ""},
		{"other namespace", "mnt:[4026531841]", "mnt:[4026532999]", "/proc/4242/root"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := fakeRoot(t, "v2")
			symlinks(t, root, map[string]string{
				"proc/self":        "4300",
				"proc/4300/ns/mnt": tt.selfNS,
				"proc/4242/ns/mnt": tt.pidNS,
				"proc/4242/root":   "../..", // the fake root: the same files, by another path
			})
			got, err := FS{Root: root}.Cgroup(4242)
			if err != nil {
				t.Fatal(err)
			}
			base := root + tt.prefix
			if got.Dir != base+"/sys/fs/cgroup/app/worker" || got.LimitDir != base+"/sys/fs/cgroup" || got.LimitBytes != 536870912 || got.UsageBytes != 293601280 {
				t.Errorf("got %+v, want Dir and LimitDir below %s", got, base)
			}
		})
	}
}
