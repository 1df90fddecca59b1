package harness

import "syscall"

// zygoteProcAttr puts the zygote in its own process group, so a terminal's
// ^C reaches only kernelgate (which then shuts the zygote down in order), and
// has the kernel kill it if kernelgate dies, so no zygote is ever orphaned.
func zygoteProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
