//go:build !linux

package harness

import "syscall"

// zygoteProcAttr: outside Linux there is no parent-death signal; the zygote
// still gets its own process group.
func zygoteProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
