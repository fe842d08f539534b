package main

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServerEndsWhenToolguardStdioIsKilled: a server that ends neither
// with its input nor on SIGTERM does not run on alone once toolguard-stdio
// is killed with SIGKILL (which it cannot catch): it is killed too, as a
// client that ran it directly would have killed it. The server holds the
// write end of a FIFO the test reads: its pid comes first, and the end of
// the FIFO is the event of its death.
func TestServerEndsWhenToolguardStdioIsKilled(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "alive")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	w, _ := startWrapper(t, "--", "sh", "-c", `trap "" TERM INT; exec 3>"$0"; echo $$ >&3; exec sleep 300`, fifo)
	f, err := os.Open(fifo) // until the server opens its end
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	br := bufio.NewReader(f)
	line, err := br.ReadString('\n')
	pid, _ := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || pid == 0 {
		t.Fatalf("the server's pid: %q, %v", line, err)
	}
	w.in.Close() // the server ignores the end of its input
	w.cmd.Process.Kill()
	if code := w.wait(t); code != 128+int(syscall.SIGKILL) {
		t.Fatalf("exit %d, want 137", code)
	}
	gone := make(chan struct{})
	go func() { io.Copy(io.Discard, br); close(gone) }() // EOF: no process holds the FIFO's write end
	select {
	case <-gone:
	case <-time.After(20 * time.Second): // a bound for the failure, not a wait for the event
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("the server (pid %d) still runs 20s after toolguard-stdio was killed", pid)
	}
}
