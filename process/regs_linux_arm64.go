package process

import (
	"unsafe"

	"github.com/go-delve/delve/pkg/proc"
	"github.com/go-delve/delve/pkg/proc/linutil"
	"golang.org/x/sys/unix"
)

// threadRegs are a stopped thread's general registers (NT_PRSTATUS) and its thread pointer
// (NT_ARM_TLS), which a cgo program keeps its g behind.
type threadRegs struct {
	r   unix.PtraceRegsArm64
	tls uint64
}

const ntARMTLS = 0x401 // NT_ARM_TLS

func getRegs(tid int) (threadRegs, error) {
	var r threadRegs
	if err := unix.PtraceGetRegSetArm64(tid, int(unix.NT_PRSTATUS), &r.r); err != nil {
		return r, err
	}
	iov := unix.Iovec{Base: (*byte)(unsafe.Pointer(&r.tls)), Len: 8}
	_, _, e := unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_GETREGSET, uintptr(tid), ntARMTLS, uintptr(unsafe.Pointer(&iov)), 0, 0)
	if e != 0 {
		r.tls = 0 // not needed unless the program uses cgo
	}
	return r, nil
}

// delve turns the registers into Delve's form.
func (r threadRegs) delve(iscgo bool) proc.Registers {
	regs := &linutil.ARM64PtraceRegs{Sp: r.r.Sp, Pc: r.r.Pc, Pstate: r.r.Pstate}
	copy(regs.Regs[:], r.r.Regs[:])
	return linutil.NewARM64Registers(regs, iscgo, r.tls, nil)
}
