//go:build unix

package proc

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// OwnGroup has cmd start as the leader of a new process group, so that
// everything it starts (a shell's children; npx's npm exec, sh and node)
// can be signalled at once.
func OwnGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// PassedOn are the signals a wrapper passes on to its server's group as
// they come, being no request to stop: SIGUSR1 and SIGUSR2, which servers
// give meanings of their own (Node opens its inspector on SIGUSR1).
var PassedOn = []os.Signal{syscall.SIGUSR1, syscall.SIGUSR2}

// SignalGroup sends sig to the process group p leads (see OwnGroup). The
// group outlives its leader while any member is left, so this reaches
// what p left behind after it was reaped. A signal that is not a
// syscall.Signal goes to p alone.
func SignalGroup(p *os.Process, sig os.Signal) error {
	s, ok := sig.(syscall.Signal)
	if !ok {
		return p.Signal(sig)
	}
	return syscall.Kill(-p.Pid, s)
}

// GroupAlive reports whether process group pgid has a process in it that
// has not exited. A member the caller may not signal (EPERM) is still a
// member. Where /proc tells, a zombie waiting for its parent (or an init
// that takes its time) to reap it counts as gone; elsewhere a group that
// answers signals is taken to be alive.
func GroupAlive(pgid int) bool {
	if err := syscall.Kill(-pgid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	running, ok := GroupRunning(pgid)
	return running || !ok
}
