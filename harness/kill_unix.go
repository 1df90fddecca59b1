//go:build unix

package harness

import "syscall"

// killGroup SIGKILLs a child's process group; children lead their own group
// (pgid == pid, docs/protocol.md). pid <= 1 is refused: kill(-1) or kill(0) would
// hit the wrong processes.
func killGroup(pid int) {
	if pid > 1 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}
