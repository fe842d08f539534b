//go:build linux

package interop

import (
	"encoding/json"
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

// These tests read /proc to find every process of a session: Linux only.

// procEntry is a process as /proc shows it, with its command line.
type procEntry struct {
	proc.Process
	cmdline string
}

// allProcs lists every process in /proc.
func allProcs(t *testing.T) []procEntry {
	t.Helper()
	ps, err := proc.All()
	if err != nil {
		t.Fatal(err)
	}
	es := make([]procEntry, len(ps))
	for i, p := range ps {
		es[i].Process = p
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(p.PID) + "/cmdline"); err == nil {
			es[i].cmdline = strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return es
}

// descendants returns every process below pid.
func descendants(t *testing.T, pid int) []procEntry {
	t.Helper()
	ps := allProcs(t)
	var out []procEntry
	parents := map[int]bool{pid: true}
	for grew := true; grew; {
		grew = false
		for _, p := range ps {
			if parents[p.PPID] && !parents[p.PID] {
				parents[p.PID] = true
				out = append(out, p)
				grew = true
			}
		}
	}
	return out
}

// alive reports whether p is still running: the same process (same start
// time) and not a zombie waiting for init to reap it.
func alive(p procEntry) bool {
	now, err := proc.Read(p.PID)
	return err == nil && now.Start == p.Start && !now.Exited()
}

// TestStdioClientGoneMidCall: the client closes both pipes during a
// trigger-long-running-operation call while server-everything (npm,
// 2026.8.31) writes progress, run directly and as `npx -y`. toolguard-stdio
// exits within 2 s, with status 74 (the client stopped reading; not 141, a
// death by SIGPIPE), and no process of its session is left running: not
// the server, not npm exec, sh or node of the npx chain.
func TestStdioClientGoneMidCall(t *testing.T) {
	nodeDir := fixture.NodeDir(t)
	for _, form := range []struct {
		name string
		argv []string
	}{
		{"node", publishedServer(t, "server-everything")},
		// npx resolves the package from testdata/node/node_modules, and
		// never from the registry.
		{"npx", []string{"npx", "-y", "@modelcontextprotocol/server-everything", "stdio"}},
	} {
		t.Run(form.name, func(t *testing.T) {
			cmd := exec.Command(command(t, "toolguard-stdio"), form.argv...)
			cmd.Dir = nodeDir
			cmd.Env = append(os.Environ(), "npm_config_offline=true", "npm_config_update_notifier=false", "npm_config_fund=false", "npm_config_audit=false")
			// A file, so that Wait returns when toolguard-stdio exits,
			// whatever still holds its standard error.
			stderr, err := os.CreateTemp(t.TempDir(), "stderr")
			if err != nil {
				t.Fatal(err)
			}
			defer stderr.Close()
			cmd.Stderr = stderr
			in, out := fixture.StartPipes(t, cmd)
			exited := make(chan struct{})
			go func() { cmd.Wait(); close(exited) }()
			var session []procEntry
			t.Cleanup(func() {
				cmd.Process.Kill()
				for _, p := range session {
					if alive(p) {
						syscall.Kill(p.PID, syscall.SIGKILL)
					}
				}
			})
			logs := func() string { b, _ := os.ReadFile(stderr.Name()); return string(b) }

			c := newLineClient(in, out)
			c.handshake(t, map[string]any{})
			const long = "trigger-long-running-operation"
			if names := c.tools(t); !strings.Contains(strings.Join(names, "\n")+"\n", long+"\n") {
				t.Fatalf("server-everything lists no %s: %q", long, names)
			}
			// 300 steps in 30 s: a progress notification every 100 ms.
			call, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 100, "method": "tools/call", "params": map[string]any{
				"name": long, "arguments": map[string]any{"duration": 30, "steps": 300},
				"_meta": map[string]any{"progressToken": "p"}}})
			c.send(t, string(call))
			for progress := 0; progress < 2; {
				select {
				case line := <-c.lines:
					if strings.Contains(line, `"notifications/progress"`) {
						progress++
					}
				case <-time.After(20 * time.Second):
					t.Fatalf("no progress within 20s; stderr:\n%s", logs())
				}
			}

			// The session: every process below toolguard-stdio. The server
			// leads a process group of its own.
			session = descendants(t, cmd.Process.Pid)
			var server procEntry
			for _, p := range session {
				if p.PPID == cmd.Process.Pid {
					server = p
				}
			}
			if server.PID == 0 {
				t.Fatalf("no server below toolguard-stdio: %+v", session)
			}
			if server.PGID != server.PID {
				t.Errorf("the server (pid %d, %q) does not lead a process group of its own", server.PID, server.cmdline)
			}
			if form.name == "npx" && len(session) < 3 {
				t.Errorf("the npx chain is %d processes (%+v), want npm exec, sh and node", len(session), session)
			}

			in.Close()
			out.Close()
			closed := time.Now()
			select {
			case <-exited:
			case <-time.After(20 * time.Second):
				t.Fatalf("toolguard-stdio did not exit within 20s of the client closing its pipes; stderr:\n%s", logs())
			}
			took := time.Since(closed)
			status := cmd.ProcessState.ExitCode()
			if ws := cmd.ProcessState.Sys().(syscall.WaitStatus); ws.Signaled() {
				status = 128 + int(ws.Signal())
			}
			t.Logf("%s: toolguard-stdio exited %d, %v after the client closed both pipes; session: %d processes", form.name, status, took.Round(time.Millisecond), len(session))
			if status != 74 {
				t.Errorf("exit status %d, want 74 (the client stopped reading); stderr:\n%s", status, logs())
			}
			if took > 2*time.Second {
				t.Errorf("toolguard-stdio exited %v after the client closed its pipes, want within 2s", took)
			}
			for _, p := range session {
				if alive(p) {
					t.Errorf("left running: pid %d %q", p.PID, p.cmdline)
				}
			}
			for _, p := range allProcs(t) {
				if p.PGID == server.PID && !p.Exited() {
					t.Errorf("left running in the server's process group: pid %d %q", p.PID, p.cmdline)
				}
			}
			if t.Failed() {
				t.Logf("toolguard-stdio's stderr:\n%s", logs())
			}
		})
	}
}
