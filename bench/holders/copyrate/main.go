//go:build linux

// Command copyrate measures the ways memdoctor could copy a stopped process's memory into a
// file, on a live process: the largest readable anonymous mapping of PID (its heap arena),
// up to -bytes of it, copied by each method in turn, -runs times, alternating. For each it
// prints the median wall and CPU time (user + system of this process) and the rate.
//
//	go run ./bench/holders/copyrate -pid PID [-bytes 1GiB] [-dir /tmp] [-runs 3]
//
// The methods: reading alone (pread of /proc/PID/mem; process_vm_readv), then a read into a
// 4 MiB buffer and pwrite into an unlinked file (each way of reading, into fresh page cache
// and into a file whose room was made and read back first, as memdoctor prepares it),
// process_vm_readv straight into the file's pages mapped 4 MiB at a time (one copy fewer),
// and the kernel-side copies when the kernel allows them from /proc/PID/mem
// (copy_file_range, sendfile, splice). The process is not stopped: the rate is the machine's, not a snapshot.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	pid := flag.Int("pid", 0, "the process to read")
	limit := flag.Int64("bytes", 1<<30, "copy at most this many bytes of its largest mapping")
	dir := flag.String("dir", os.TempDir(), "where the unlinked file goes")
	runs := flag.Int("runs", 3, "runs of each method")
	flag.Parse()
	if *pid <= 0 {
		fmt.Fprintln(os.Stderr, "copyrate: give -pid PID")
		os.Exit(2)
	}
	lo, hi, err := largestMapping(*pid)
	if err != nil {
		fmt.Fprintln(os.Stderr, "copyrate:", err)
		os.Exit(1)
	}
	hi = min(hi, lo+uint64(*limit))
	mem, err := os.Open(fmt.Sprintf("/proc/%d/mem", *pid))
	if err != nil {
		fmt.Fprintln(os.Stderr, "copyrate:", err)
		os.Exit(1)
	}
	defer mem.Close()
	fmt.Printf("copying %d MiB at %#x of process %d into %s, %d runs each, %s\n", (hi-lo)>>20, lo, *pid, *dir, *runs, loadavg())
	type method struct {
		name    string
		prepare bool
		run     func(f *os.File, buf []byte) error
	}
	read := func(vm bool) func(*os.File, []byte) error {
		return func(f *os.File, buf []byte) error {
			for a := lo; a < hi; a += uint64(len(buf)) {
				b := buf[:min(uint64(len(buf)), hi-a)]
				if err := readAt(*pid, mem, b, a, vm); err != nil {
					return err
				}
				if f != nil {
					if _, err := f.WriteAt(b, int64(a-lo)); err != nil {
						return err
					}
				}
			}
			return nil
		}
	}
	methods := []method{
		{"pread /proc/PID/mem, no write", false, func(_ *os.File, b []byte) error { return read(false)(nil, b) }},
		{"process_vm_readv, no write", false, func(_ *os.File, b []byte) error { return read(true)(nil, b) }},
		{"pread + pwrite, fresh file", false, read(false)},
		{"process_vm_readv + pwrite, fresh file", false, read(true)},
		{"pread + pwrite, room made first", true, read(false)},
		{"process_vm_readv + pwrite, room made first", true, read(true)},
		{"process_vm_readv into the file mmapped, room made first", true, func(f *os.File, _ []byte) error {
			const window = 4 << 20
			for a := lo; a < hi; a += window {
				n := min(window, hi-a)
				m, err := unix.Mmap(int(f.Fd()), int64(a-lo), int(n), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
				if err != nil {
					return err
				}
				err = readAt(*pid, nil, m, a, true)
				unix.Munmap(m)
				if err != nil {
					return err
				}
			}
			return nil
		}},
		{"copy_file_range from /proc/PID/mem", false, func(f *os.File, _ []byte) error {
			off, out := int64(lo), int64(0)
			for uint64(off) < hi {
				n, err := unix.CopyFileRange(int(mem.Fd()), &off, int(f.Fd()), &out, int(min(hi-uint64(off), 4<<20)), 0)
				if err != nil || n == 0 {
					return fmt.Errorf("%v (%d bytes)", err, n)
				}
			}
			return nil
		}},
		{"sendfile from /proc/PID/mem", false, func(f *os.File, _ []byte) error {
			off := int64(lo)
			for uint64(off) < hi {
				if n, err := unix.Sendfile(int(f.Fd()), int(mem.Fd()), &off, int(min(hi-uint64(off), 4<<20))); err != nil || n == 0 {
					return fmt.Errorf("%v (%d bytes)", err, n)
				}
			}
			return nil
		}},
		{"splice /proc/PID/mem -> pipe -> file", false, func(f *os.File, _ []byte) error {
			var p [2]int
			if err := unix.Pipe(p[:]); err != nil {
				return err
			}
			defer unix.Close(p[0])
			defer unix.Close(p[1])
			off, out := int64(lo), int64(0)
			for uint64(off) < hi {
				n, err := unix.Splice(int(mem.Fd()), &off, p[1], nil, 1<<16, 0)
				if err != nil || n == 0 {
					return fmt.Errorf("%v (%d bytes)", err, n)
				}
				for n > 0 {
					w, err := unix.Splice(p[0], nil, int(f.Fd()), &out, int(n), 0)
					if err != nil {
						return err
					}
					n -= w
				}
			}
			return nil
		}},
	}
	buf := make([]byte, 4<<20)
	walls := make([][]time.Duration, len(methods))
	cpus := make([][]time.Duration, len(methods))
	failed := make([]error, len(methods))
	for r := 0; r < *runs; r++ {
		for i, m := range methods {
			if failed[i] != nil {
				continue
			}
			f, err := unlinked(*dir)
			if err != nil {
				fmt.Fprintln(os.Stderr, "copyrate:", err)
				os.Exit(1)
			}
			if m.prepare {
				if err := prepare(f, int64(hi-lo)); err != nil {
					fmt.Fprintln(os.Stderr, "copyrate: making room:", err)
					os.Exit(1)
				}
			}
			c0, t0 := cpu(), time.Now()
			err = m.run(f, buf)
			wall, used := time.Since(t0), cpu()-c0
			f.Close()
			if err != nil {
				failed[i] = err
				continue
			}
			walls[i], cpus[i] = append(walls[i], wall), append(cpus[i], used)
		}
	}
	for i, m := range methods {
		if failed[i] != nil {
			fmt.Printf("%-58s not possible: %v\n", m.name, failed[i])
			continue
		}
		w, c := median(walls[i]), median(cpus[i])
		fmt.Printf("%-58s wall %7s  cpu %7s  %.2f GiB/s by wall\n", m.name, w.Round(time.Millisecond), c.Round(time.Millisecond),
			float64(hi-lo)/w.Seconds()/(1<<30))
	}
	fmt.Println(loadavg())
}

