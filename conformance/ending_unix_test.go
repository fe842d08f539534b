//go:build unix

package conformance_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
