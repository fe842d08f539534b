//go:build unix

package proc

import (
	"os/exec"
	"syscall"
)

// OwnGroup has cmd start as the leader of a new process group, so that
// everything it starts (a shell's children; npx's npm exec, sh and node)
// can be signalled at once.
func OwnGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}
