package main

import (
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServerEndsWhenToolguardStdioIsKilled: a server that ends neither
// with its input nor on SIGTERM does not run on alone once toolguard-stdio
// is killed with SIGKILL (which it cannot catch): it is killed too, as a
// client that ran it directly would have killed it.
func TestServerEndsWhenToolguardStdioIsKilled(t *testing.T) {
	w, errOut := startWrapper(t, "--", "sh", "-c", `trap "" TERM INT; echo $$ >&2; exec sleep 300`)
	var pid int
	for deadline := time.Now().Add(10 * time.Second); pid == 0 && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if first, _, ok := strings.Cut(errOut.String(), "\n"); ok {
			pid, _ = strconv.Atoi(first)
		}
	}
	if pid == 0 {
		t.Fatalf("the server printed no pid; stderr:\n%s", errOut.String())
	}
	w.in.Close() // the server ignores the end of its input
	w.cmd.Process.Kill()
	if code := w.wait(t); code != 128+int(syscall.SIGKILL) {
		t.Fatalf("exit %d, want 137", code)
	}
	for deadline := time.Now().Add(10 * time.Second); running(pid); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the server (pid %d) still runs 10s after toolguard-stdio was killed", pid)
		}
	}
}
