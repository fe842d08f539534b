//go:build !unix

package proc

import (
	"os"
	"os/exec"
	"syscall"
)

// OwnGroup does nothing where there are no process groups.
func OwnGroup(cmd *exec.Cmd) {}

// SignalGroup signals p alone, there being no process groups: SIGTERM and
// SIGKILL kill it.
func SignalGroup(p *os.Process, sig os.Signal) error {
	if sig == syscall.SIGTERM || sig == syscall.SIGKILL {
		return p.Kill()
	}
	return p.Signal(sig)
}

// PassedOn is empty where there are no such signals.
var PassedOn []os.Signal

// GroupAlive reports false: there is no group to wait for.
func GroupAlive(pgid int) bool { return false }
