package interop

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolguard/toolguard/internal/fixture"
)

// process is a command with its standard input and output in a test's hands.
type process struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	c      *lineClient
	exited chan struct{}
}

func startProcess(t *testing.T, argv []string) *process {
	t.Helper()
	return startProcessStderr(t, argv, os.Stderr)
}

// startProcessStderr is startProcess with the process's standard error
// going to stderr.
func startProcessStderr(t *testing.T, argv []string, stderr io.Writer) *process {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = stderr
	in, out := fixture.StartPipes(t, cmd)
	p := &process{cmd: cmd, in: in, c: newLineClient(in, out), exited: make(chan struct{})}
	t.Cleanup(func() {
		in.Close()
		select {
		case <-p.exited:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
		}
	})
	return p
}

// wait drains the output and returns the exit status as a shell reports
// it (128 + the signal for a signal).
func (p *process) wait(t *testing.T) (rest []string, status int) {
	t.Helper()
	timeout := time.After(15 * time.Second)
	for {
		select {
		case line, ok := <-p.c.lines:
			if ok {
				rest = append(rest, line)
				continue
			}
		case <-timeout:
			p.cmd.Process.Kill()
			t.Fatal("the process did not end within 15s")
		}
		break
	}
	p.cmd.Wait()
	close(p.exited)
	ws := p.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		return rest, 128 + int(ws.Signal())
	}
	return rest, ws.ExitStatus()
}

func callLine(id int, name, text string) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call",
		"params": map[string]any{"name": name, "arguments": map[string]any{"text": text}}})
	return string(b)
}

// TestStdioFaultServerCrashes: the server dies in the middle of a line.
// Every known call sent before is answered, the unfinished line reaches
// the client as it is, and the wrapper exits with the server's status.
func TestStdioFaultServerCrashes(t *testing.T) {
	p := startProcess(t, wrapped(t, helperServer(t, "crashy")))
	p.c.handshake(t, map[string]any{})
	for i := range 20 {
		p.c.send(t, callLine(100+i, "echo", fmt.Sprint(i)))
	}
	for i := range 20 {
		if m := p.c.wait(t, fmt.Sprint(100+i)); !strings.Contains(string(m.Result), fmt.Sprintf("echo:%d", i)) {
			t.Errorf("call %d: %s", i, m.Result)
		}
	}
	p.c.send(t, callLine(200, "crash", ""))
	rest, status := p.wait(t)
	if status != 3 {
		t.Errorf("exit status %d, want the server's 3", status)
	}
	if len(rest) == 0 || rest[len(rest)-1] != `{"jsonrpc":"2.0","id":` {
		t.Errorf("the client read %q last, want the server's unfinished line", rest)
	}
}

// TestStdioFaultStdinCloses: the client closes its end; the server sees
// the end of its input and the wrapper exits with its status, promptly.
func TestStdioFaultStdinCloses(t *testing.T) {
	for _, argv := range [][]string{helperServer(t, "mcpgo"), tsFixture(t)} {
		p := startProcess(t, wrapped(t, argv))
		p.c.handshake(t, map[string]any{})
		p.c.send(t, callLine(1, "echo", "last words"))
		p.in.Close()
		start := time.Now()
		rest, status := p.wait(t)
		if status != 0 {
			t.Errorf("%s: exit status %d", argv[len(argv)-1], status)
		}
		if len(rest) != 1 || !strings.Contains(rest[0], "echo:last words") {
			t.Errorf("%s: the call sent before closing: %q", argv[len(argv)-1], rest)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: exit took %v", argv[len(argv)-1], d)
		}
	}
}

// TestStdioFaultHugeLine: a 10 MiB tools/call passes through unread and is
// answered as without the guard; the stream goes on.
func TestStdioFaultHugeLine(t *testing.T) {
	huge := strings.Repeat("ab", 5<<20)
	var answers []string
	for _, argv := range [][]string{helperServer(t, "mcpgo"), wrapped(t, helperServer(t, "mcpgo"))} {
		p := startProcess(t, argv)
		p.c.timeout = 2 * time.Minute // 10 MiB each way through mcp-go, slow under -race
		p.c.handshake(t, map[string]any{})
		p.c.send(t, callLine(1, "echo", huge))
		m := p.c.wait(t, "1")
		answers = append(answers, string(m.Result))
		if !strings.Contains(string(m.Result), "echo:"+huge) {
			t.Errorf("the 10 MiB call was answered %.200s", m.Result)
		}
		p.c.send(t, callLine(2, "echo", "after"))
		if m := p.c.wait(t, "2"); !strings.Contains(string(m.Result), "echo:after") {
			t.Errorf("after the huge line: %s", m.Result)
		}
	}
	if answers[0] != answers[1] {
		t.Error("the 10 MiB call was answered differently through the wrapper")
	}
}

