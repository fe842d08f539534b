//go:build unix

package main

import (
	"bufio"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolguard/toolguard/internal/fixture"
	"github.com/toolguard/toolguard/internal/proc"
)

// The servers below start a child, then print their pid, which is their
// process group's id, and the child's on the first line of standard error.

// serverPIDs waits for the pids the server printed first on standard
// error: its own (its group's) and its child's; and, where /proc tells,
// for the child to have become its command. Until then the child is a
// copy of the shell, with the shell's traps: a signal sent in that window
// would be caught by a trap instead of ending the child.
func serverPIDs(t *testing.T, errOut *fixture.SyncBuffer) (pgid, child int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		first, _, ok := strings.Cut(errOut.String(), "\n")
		if ok {
			a, b, _ := strings.Cut(first, " ")
			pgid, err1 := strconv.Atoi(a)
			child, err2 := strconv.Atoi(b)
			if err1 != nil || err2 != nil {
				t.Fatalf("the server's first line on standard error: %q", first)
			}
			shell, err := os.ReadFile("/proc/" + a + "/comm")
			for err == nil && time.Now().Before(deadline) {
				var comm []byte
				if comm, err = os.ReadFile("/proc/" + b + "/comm"); err != nil || string(comm) != string(shell) {
					break
				}
				time.Sleep(time.Millisecond)
			}
			return pgid, child
		}
	}
	t.Fatal("the server printed no pids")
	return 0, 0
}

// assertGone fails t if the server's child or any process of its group is
// still running (a zombie waiting for init to reap it is not).
func assertGone(t *testing.T, pgid, child int) {
	t.Helper()
	if proc.GroupAlive(pgid) {
		t.Errorf("process group %d is still running after toolguard-stdio exited", pgid)
		syscall.Kill(-pgid, syscall.SIGKILL)
	}
	if running(child) {
		t.Errorf("the server's child %d is still running after toolguard-stdio exited", child)
		syscall.Kill(child, syscall.SIGKILL)
	}
}

// running reports whether pid is a process that is not a zombie.
func running(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	p, err := proc.Read(pid)
	if err != nil {
		return !errors.Is(err, fs.ErrNotExist) || !procMounted()
	}
	return !p.Exited()
}

func procMounted() bool {
	_, err := os.Stat("/proc/self/stat")
	return err == nil
}

// runAsync runs toolguard-stdio in process with the given ends.
func runAsync(args []string, in io.Reader, out io.WriteCloser, errOut io.Writer) <-chan int {
	done := make(chan int, 1)
	go func() { done <- run(args, in, out, errOut) }()
	return done
}

func waitExit(t *testing.T, done <-chan int) int {
	t.Helper()
	select {
	case code := <-done:
		return code
	case <-time.After(20 * time.Second):
		t.Fatal("toolguard-stdio did not exit within 20s")
		return 0
	}
}

// TestClientGoneEndsTheServersGroup: the client closes both pipes while
// the server writes and ignores the end of its input. toolguard-stdio
// exits 74, having ended the server and the child it started; whether the
// client's input stays open does not matter.
func TestClientGoneEndsTheServersGroup(t *testing.T) {
	const server = `sleep 300 & echo $$ $! >&2; while :; do echo tick; sleep 0.02; done`
	for _, closeInput := range []bool{true, false} {
		inR, inW := io.Pipe()
		outR, outW, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		var errOut fixture.SyncBuffer
		done := runAsync([]string{"-grace", "200ms", "--", "sh", "-c", server}, inR, outW, &errOut)
		pgid, child := serverPIDs(t, &errOut)
		if line, err := bufio.NewReader(outR).ReadString('\n'); line != "tick\n" {
			t.Fatalf("the client read %q, %v", line, err)
		}
		if closeInput {
			inW.Close()
		}
		outR.Close()
		if code := waitExit(t, done); code != exitClientGone {
			t.Errorf("input closed too: %v: exit %d, want %d; stderr:\n%s", closeInput, code, exitClientGone, errOut.String())
		}
		assertGone(t, pgid, child)
		if !strings.Contains(errOut.String(), "the client stopped reading") || !strings.Contains(errOut.String(), "SIGTERM to its process group") {
			t.Errorf("stderr says %q, want why and what was done", errOut.String())
		}
		inW.Close()
	}
}

