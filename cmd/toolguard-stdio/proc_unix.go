//go:build unix

package main

import (
	"os"
	"syscall"

	"github.com/toolguard/toolguard/internal/proc"
)

// signalGroup sends sig to the server's process group. The group outlives
// its leader while any member is left, so this reaches what the server
// left behind after it was reaped.
func signalGroup(p *os.Process, sig os.Signal) {
	s, ok := sig.(syscall.Signal)
	if !ok {
		p.Signal(sig)
		return
	}
	syscall.Kill(-p.Pid, s)
}

// groupLeft reports whether any process of the server's group is still
// running. Where /proc tells, a zombie (ended, waiting for init to reap
// it: some inits take seconds) does not count; elsewhere it does.
func groupLeft(pgid int) bool {
	if syscall.Kill(-pgid, 0) != nil {
		return false
	}
	running, ok := proc.GroupRunning(pgid)
	return running || !ok
}
