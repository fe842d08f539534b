//go:build unix

package conformance_test

import "syscall"

func syscallKill(pid int) { _ = syscall.Kill(pid, syscall.SIGKILL) }
