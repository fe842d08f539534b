//go:build unix

package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// SIGTERM (timeout, CI cancellation, docker stop) ends the check as
// Ctrl-C does: the stdio server, which reads nothing and never exits on
// its own, does not outlive the command.
func TestSIGTERMEndsTheStdioServerToo(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "pid")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0])
	args := []string{"-timeout", "1h", "-stdio", "--", "sh", "-c", "echo $$ > " + fifo + "; exec sleep 3600"}
	cmd.Env = append(os.Environ(), "TOOLGUARD_CHECK_MAIN="+strings.Join(args, "\x1f"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The server's pid, once it has started; the command's end, should it
	// fail before (the FIFO would never be opened to write).
	started, ended := make(chan []byte, 1), make(chan error, 1)
	go func() {
		b, _ := os.ReadFile(fifo)
		started <- b
	}()
	go func() { ended <- cmd.Wait() }()
	var b []byte
	select {
	case b = <-started:
	case err := <-ended:
		t.Fatalf("the command ended before its server started: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("%q: %v", b, err)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if err := <-ended; err != nil && !errors.As(err, new(*exec.ExitError)) {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("the server (pid %d) outlived the command: %v", pid, err)
	}
}
