package proc

import (
	"os/exec"
	"syscall"
	"time"
)

// End ends a started command whose standard input the caller has just
// closed, as a careful wrapper does: it gives the command grace to exit by
// itself; then, if the command or anything of its process group is left
// (what it started and left behind), it sends the group SIGTERM, waits up
// to termGrace for it to go, and sends SIGKILL to whatever remains. It
// reaps the command (exited carries cmd.Wait's result) and returns its
// error. Without process groups, SIGTERM and SIGKILL kill the command
// alone (see SignalGroup).
//
// While any process of the group lives, the group's id cannot be taken by
// a new process, so the signals reach only what the command started.
func End(cmd *exec.Cmd, exited <-chan error, grace, termGrace time.Duration) error {
	p := cmd.Process
	var err error
	reaped := false
	gone := func() bool { return reaped && !GroupAlive(p.Pid) }
	wait := func(d time.Duration) {
		for deadline := time.Now().Add(d); ; time.Sleep(5 * time.Millisecond) {
			if !reaped {
				select {
				case err = <-exited:
					reaped = true
				default:
				}
			}
			if gone() || !time.Now().Before(deadline) {
				return
			}
		}
	}
	t := time.NewTimer(grace)
	select {
	case err = <-exited:
		reaped = true
	case <-t.C:
	}
	t.Stop()
	// A group none of whose processes the caller may signal (EPERM) is
	// not waited for: no signal can end it.
	if !gone() && SignalGroup(p, syscall.SIGTERM) == nil {
		wait(termGrace)
		if !gone() {
			_ = SignalGroup(p, syscall.SIGKILL)
		}
	}
	if !reaped {
		err = <-exited
		reaped = true
	}
	// SIGKILL cannot be caught; what it hit is gone once the kernel is
	// done with it. Wait for that, within a bound.
	wait(time.Second)
	return err
}
