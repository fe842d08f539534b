//go:build unix

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolguard/toolguard/internal/fixture"
	"github.com/toolguard/toolguard/internal/proc"
)

// MCP's stdio shutdown (2025-11-25 lifecycle): the client closes the
// server's input, waits for it to exit, then sends SIGTERM, then SIGKILL.
// These tests are that rule, with real servers: the end of the client's
// input ends nothing; the client's signal, or its closed output, does.

// readUntil reads lines from br until one equals want.
func readUntil(br *bufio.Reader, want string) error {
	for {
		line, err := br.ReadString('\n')
		if line == want {
			return nil
		}
		if err != nil {
			return fmt.Errorf("no %q before %v", want, err)
		}
	}
}

// status is a finished command's exit status as a shell reports it.
func status(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// pipelineRun is one run of a pipeline client: the lines written, the
// client's output closed, and everything read until the end.
type pipelineRun struct {
	answers []string // the lines answering a request (with an id), sorted
	status  int
	stderr  string
}

// ids lists the ids answered, sorted.
func (r pipelineRun) ids() []string {
	var ids []string
	for _, line := range r.answers {
		var m struct{ ID json.RawMessage }
		json.Unmarshal([]byte(line), &m)
		ids = append(ids, string(m.ID))
	}
	slices.Sort(ids)
	return ids
}

// pipeline runs cmd as `printf LINES | cmd`: its input is the lines, then
// its end; its output is read until it ends.
func pipeline(t *testing.T, cmd *exec.Cmd, lines string) pipelineRun {
	t.Helper()
	cmd.Stdin = strings.NewReader(lines) // exec closes the pipe after the lines
	var out bytes.Buffer
	cmd.Stdout = &out
	var errOut fixture.SyncBuffer
	cmd.Stderr = &errOut
	cmd.WaitDelay = 5 * time.Second // nothing the server left holds the test
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	select {
	case <-exited:
	case <-time.After(60 * time.Second):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Process.Kill()
		<-exited
		t.Fatalf("%q did not exit within 60s of its input ending; stderr:\n%s", cmd.Args, errOut.String())
	}
	r := pipelineRun{status: status(cmd.ProcessState), stderr: errOut.String()}
	for line := range strings.Lines(out.String()) {
		var m struct{ ID json.RawMessage }
		if json.Unmarshal([]byte(line), &m) == nil && m.ID != nil {
			r.answers = append(r.answers, line)
		}
	}
	slices.Sort(r.answers)
	return r
}

// aloneAndThrough runs the pipeline against the server alone and through
// toolguard-stdio with a short -grace, and fails t unless both give every
// answer in want and the same exit status. setup fixes a command's
// directory and environment.
func aloneAndThrough(t *testing.T, argv []string, setup func(*exec.Cmd), lines string, want []string) (alone, through pipelineRun) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	setup(cmd)
	alone = pipeline(t, cmd, lines)
	if !slices.Equal(alone.ids(), want) {
		t.Fatalf("alone, the server answered ids %v, want %v; stderr:\n%s", alone.ids(), want, alone.stderr)
	}
	wrapper := wrapperCommand(append([]string{"-grace", "200ms", "--"}, argv...)...)
	setup(wrapper)
	through = pipeline(t, wrapper, lines)
	if !slices.Equal(through.ids(), alone.ids()) {
		t.Errorf("through toolguard-stdio, ids %v answered, alone %v; stderr:\n%s", through.ids(), alone.ids(), through.stderr)
	}
	if through.status != alone.status {
		t.Errorf("through toolguard-stdio, exit %d, alone %d; stderr:\n%s", through.status, alone.status, through.stderr)
	}
	return alone, through
}

