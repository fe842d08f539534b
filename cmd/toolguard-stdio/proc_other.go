//go:build !unix

package main

import (
	"os"
	"syscall"
)

// signalGroup signals the server alone; SIGTERM and SIGKILL kill it.
func signalGroup(p *os.Process, sig os.Signal) {
	if sig == syscall.SIGTERM || sig == syscall.SIGKILL {
		p.Kill()
		return
	}
	p.Signal(sig)
}

// groupLeft reports false: there is no group to wait for.
func groupLeft(pgid int) bool { return false }
