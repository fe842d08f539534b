//go:build unix

package conformance

import (
	"os/exec"
	"syscall"
)

// ownGroup starts the command in a process group of its own, so that
// killGroup reaches what it starts too (a shell's children, say).
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills the command's process group, the command first.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
