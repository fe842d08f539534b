//go:build !unix

package conformance

import (
	"os/exec"
	"time"
)

// endGroup gives the command grace to exit once its input is closed, then
// kills it (there are no process groups to signal here).
func endGroup(cmd *exec.Cmd, exited <-chan error, grace, termGrace time.Duration) error {
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case err := <-exited:
		return err
	case <-t.C:
		_ = cmd.Process.Kill()
		return <-exited
	}
}
