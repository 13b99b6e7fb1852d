package process

import (
	"github.com/go-delve/delve/pkg/proc"
	"github.com/go-delve/delve/pkg/proc/linutil"
	"golang.org/x/sys/unix"
)

// threadRegs are a stopped thread's general registers, as PTRACE_GETREGS returns them.
type threadRegs struct{ r unix.PtraceRegs }

func getRegs(tid int) (threadRegs, error) {
	var r threadRegs
	err := unix.PtraceGetRegs(tid, &r.r)
	return r, err
}

// delve turns the registers into Delve's form (floating-point registers are never needed).
func (r threadRegs) delve(bool) proc.Registers {
	x := r.r
	return linutil.NewAMD64Registers(&linutil.AMD64PtraceRegs{
		R15: x.R15, R14: x.R14, R13: x.R13, R12: x.R12, Rbp: x.Rbp, Rbx: x.Rbx, R11: x.R11,
		R10: x.R10, R9: x.R9, R8: x.R8, Rax: x.Rax, Rcx: x.Rcx, Rdx: x.Rdx, Rsi: x.Rsi,
		Rdi: x.Rdi, Orig_rax: x.Orig_rax, Rip: x.Rip, Cs: x.Cs, Eflags: x.Eflags, Rsp: x.Rsp,
		Ss: x.Ss, Fs_base: x.Fs_base, Gs_base: x.Gs_base, Ds: x.Ds, Es: x.Es, Fs: x.Fs, Gs: x.Gs,
	}, nil)
}