// TestStdioFaultBadLines: non-JSON lines, invalid UTF-8 and lines no SDK
// reads alike reach the server untouched: the client reads exactly what it
// reads without the wrapper.
func TestStdioFaultBadLines(t *testing.T) {
	lines := []string{
		"this is not json",
		"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"ech\xff\"}}",
		"{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"\xfe\"}}}",
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope","NAME":"echo"}}`,
		"\x00\x01\x02",
		`{"jsonrpc":"2.0","id":8,`,
		callLine(9, "echo", "still here"),
	}
	var outputs [2][]string
	for i, argv := range [][]string{helperServer(t, "mcpgo"), wrapped(t, helperServer(t, "mcpgo"))} {
		p := startProcess(t, argv)
		p.c.handshake(t, map[string]any{})
		for _, l := range lines {
			p.c.send(t, l)
		}
		p.c.wait(t, "9")
		p.in.Close()
		rest, _ := p.wait(t)
		outputs[i] = append(p.c.seen, rest...)
	}
	// mcp-go answers tool calls from a pool of workers, in any order.
	slices.Sort(outputs[0])
	slices.Sort(outputs[1])
	if !slices.Equal(outputs[0], outputs[1]) || len(outputs[0]) != len(lines)-1 {
		t.Errorf("alone the client read\n%q\nthrough the wrapper\n%q", outputs[0], outputs[1])
	}
}

// TestStdioFaultSIGTERM: SIGTERM to the wrapper reaches the server, and the
// wrapper exits with the status the server exits with.
func TestStdioFaultSIGTERM(t *testing.T) {
	var statuses []int
	for _, argv := range [][]string{tsFixture(t), wrapped(t, tsFixture(t))} {
		p := startProcess(t, argv)
		p.c.handshake(t, map[string]any{})
		p.cmd.Process.Signal(syscall.SIGTERM)
		_, status := p.wait(t)
		statuses = append(statuses, status)
	}
	if statuses[0] != 128+int(syscall.SIGTERM) || statuses[1] != statuses[0] {
		t.Errorf("exit status alone %d, through the wrapper %d; want both 143", statuses[0], statuses[1])
	}
}

// TestStdioUnansweredListHoldsNothingThroughCommand: behind
// toolguard-stdio -log, the client's own tools/list to a server that never
// answers it holds nothing: an unknown call then gets the guard's -32602
// at once, without data (no list was seen), a known call is answered, and
// the log says why the answer has no data.
func TestStdioUnansweredListHoldsNothingThroughCommand(t *testing.T) {
	var stderr fixture.SyncBuffer
	p := startProcessStderr(t, wrapped(t, helperServer(t, "silent"), "-log"), &stderr)
	p.c.handshake(t, map[string]any{})
	p.c.send(t, `{"jsonrpc":"2.0","id":"list","method":"tools/list"}`)
	p.c.send(t, callLine(1, "nope", ""))
	m := p.c.wait(t, "1")
	if m.Error == nil || m.Error.Code != -32602 || !fixture.IsGuardMessage(m.Error.Message, "nope") || m.Error.Data != nil {
		t.Errorf("the unknown call: %+v %s", m.Error, m.Result)
	}
	p.c.send(t, callLine(2, "echo", ""))
	if m := p.c.wait(t, "2"); !strings.Contains(string(m.Result), "ran echo") {
		t.Errorf("the known call: %s", m.Result)
	}
	p.in.Close()
	rest, status := p.wait(t)
	if status != 0 || len(rest) != 0 {
		t.Errorf("exit %d, the client read %q last", status, rest)
	}
	if log := stderr.String(); !strings.Contains(log, `"nope" without data.availableTools`) {
		t.Errorf("log %q", log)
	}
}

// TestStdioGuardLeavesNoGoroutine: the in-process guard in front of mcp-go
// and go-sdk leaves no goroutine behind once the stream ends.
func TestStdioGuardLeavesNoGoroutine(t *testing.T) {
	for _, mode := range []string{"mcpgo-guarded", "gosdk-guarded"} {
		before := runtime.NumGoroutine()
		c, stop := inProcess(t, mode)
		c.handshake(t, map[string]any{})
		c.unknownTool(t, "nope")
		c.request(t, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}})
		stop()
		deadline := time.Now().Add(3 * time.Second)
		for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if n := runtime.NumGoroutine() - before; n > 0 {
			buf := make([]byte, 1<<16)
			t.Errorf("%s: %d goroutines left behind\n%s", mode, n, buf[:runtime.Stack(buf, true)])
		}
	}
}
