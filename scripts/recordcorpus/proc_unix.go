//go:build unix

package main

import (
	"os/exec"
	"syscall"
)

// setGroup starts the server in its own process group, so that stopping it
// also stops the browsers, language servers and helpers it started.
func setGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