func readAt(pid int, mem *os.File, b []byte, addr uint64, vm bool) error {
	if vm {
		local := []unix.Iovec{{Base: &b[0]}}
		local[0].SetLen(len(b))
		n, err := unix.ProcessVMReadv(pid, local, []unix.RemoteIovec{{Base: uintptr(addr), Len: len(b)}}, 0)
		if err == nil && n < len(b) {
			err = errors.New("short read")
		}
		return err
	}
	_, err := mem.ReadAt(b, int64(addr))
	return err
}

func unlinked(dir string) (*os.File, error) {
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), "copy"), nil
}

// prepare makes room as memdoctor does: fallocate, then read it back so the page cache holds it.
func prepare(f *os.File, n int64) error {
	if err := unix.Fallocate(int(f.Fd()), 0, 0, n); err != nil {
		return err
	}
	b := make([]byte, 1<<20)
	for off := int64(0); off < n; off += int64(len(b)) {
		f.ReadAt(b[:min(int64(len(b)), n-off)], off)
	}
	return nil
}

func cpu() time.Duration {
	var ru unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func median(d []time.Duration) time.Duration {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[len(d)/2]
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	return "load " + strings.Join(strings.Fields(string(b))[:3], " ")
}

// largestMapping finds the largest readable, writable, anonymous mapping of pid.
func largestMapping(pid int) (lo, hi uint64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 5 || !strings.HasPrefix(fs[1], "rw") || fs[4] != "0" || len(fs) > 5 {
			continue
		}
		a, b, _ := strings.Cut(fs[0], "-")
		l, _ := strconv.ParseUint(a, 16, 64)
		h, _ := strconv.ParseUint(b, 16, 64)
		if h-l > hi-lo {
			lo, hi = l, h
		}
	}
	if hi == 0 {
		return 0, 0, fmt.Errorf("process %d has no anonymous mapping", pid)
	}
	return lo, hi, sc.Err()
}