// TestServerExitsLeavingChild: the server exits by itself while a child
// it started still holds its output. The child is ended, and the status
// is the server's.
func TestServerExitsLeavingChild(t *testing.T) {
	inR, inW := io.Pipe()
	defer inW.Close()
	var errOut fixture.SyncBuffer
	done := runAsync([]string{"-grace", "200ms", "--", "sh", "-c", `sleep 300 & echo $$ $! >&2; exit 5`}, inR, nopCloser{io.Discard}, &errOut)
	pgid, child := serverPIDs(t, &errOut)
	if code := waitExit(t, done); code != 5 {
		t.Errorf("exit %d, want the server's 5; stderr:\n%s", code, errOut.String())
	}
	assertGone(t, pgid, child)
}

// TestForwardedSignalReachesTheGroup: SIGTERM to toolguard-stdio reaches
// every process of the server's group, not only the server.
func TestForwardedSignalReachesTheGroup(t *testing.T) {
	// The server survives SIGTERM and exits 7 once its child has been
	// ended by SIGTERM (waiting for it forever otherwise).
	wrapper, errOut := startWrapper(t, "sh", "-c", `trap : TERM; sleep 300 & c=$!; echo $$ $c >&2; wait; wait $c; [ $? = 143 ] && exit 7; exit 8`)
	pgid, child := serverPIDs(t, errOut)
	wrapper.cmd.Process.Signal(syscall.SIGTERM)
	if code := wrapper.wait(t); code != 7 {
		t.Errorf("exit %d, want 7: the server's child got the SIGTERM and the server exited; stderr:\n%s", code, errOut.String())
	}
	assertGone(t, pgid, child)
}

// TestSecondSignalKillsTheGroup: a server that ignores SIGTERM and SIGINT
// (and its child) is ended by the second of them, with SIGKILL.
func TestSecondSignalKillsTheGroup(t *testing.T) {
	wrapper, errOut := startWrapper(t, "sh", "-c", `trap "" TERM INT; sleep 300 & echo $$ $! >&2; while :; do sleep 0.02; done`)
	pgid, child := serverPIDs(t, errOut)
	wrapper.cmd.Process.Signal(syscall.SIGTERM) // ignored by the server
	wrapper.cmd.Process.Signal(syscall.SIGINT)
	if code := wrapper.wait(t); code != 128+int(syscall.SIGKILL) {
		t.Errorf("exit %d, want 137; stderr:\n%s", code, errOut.String())
	}
	if !strings.Contains(errOut.String(), "again while the server runs; SIGKILL") {
		t.Errorf("no log line for the SIGKILL; stderr:\n%s", errOut.String())
	}
	assertGone(t, pgid, child)
}

// wrapperProcess is toolguard-stdio as a process of its own: the test
// binary, with the client's pipes in the test's hands.
type wrapperProcess struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out io.ReadCloser
}

// wrapperCommand is toolguard-stdio with args, as a command of its own:
// the test binary.
func wrapperCommand(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "TOOLGUARD_STDIO_MAIN=1", "GORACE="+os.Getenv("GORACE")+" atexit_sleep_ms=0")
	return cmd
}

func startWrapper(t *testing.T, args ...string) (*wrapperProcess, *fixture.SyncBuffer) {
	t.Helper()
	cmd := wrapperCommand(args...)
	errOut := &fixture.SyncBuffer{}
	cmd.Stderr = errOut
	in, out := fixture.StartPipes(t, cmd)
	// Wait must not wait for what the server left holding stderr.
	cmd.WaitDelay = 2 * time.Second
	t.Cleanup(func() { cmd.Process.Kill() })
	return &wrapperProcess{cmd, in, out}, errOut
}

// wait returns the exit status as a shell reports it.
func (w *wrapperProcess) wait(t *testing.T) int {
	t.Helper()
	exited := make(chan struct{})
	go func() { w.cmd.Wait(); close(exited) }()
	select {
	case <-exited:
	case <-time.After(20 * time.Second):
		w.cmd.Process.Kill()
		t.Fatal("toolguard-stdio did not exit within 20s")
	}
	if ws := w.cmd.ProcessState.Sys().(syscall.WaitStatus); ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return w.cmd.ProcessState.ExitCode()
}

