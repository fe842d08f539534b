package proc

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// The test's own process as /proc shows it, and a command name with spaces
// and parentheses read past.
func TestRead(t *testing.T) {
	p, err := Read(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if p.PID != os.Getpid() || p.PPID != os.Getppid() || p.PGID != syscall.Getpgrp() || p.Exited() || p.Start == "" {
		t.Errorf("%+v: want pid %d, ppid %d, pgid %d, running", p, os.Getpid(), os.Getppid(), syscall.Getpgrp())
	}
	q, err := parseStat(7, []byte("7 (a) (b c) S 1 7 7 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 4242 0 0\n"))
	if err != nil || q != (Process{PID: 7, PPID: 1, PGID: 7, State: 'S', Start: "4242"}) {
		t.Errorf("%+v, %v", q, err)
	}
	if _, err := parseStat(7, []byte("7 (a) S 1")); err == nil {
		t.Error("a short line read")
	}
}

// A child that ended and waits to be reaped has exited; its group is not
// running, while the test's own group is.
func TestZombieGroupNotRunning(t *testing.T) {
	cmd := exec.Command("true")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	pid := cmd.Process.Pid
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		p, err := Read(pid)
		if err != nil {
			t.Fatal(err)
		}
		if p.Exited() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%+v has not exited within 10s", p)
		}
	}
	if running, ok := GroupRunning(pid); running || !ok {
		t.Errorf("the zombie's group: running %v, ok %v", running, ok)
	}
	if running, ok := GroupRunning(syscall.Getpgrp()); !running || !ok {
		t.Errorf("the test's group: running %v, ok %v", running, ok)
	}
}
