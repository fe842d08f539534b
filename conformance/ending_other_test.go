//go:build !unix

package conformance_test

import "os"

func syscallKill(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}