// TestHalfCloseKeepsEveryAnswer: a pipeline client writes its requests,
// ends its output and reads on. A call that the server answers a second
// after the end of its input (five times -grace) is answered through
// toolguard-stdio as alone, and the exit status is the server's own.
func TestHalfCloseKeepsEveryAnswer(t *testing.T) {
	lines := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo"}}` + "\n"
	// The fake server (the test binary) exits 3 once every call is answered.
	argv := []string{"env", "TOOLGUARD_FAKE_SERVER=1", "TOOLGUARD_FAKE_EXIT=3", os.Args[0]}
	setup := func(cmd *exec.Cmd) {
		if cmd.Env == nil {
			cmd.Env = os.Environ()
		}
		cmd.Env = append(cmd.Env, "GORACE="+os.Getenv("GORACE")+" atexit_sleep_ms=0")
	}
	alone, through := aloneAndThrough(t, argv, setup, lines, []string{"0", "1", "2"})
	if alone.status != 3 {
		t.Errorf("alone, exit %d, want the fake server's 3", alone.status)
	}
	if !slices.Equal(through.answers, alone.answers) {
		t.Errorf("through toolguard-stdio the answers are\n%q\nalone\n%q", through.answers, alone.answers)
	}
	if strings.Contains(through.stderr, "SIG") {
		t.Errorf("toolguard-stdio signalled the server; stderr:\n%s", through.stderr)
	}
}

