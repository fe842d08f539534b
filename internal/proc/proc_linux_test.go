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

// End sends SIGTERM and then SIGKILL to a command that ignores its input's
// end and SIGTERM, and what it started, and returns once the group is gone
// rather than after its last bound: the orphan it leaves as a zombie for
// init to reap counts as gone.
func TestEndReturnsOnceTheGroupIsGone(t *testing.T) {
	cmd := exec.Command("sh", "-c", `trap "" TERM; sleep 30`)
	OwnGroup(cmd)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	in.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	const grace, termGrace = 100 * time.Millisecond, 100 * time.Millisecond
	start := time.Now()
	err = End(cmd, exited, grace, termGrace)
	took := time.Since(start)
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); err == nil || !ok || ws.Signal() != syscall.SIGKILL {
		t.Errorf("End: %v; want the command killed by SIGKILL", err)
	}
	if GroupAlive(cmd.Process.Pid) {
		t.Errorf("process group %d outlived End", cmd.Process.Pid)
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	// The last wait is bounded by a second: a group already gone must
	// not wait it out.
	if took >= grace+termGrace+800*time.Millisecond {
		t.Errorf("End took %v after the group was killed at %v", took, grace+termGrace)
	}
}
