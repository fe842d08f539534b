//go:build !linux

package proc

import "os/exec"

// EndWithParent does nothing where the system cannot signal a process
// when its parent dies.
func EndWithParent(cmd *exec.Cmd) {}
