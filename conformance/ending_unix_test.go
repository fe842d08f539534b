//go:build unix

package conformance_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolguard/toolguard/conformance"
)

func syscallKill(pid int) { _ = syscall.Kill(pid, syscall.SIGKILL) }

// CheckCommand whose ctx ends while its server has not answered returns
// no report but the error, as CheckURL does, and ends the server.
func TestStdioCheckCutShortIsAnErrorNotAReport(t *testing.T) {
	dir := t.TempDir()
	started, pidFile := filepath.Join(dir, "started"), filepath.Join(dir, "pid")
	if err := syscall.Mkfifo(started, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		os.ReadFile(started) // the server has written its pid: it runs
		cancel()
	}()
	rep, err := conformance.CheckCommand(ctx, []string{"sh", "-c", "echo $$ > " + pidFile + "; echo > " + started + "; exec sleep 3600"},
		conformance.Options{Timeout: time.Hour})
	if !errors.Is(err, context.Canceled) || rep.Verdict != "" {
		t.Errorf("%v, %+v; want context.Canceled and no report", err, rep)
	}
	b, _ := os.ReadFile(pidFile)
	var pid int
	if _, perr := fmt.Sscan(string(b), &pid); perr != nil {
		t.Fatalf("pid %q: %v", b, perr)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		syscallKill(pid)
		t.Errorf("the server (pid %d) outlived the check: %v", pid, err)
	}
}

// A fleet cut short starts no stdio server that was waiting for its turn
// (Processes): the one running ends, the others are never started.
func TestFleetCutShortStartsNoWaitingServer(t *testing.T) {
	dir := t.TempDir()
	started, log := filepath.Join(dir, "started"), filepath.Join(dir, "log")
	if err := syscall.Mkfifo(started, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		os.ReadFile(started) // the first server runs: the others wait for its turn
		cancel()
	}()
	var targets []conformance.Target
	for i := range 4 {
		script := fmt.Sprintf("echo %d >> %s; echo > %s; exec sleep 3600", i, log, started)
		targets = append(targets, conformance.Target{Target: fmt.Sprintf("stdio:server-%d", i), Argv: []string{"sh", "-c", script}})
	}
	sum := conformance.CheckFleet(ctx, slices.Values(targets), conformance.Options{Timeout: time.Hour},
		conformance.FleetOptions{Concurrency: 4, Processes: 1})
	b, _ := os.ReadFile(log)
	if n := strings.Count(string(b), "\n"); n != 1 || sum.Total != 0 {
		t.Errorf("%d servers started (%q), %d reported; want the one that ran, none reported", n, b, sum.Total)
	}
}