// everythingForms are the two ways to start server-everything (npm,
// 2026.8.31) on stdio: node on its script, and `npx -y`, which resolves
// the package from testdata/node/node_modules and never from the
// registry (a chain of npm exec, sh and node).
func everythingForms(t *testing.T) (forms []struct {
	name string
	argv []string
}, setup func(*exec.Cmd)) {
	nodeDir := fixture.NodeDir(t)
	forms = append(forms, struct {
		name string
		argv []string
	}{"node", []string{"node", filepath.Join(nodeDir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"), "stdio"}})
	forms = append(forms, struct {
		name string
		argv []string
	}{"npx", []string{"npx", "-y", "@modelcontextprotocol/server-everything", "stdio"}})
	setup = func(cmd *exec.Cmd) {
		cmd.Dir = nodeDir
		if cmd.Env == nil {
			cmd.Env = os.Environ()
		}
		cmd.Env = append(cmd.Env, "npm_config_offline=true", "npm_config_update_notifier=false", "npm_config_fund=false", "npm_config_audit=false")
	}
	return forms, setup
}

// TestHalfCloseKeepsEveryAnswerEverything: the pipeline client of issue
// 37, with server-everything's trigger-long-running-operation (1s, five
// times -grace) called before the end of input: every answer arrives and
// the exit status is the server's alone, run directly and as `npx -y`.
func TestHalfCloseKeepsEveryAnswerEverything(t *testing.T) {
	forms, setup := everythingForms(t)
	lines := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"trigger-long-running-operation","arguments":{"duration":1,"steps":2}}}` + "\n"
	for _, form := range forms {
		t.Run(form.name, func(t *testing.T) {
			_, through := aloneAndThrough(t, form.argv, setup, lines, []string{"1", "2"})
			if !strings.Contains(strings.Join(through.answers, ""), "Long running operation completed") {
				t.Errorf("through toolguard-stdio the call's answer is not the operation's: %q", through.answers)
			}
			if strings.Contains(through.stderr, "toolguard-stdio:") {
				t.Errorf("toolguard-stdio stepped in; stderr:\n%s", through.stderr)
			}
		})
	}
}

// descendants lists every process below pid.
func descendants(t *testing.T, pid int) []proc.Process {
	t.Helper()
	ps, err := proc.All()
	if err != nil {
		t.Fatal(err)
	}
	children := map[int][]proc.Process{}
	for _, p := range ps {
		children[p.PPID] = append(children[p.PPID], p)
	}
	var below []proc.Process
	for queue := []int{pid}; len(queue) > 0; queue = queue[1:] {
		for _, c := range children[queue[0]] {
			below = append(below, c)
			queue = append(queue, c.PID)
		}
	}
	return below
}

// alive reports whether p is still running: the same process (same start
// time) and not a zombie.
func alive(p proc.Process) bool {
	now, err := proc.Read(p.PID)
	return err == nil && now.Start == p.Start && !now.Exited()
}

// lineReader hands out the lines read from r.
func lineReader(r io.Reader) <-chan string {
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		br := bufio.NewReader(r)
		for {
			line, err := br.ReadString('\n')
			if line != "" {
				lines <- line
			}
			if err != nil {
				return
			}
		}
	}()
	return lines
}

// TestClientClosesBothPipesMidCall: the client closes both pipes during
// a trigger-long-running-operation call while server-everything writes
// progress, run directly and as `npx -y`. toolguard-stdio exits 74 and no
// process of the session is left. -grace is an hour: only the 500ms once
// the client stopped reading, not -grace, lets it exit within the test's
// 20s bound (the time is logged, not asserted; about 0.6s here, up to 2.1s
// beside a CPU hog).
func TestClientClosesBothPipesMidCall(t *testing.T) {
	if _, err := proc.All(); err != nil {
		t.Skip("finds the processes of a session in /proc:", err)
	}
	forms, setup := everythingForms(t)
	for _, form := range forms {
		t.Run(form.name, func(t *testing.T) {
			w, errOut := startWrapperWith(t, setup, append([]string{"-grace", "1h", "--"}, form.argv...)...)
			var session []proc.Process
			t.Cleanup(func() {
				for _, p := range session {
					if alive(p) {
						syscall.Kill(p.PID, syscall.SIGKILL)
					}
				}
			})
			lines := lineReader(w.out)
			next := func(what string, ok func(string) bool) {
				t.Helper()
				for {
					select {
					case line, open := <-lines:
						if !open {
							t.Fatalf("the output ended before %s; stderr:\n%s", what, errOut.String())
						}
						if ok(line) {
							return
						}
					case <-time.After(30 * time.Second):
						t.Fatalf("no %s within 30s; stderr:\n%s", what, errOut.String())
					}
				}
			}
			io.WriteString(w.in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n")
			next("initialize answer", func(l string) bool {
				var m struct{ ID json.RawMessage }
				return json.Unmarshal([]byte(l), &m) == nil && string(m.ID) == "1"
			})
			// 300 steps in 30 s: a progress notification every 100 ms.
			io.WriteString(w.in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"+
				`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"trigger-long-running-operation","arguments":{"duration":30,"steps":300},"_meta":{"progressToken":"p"}}}`+"\n")
			for range 2 {
				next("progress", func(l string) bool { return strings.Contains(l, `"notifications/progress"`) })
			}
			session = descendants(t, w.cmd.Process.Pid)
			var server proc.Process
			for _, p := range session {
				if p.PPID == w.cmd.Process.Pid {
					server = p
				}
			}
			if server.PID == 0 || server.PGID != server.PID {
				t.Fatalf("no server leading a process group of its own below toolguard-stdio: %+v", session)
			}
			if form.name == "npx" && len(session) < 3 {
				t.Errorf("the npx chain is %d processes (%+v), want npm exec, sh and node", len(session), session)
			}

			w.in.Close()
			w.out.Close()
			closed := time.Now()
			code := w.wait(t)
			took := time.Since(closed)
			t.Logf("%s: exit %d, %v after the client closed both pipes; session: %d processes", form.name, code, took.Round(time.Millisecond), len(session))
			if code != exitClientGone {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, exitClientGone, errOut.String())
			}
			if !strings.Contains(errOut.String(), "500ms after the client stopped reading; SIGTERM to its process group") {
				t.Errorf("no log line for the SIGTERM 500ms after the client stopped reading; stderr:\n%s", errOut.String())
			}
			for _, p := range session {
				if alive(p) {
					t.Errorf("left running: pid %d (%+v)", p.PID, p)
				}
			}
			if proc.GroupAlive(server.PID) {
				t.Errorf("the server's process group %d is still running", server.PID)
			}
		})
	}
}

// startWrapperWith is startWrapper with setup applied to the command
// before it starts.
func startWrapperWith(t *testing.T, setup func(*exec.Cmd), args ...string) (*wrapperProcess, *fixture.SyncBuffer) {
	t.Helper()
	cmd := wrapperCommand(args...)
	setup(cmd)
	errOut := &fixture.SyncBuffer{}
	cmd.Stderr = errOut
	in, out := fixture.StartPipes(t, cmd)
	cmd.WaitDelay = 2 * time.Second
	t.Cleanup(func() { cmd.Process.Kill() })
	return &wrapperProcess{cmd, in, out}, errOut
}

// TestHalfCloseThenSIGTERM: the client ends its output, the server reads
// that end and goes on; then the client sends toolguard-stdio SIGTERM. It
// reaches the server's whole group: the server ignores SIGTERM and exits
// 7 once its child has been ended by it (8 otherwise). The status is the
// server's and nothing is left. (-grace 1m: the server's own exit ends
// the session, however slowly it runs.)
func TestHalfCloseThenSIGTERM(t *testing.T) {
	// The child starts before the trap, so it does not ignore SIGTERM.
	w, errOut := startWrapper(t, "-grace", "1m", "sh", "-c", `sleep 300 & c=$!; trap "" TERM; echo $$ $c >&2; cat >/dev/null; echo eof; wait $c; [ $? = 143 ] && exit 7; exit 8`)
	pgid, child := serverPIDs(t, errOut)
	w.in.Close()
	if err := readUntil(bufio.NewReader(w.out), "eof\n"); err != nil {
		t.Fatalf("the server did not read the end of its input: %v; stderr:\n%s", err, errOut.String())
	}
	w.cmd.Process.Signal(syscall.SIGTERM)
	if code := w.wait(t); code != 7 {
		t.Errorf("exit %d, want 7: the server's child got the client's SIGTERM and the server exited; stderr:\n%s", code, errOut.String())
	}
	assertGone(t, pgid, child)
}

// TestServerIgnoringEOFRunsUntilSignal: a server that reads the end of
// its input and goes on (as some npm servers do) keeps running, as alone:
// a second after that end, five times -grace, it still writes, and the
// client reads it. Only the client's SIGTERM ends it: at once when the
// server does not catch SIGTERM (143), and with SIGKILL -grace later when
// it ignores it (137). Nothing of its group is left.
func TestServerIgnoringEOFRunsUntilSignal(t *testing.T) {
	for _, tc := range []struct {
		trap string
		want int
		log  string
	}{
		{"", 128 + int(syscall.SIGTERM), ""},
		{`trap "" TERM;`, 128 + int(syscall.SIGKILL), "after the client's SIGTERM; SIGKILL to its process group"},
	} {
		w, errOut := startWrapper(t, "-grace", "200ms", "sh", "-c", tc.trap+` sleep 300 & echo $$ $! >&2; cat >/dev/null; echo eof; sleep 1; echo still-running; wait`)
		pgid, child := serverPIDs(t, errOut)
		w.in.Close()
		br := bufio.NewReader(w.out)
		if err := readUntil(br, "eof\n"); err != nil {
			t.Fatalf("%q: the server did not read the end of its input: %v; stderr:\n%s", tc.trap, err, errOut.String())
		}
		if err := readUntil(br, "still-running\n"); err != nil {
			t.Fatalf("%q: the server was ended after the end of its input: %v; stderr:\n%s", tc.trap, err, errOut.String())
		}
		w.cmd.Process.Signal(syscall.SIGTERM)
		if code := w.wait(t); code != tc.want {
			t.Errorf("%q: exit %d, want %d; stderr:\n%s", tc.trap, code, tc.want, errOut.String())
		}
		if !strings.Contains(errOut.String(), tc.log) {
			t.Errorf("%q: stderr has no %q:\n%s", tc.trap, tc.log, errOut.String())
		}
		assertGone(t, pgid, child)
	}
}
