//go:build unix

package conformance

import (
	"errors"
	"os/exec"
	"syscall"
	"time"

	"github.com/toolguard/toolguard/internal/proc"
)

// endGroup ends a started command whose standard input the caller has just
// closed, as a careful wrapper does: it gives the command grace to exit by
// itself; then, if anything of its process group is left (the command, or
// what it started and left behind), it sends the group SIGTERM, waits up to
// termGrace for it to go, and sends SIGKILL to whatever remains. It reaps
// the command (exited carries cmd.Wait's result) and returns its error.
//
// While any process of the group lives, the group's id cannot be taken by
// a new process, so the signals reach only what the command started.
func endGroup(cmd *exec.Cmd, exited <-chan error, grace, termGrace time.Duration) error {
	pgid := cmd.Process.Pid
	var err error
	reaped := false
	wait := func(d time.Duration) {
		deadline := time.Now().Add(d)
		for {
			if !reaped {
				select {
				case err = <-exited:
					reaped = true
				default:
				}
			}
			if reaped && !groupAlive(pgid) || !time.Now().Before(deadline) {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	t := time.NewTimer(grace)
	select {
	case err = <-exited:
		reaped = true
	case <-t.C:
	}
	t.Stop()
	if groupAlive(pgid) {
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		wait(termGrace)
		if groupAlive(pgid) {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
	}
	if !reaped {
		err = <-exited
	}
	// SIGKILL cannot be caught; what it hit is gone once the kernel is
	// done with it. Wait for that, within a bound.
	wait(time.Second)
	return err
}

// groupAlive reports whether the process group has a process in it that
// has not exited. Where /proc tells, a zombie waiting for its parent counts
// as gone; elsewhere a group that answers signals is taken to be alive.
func groupAlive(pgid int) bool {
	err := syscall.Kill(-pgid, 0)
	if err == nil || errors.Is(err, syscall.EPERM) {
		running, ok := proc.GroupRunning(pgid)
		return running || !ok
	}
	return false
}