// TestBrokenStdoutIsNotSIGPIPE: with its real standard output (fd 1) a
// pipe the client closed, toolguard-stdio is not killed by SIGPIPE (141):
// it exits 74 and leaves no process of the server's group.
func TestBrokenStdoutIsNotSIGPIPE(t *testing.T) {
	w, errOut := startWrapper(t, "-grace", "200ms", "sh", "-c", `sleep 300 & echo $$ $! >&2; while :; do echo tick; sleep 0.02; done`)
	pgid, child := serverPIDs(t, errOut)
	if line, err := bufio.NewReader(w.out).ReadString('\n'); line != "tick\n" {
		t.Fatalf("the client read %q, %v", line, err)
	}
	w.in.Close()
	w.out.Close()
	if code := w.wait(t); code != exitClientGone {
		t.Errorf("exit %d, want %d; stderr:\n%s", code, exitClientGone, errOut.String())
	}
	assertGone(t, pgid, child)
}

// TestClientStoppedReadingShortensGrace: once the client stopped reading,
// a server that ignores the end of its input gets 500ms, not -grace, after
// the client closed its input first and the server read its end (-grace
// 1m here; the test waits 20s).
func TestClientStoppedReadingShortensGrace(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var errOut fixture.SyncBuffer
	// fd 3: the server's input, for the reader in the background (whose
	// standard input sh makes /dev/null).
	done := runAsync([]string{"-grace", "1m", "sh", "-c", `sleep 300 & echo $$ $! >&2; exec 3<&0; (cat <&3 >/dev/null; echo eof) & while :; do echo tick; sleep 0.02; done`}, inR, outW, &errOut)
	pgid, child := serverPIDs(t, &errOut)
	br := bufio.NewReader(outR)
	if line, err := br.ReadString('\n'); line != "tick\n" {
		t.Fatalf("the client read %q, %v", line, err)
	}
	inW.Close() // the end of input first, as a client closing stdin then stdout
	if err := readUntil(br, "eof\n"); err != nil {
		t.Fatalf("the server did not read the end of its input: %v; stderr:\n%s", err, errOut.String())
	}
	outR.Close()
	if code := waitExit(t, done); code != exitClientGone {
		t.Errorf("exit %d, want %d; stderr:\n%s", code, exitClientGone, errOut.String())
	}
	assertGone(t, pgid, child)
}

// TestUserSignalsReachTheServer: SIGUSR1 and SIGUSR2, to which servers
// give meanings of their own, reach the server's group as they come, and
// are no request to stop: the server answers each, and exits (5) only when
// it chooses to.
func TestUserSignalsReachTheServer(t *testing.T) {
	w, errOut := startWrapper(t, "sh", "-c", `trap 'echo usr1' USR1; trap 'echo usr2; exit 5' USR2; echo ready; while :; do sleep 0.05; done`)
	out := bufio.NewReader(w.out)
	// readLine reads up to want, failing t if it does not come within a
	// bound well beyond any load (a signal not passed on never comes).
	readLine := func(want, what string) {
		t.Helper()
		got := make(chan error, 1)
		go func() { got <- readUntil(out, want) }()
		select {
		case err := <-got:
			if err != nil {
				t.Fatalf("%s: %v; stderr:\n%s", what, err, errOut.String())
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: no %q within 20s; stderr:\n%s", what, want, errOut.String())
		}
	}
	readLine("ready\n", "the server did not start")
	w.cmd.Process.Signal(syscall.SIGUSR1)
	readLine("usr1\n", "SIGUSR1 did not reach the server")
	w.cmd.Process.Signal(syscall.SIGUSR2)
	if code := w.wait(t); code != 5 {
		t.Errorf("exit %d, want the server's 5 after its SIGUSR2; stderr:\n%s", code, errOut.String())
	}
}

// A signal ignored when toolguard-stdio starts (nohup, a shell's
// background job) stays ignored for the server, as it would be alone: a
// server that gets SIGHUP then lives on, and its status is its own.
func TestSignalsIgnoredAtStartStayIgnoredForTheServer(t *testing.T) {
	w, errOut := startWrapperWith(t, func(cmd *exec.Cmd) {
		cmd.Args = append([]string{"sh", "-c", `trap "" HUP; exec "$0" "$@"`, cmd.Path}, cmd.Args[1:]...)
		cmd.Path = "/bin/sh"
	}, "sh", "-c", `kill -HUP $$; echo lived; exit 3`)
	if err := readUntil(bufio.NewReader(w.out), "lived\n"); err != nil {
		t.Errorf("the server did not live through its SIGHUP: %v; stderr:\n%s", err, errOut.String())
	}
	if code := w.wait(t); code != 3 {
		t.Errorf("exit %d, want the server's 3; stderr:\n%s", code, errOut.String())
	}
}
