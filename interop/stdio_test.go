package interop

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolguard/toolguard/conformance"
	"github.com/toolguard/toolguard/internal/fixture"
	"github.com/toolguard/toolguard/internal/proc"
	toolguard "github.com/toolguard/toolguard/middleware"
)

// The commands under test, each built once per test binary from this
// repository (the interop module replaces the root module with ../), when
// a test first needs it.
var (
	buildMu   sync.Mutex
	buildDir  string
	built     = map[string]error{}
	buildOnce sync.Once
	dirErr    error
)

// command returns the path of a freshly built cmd/NAME.
func command(t testing.TB, name string) string {
	t.Helper()
	buildOnce.Do(func() { buildDir, dirErr = os.MkdirTemp("", "toolguard-cmd-") })
	if dirErr != nil {
		t.Fatal(dirErr)
	}
	buildMu.Lock()
	defer buildMu.Unlock()
	err, ok := built[name]
	if !ok {
		out, berr := exec.Command("go", "build", "-o", filepath.Join(buildDir, name), "github.com/toolguard/toolguard/cmd/"+name).CombinedOutput()
		if berr != nil {
			err = fmt.Errorf("go build %s: %v\n%s", name, berr, out)
		}
		built[name] = err
	}
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(buildDir, name)
}

// wrapped returns argv behind toolguard-stdio.
func wrapped(t testing.TB, argv []string, flags ...string) []string {
	return append(append(append([]string{command(t, "toolguard-stdio")}, flags...), "--"), argv...)
}

// publishedServer returns the argv that starts a published MCP server from
// npm (2026.8.31) on stdio.
func publishedServer(t testing.TB, name string) []string {
	t.Helper()
	main := filepath.Join(fixture.NodeDir(t), "node_modules", "@modelcontextprotocol", name, "dist", "index.js")
	switch name {
	case "server-everything":
		return []string{"node", main, "stdio"}
	case "server-memory":
		return []string{"env", "MEMORY_FILE_PATH=" + filepath.Join(t.TempDir(), "memory.jsonl"), "node", main}
	case "server-filesystem":
		return []string{"node", main, t.TempDir()}
	case "server-sequential-thinking":
		return []string{"node", main}
	}
	t.Fatalf("no published server %s", name)
	return nil
}

// ---- a line-delimited JSON-RPC client for the tests ----

type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

type rpcMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *rpcError       `json:"error"`
}

// lineClient speaks line-delimited JSON-RPC to a server (or to a guard in
// front of one), the way a client does.
type lineClient struct {
	w       io.Writer
	lines   chan string // every line read, in order
	nextID  int
	seen    []string      // lines read while waiting for other answers
	timeout time.Duration // for one answer; default 20s
}

func newLineClient(w io.Writer, r io.Reader) *lineClient {
	c := &lineClient{w: w, lines: make(chan string, 1024)}
	go func() {
		defer close(c.lines)
		br := bufio.NewReaderSize(r, 1<<20)
		for {
			line, err := br.ReadString('\n')
			if line != "" {
				c.lines <- line
			}
			if err != nil {
				return
			}
		}
	}()
	return c
}

// startLineClient starts argv and connects a lineClient to it. The process
// is stopped when the test ends.
func startLineClient(t testing.TB, argv []string) (*lineClient, *exec.Cmd) {
	t.Helper()
	cmd, in, out := fixture.StartPiped(t, argv)
	return newLineClient(in, out), cmd
}

func (c *lineClient) send(t testing.TB, line string) {
	t.Helper()
	if _, err := io.WriteString(c.w, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

// wait returns the answer to id, keeping every other line in c.seen.
func (c *lineClient) wait(t testing.TB, id string) rpcMessage {
	t.Helper()
	_, m := c.waitLine(t, id)
	return m
}

// waitLine is wait with the line that answers id, as the client read it.
func (c *lineClient) waitLine(t testing.TB, id string) (string, rpcMessage) {
	t.Helper()
	for i, line := range c.seen { // answered while waiting for another
		var m rpcMessage
		if json.Unmarshal([]byte(line), &m) == nil && string(m.ID) == id && m.Method == "" {
			c.seen = slices.Delete(c.seen, i, i+1)
			return line, m
		}
	}
	d := c.timeout
	if d == 0 {
		d = 20 * time.Second
	}
	timeout := time.After(d)
	for {
		select {
		case line, ok := <-c.lines:
			if !ok {
				t.Fatalf("the server closed its output before answering %s", id)
			}
			var m rpcMessage
			if json.Unmarshal([]byte(line), &m) == nil && string(m.ID) == id && m.Method == "" {
				return line, m
			}
			c.seen = append(c.seen, line)
		case <-timeout:
			t.Fatalf("no answer to %s within %v", id, d)
		}
	}
}

// request sends a request and returns its answer.
func (c *lineClient) request(t testing.TB, method string, params any) rpcMessage {
	t.Helper()
	c.nextID++
	id := fmt.Sprint(c.nextID)
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.nextID, "method": method, "params": params})
	c.send(t, string(b))
	return c.wait(t, id)
}

// handshake runs the 2025-11-25 initialize exchange.
func (c *lineClient) handshake(t testing.TB, capabilities map[string]any) {
	t.Helper()
	m := c.request(t, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": capabilities,
		"clientInfo": map[string]any{"name": "interop", "version": "1"}})
	if m.Error != nil {
		t.Fatalf("initialize: %+v", m.Error)
	}
	c.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// tools lists every tool, following nextCursor.
func (c *lineClient) tools(t testing.TB) []string {
	t.Helper()
	var names []string
	params := map[string]any{}
	for range 50 {
		m := c.request(t, "tools/list", params)
		var res struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
			NextCursor string `json:"nextCursor"`
		}
		if m.Error != nil || json.Unmarshal(m.Result, &res) != nil {
			t.Fatalf("tools/list: %+v %s", m.Error, m.Result)
		}
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
		}
		if res.NextCursor == "" {
			slices.Sort(names)
			return names
		}
		params = map[string]any{"cursor": res.NextCursor}
	}
	t.Fatal("tools/list: too many pages")
	return nil
}

// unknownTool calls name, which must not exist, and returns the -32602
// error and its data.availableTools.
func (c *lineClient) unknownTool(t testing.TB, name string) (*rpcError, []string) {
	t.Helper()
	m := c.request(t, "tools/call", map[string]any{"name": name, "arguments": map[string]any{}})
	if m.Error == nil {
		t.Fatalf("tools/call %s: a result, not an error: %s", name, m.Result)
	}
	var data struct {
		AvailableTools []string `json:"availableTools"`
	}
	json.Unmarshal(m.Error.Data, &data)
	return m.Error, data.AvailableTools
}

// ---- real servers nobody here wrote, over stdio ----

func checkCommand(t *testing.T, argv []string) conformance.Report {
	t.Helper()
	rep, err := conformance.CheckCommand(context.Background(), argv, conformance.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestPublishedServersVerifiedThroughStdioCommand: server-everything,
// server-memory, server-filesystem and server-sequential-thinking from npm
// (2026.8.31) are OBSERVED_RISK alone (their SDK answers an unknown tool
// with isError) and VERIFIED through toolguard-stdio, with
// data.availableTools equal to the session's own tools/list; the client
// never sees the guard's own requests.
func TestPublishedServersVerifiedThroughStdioCommand(t *testing.T) {
	for _, name := range []string{"server-everything", "server-memory", "server-filesystem", "server-sequential-thinking"} {
		t.Run(name, func(t *testing.T) {
			argv := publishedServer(t, name)
			alone := checkCommand(t, argv)
			if alone.Verdict != conformance.ObservedRisk || alone.Category != conformance.ResultIsError {
				t.Errorf("alone: %s, want OBSERVED_RISK result_is_error", alone)
			}
			through := checkCommand(t, wrapped(t, argv))
			if through.Verdict != conformance.Verified || through.ErrorCode == nil || *through.ErrorCode != -32602 {
				t.Errorf("through toolguard-stdio: %s, want VERIFIED -32602", through)
			}
			if through.Tools == 0 || through.Tools != alone.Tools {
				t.Errorf("through toolguard-stdio the checker saw %d tools, alone %d", through.Tools, alone.Tools)
			}

			c, _ := startLineClient(t, wrapped(t, argv))
			c.handshake(t, map[string]any{})
			names := c.tools(t)
			rpcErr, available := c.unknownTool(t, "__made_up__")
			if rpcErr.Code != -32602 || !fixture.IsGuardMessage(rpcErr.Message, "__made_up__") {
				t.Errorf("unknown tool: %+v", rpcErr)
			}
			if len(available) == 0 || !slices.Equal(available, names) {
				t.Errorf("availableTools %q, tools/list %q", available, names)
			}
			for _, line := range c.seen {
				if strings.Contains(line, "toolguard-") {
					t.Errorf("the client saw the guard's own traffic: %s", line)
				}
			}
		})
	}
}

// TestStdioTranslatesAfterUnfinishedLines: after client lines that leave
// a JSON value unfinished, server-everything (the TypeScript SDK, which
// reads lines) answers the next unknown call not found, and the guard
// translates it with the list the client was given.
func TestStdioTranslatesAfterUnfinishedLines(t *testing.T) {
	c, _ := startLineClient(t, wrapped(t, publishedServer(t, "server-everything")))
	c.handshake(t, map[string]any{})
	names := c.tools(t)
	for _, junk := range []string{"{", `{"jsonrpc":"2.0","id":99,"method":`} {
		c.send(t, junk)
		rpcErr, available := c.unknownTool(t, "__made_up__")
		if rpcErr.Code != -32602 || !slices.Equal(available, names) {
			t.Errorf("after %q: %+v, availableTools %q (tools/list %q)", junk, rpcErr, available, names)
		}
	}
}

// ---- mcp-go and go-sdk stdio servers behind the in-process guard ----

// TestStdioHelperServer is not a test: run by the tests below as a
// separate process (TOOLGUARD_STDIO_SERVER set), it serves a real SDK
// server on its standard input and output, behind the in-process guard or
// alone, and exits.
func TestStdioHelperServer(t *testing.T) {
	if os.Getenv("TOOLGUARD_STDIO_RELAY") != "" {
		os.Exit(bareRelay(os.Args[len(os.Args)-1]))
	}
	mode := os.Getenv("TOOLGUARD_STDIO_SERVER")
	if mode == "" {
		return
	}
	if err := serveStdio(context.Background(), mode, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "helper server:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// bareRelay runs the helper server of mode as a child and only copies
// bytes both ways, as toolguard-stdio does without reading them: the
// baseline of toolguard-stdio's cost.
func bareRelay(mode string) int {
	exe, err := os.Executable()
	if err != nil {
		return 1
	}
	cmd := exec.Command(exe, "-test.run=^TestStdioHelperServer$")
	cmd.Env = append(os.Environ(), "TOOLGUARD_STDIO_RELAY=", "TOOLGUARD_STDIO_SERVER="+mode)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return 1
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 1
	}
	if err := cmd.Start(); err != nil {
		return 1
	}
	go func() {
		io.Copy(in, os.Stdin)
		in.Close()
	}()
	io.Copy(os.Stdout, out)
	if cmd.Wait() != nil {
		return 1
	}
	return 0
}

// serveStdio serves one SDK on in and out. mode is "mcpgo" or "gosdk",
// with "-guarded" for the in-process guard in front.
func serveStdio(ctx context.Context, mode string, in io.Reader, out io.Writer) error {
	sdk, guarded := strings.CutSuffix(mode, "-guarded")
	var r io.ReadCloser = io.NopCloser(in)
	var w io.WriteCloser = nopWriteCloser{out}
	if guarded {
		g, err := toolguard.NewStdio(in, out, toolguard.StdioOptions{})
		if err != nil {
			return err
		}
		r, w = g.Reader(), g.Writer()
	}
	switch sdk {
	case "mcpgo":
		return server.NewStdioServer(newMCPGo("echo", "add")).Listen(ctx, r, w)
	case "crashy":
		// mcp-go, plus a tool that dies in the middle of writing a line.
		s := newMCPGo("echo", "add")
		s.AddTool(mcp.NewTool("crash"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			io.WriteString(out, `{"jsonrpc":"2.0","id":`)
			os.Exit(3)
			return nil, nil
		})
		return server.NewStdioServer(s).Listen(ctx, r, w)
	case "silent":
		return silentServer(r, w)
	case "gosdk":
		err := newGoSDK("echo", "add").Run(ctx, &gosdk.IOTransport{Reader: r, Writer: w})
		if err == io.EOF {
			err = nil
		}
		return err
	}
	return fmt.Errorf("unknown mode %q", mode)
}

// silentServer answers initialize and tools/call (echo runs; any other
// name gets the TypeScript SDK v1's not-found answer, an isError result)
// and never answers tools/list.
func silentServer(r io.Reader, w io.Writer) error {
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadBytes('\n')
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if json.Unmarshal(line, &m) == nil && m.ID != nil {
			var res string
			switch m.Method {
			case "initialize":
				res = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"silent","version":"1"}}`
			case "tools/call":
				res = `{"content":[{"type":"text","text":"ran ` + m.Params.Name + `"}]}`
				if m.Params.Name != "echo" {
					text, _ := json.Marshal("MCP error -32602: Tool " + m.Params.Name + " not found")
					res = `{"content":[{"type":"text","text":` + string(text) + `}],"isError":true}`
				}
			}
			if res != "" {
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", m.ID, res)
			}
		}
		if err != nil {
			return nil
		}
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// helperServer returns the argv that runs serveStdio(mode) in a process.
func helperServer(t testing.TB, mode string) []string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{"env", "TOOLGUARD_STDIO_SERVER=" + mode, exe, "-test.run=^TestStdioHelperServer$"}
}

// TestSDKServersBehindStdioGuard: mcp-go v1.2.1 and go-sdk v1.8.0 stdio
// servers answer the checker with -32602 alone and behind the in-process
// guard, and behind it the answer lists the tools.
func TestSDKServersBehindStdioGuard(t *testing.T) {
	for _, sdk := range []string{"mcpgo", "gosdk"} {
		t.Run(sdk, func(t *testing.T) {
			for _, mode := range []string{sdk, sdk + "-guarded"} {
				rep := checkCommand(t, helperServer(t, mode))
				if rep.Verdict != conformance.Verified || rep.ErrorCode == nil || *rep.ErrorCode != -32602 || rep.Tools != 2 {
					t.Errorf("%s: %s (%d tools), want VERIFIED -32602", mode, rep, rep.Tools)
				}
			}
			// In-process, over pipes: the tool list in the answer.
			c, stop := inProcess(t, sdk+"-guarded")
			defer stop()
			c.handshake(t, map[string]any{})
			names := c.tools(t)
			rpcErr, available := c.unknownTool(t, "ech")
			if rpcErr.Code != -32602 || !slices.Equal(available, []string{"add", "echo"}) || !slices.Equal(names, available) {
				t.Errorf("unknown tool: %+v, availableTools %q, tools %q", rpcErr, available, names)
			}
			m := c.request(t, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi"}})
			if m.Error != nil || !strings.Contains(string(m.Result), "echo:hi") {
				t.Errorf("known tool: %+v %s", m.Error, m.Result)
			}
		})
	}
}

// inProcess serves mode on pipes in this process and returns a client for
// it; stop closes the client's side and waits for the server to return.
func inProcess(t testing.TB, mode string) (c *lineClient, stop func()) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		served <- serveStdio(ctx, mode, inR, outW)
		outW.Close()
	}()
	c = newLineClient(inW, outR)
	return c, func() {
		inW.Close()
		select {
		case err := <-served:
			if err != nil && err != context.Canceled {
				t.Errorf("%s: %v", mode, err)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("%s did not return after its input closed", mode)
		}
		cancel()
		for range c.lines {
		}
	}
}

// TestPipelinedHandshakeBehindStdioGuard: a client that sends initialize,
// notifications/initialized and a call in one write, before any answer (as
// clients piping every line do): the server looks the tool up, and behind
// the guard its not-found answer is translated, without data (no list
// seen yet); once the client has listed, with the tools.
func TestPipelinedHandshakeBehindStdioGuard(t *testing.T) {
	const (
		initialize  = `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"interop","version":"1"}}}`
		initialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
		call        = `{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"ech","arguments":{}}}`
	)
	check := func(t *testing.T, c *lineClient, guarded bool) {
		t.Helper()
		c.send(t, initialize+"\n"+initialized+"\n"+call)
		if m := c.wait(t, `"init"`); m.Error != nil {
			t.Fatalf("initialize: %+v", m.Error)
		}
		m := c.wait(t, `"c1"`)
		if m.Error == nil || m.Error.Code != -32602 {
			t.Errorf("a call in the same write as the handshake: %+v %s, want -32602 (the tool looked up)", m.Error, m.Result)
		} else if guarded != fixture.IsGuardMessage(m.Error.Message, "ech") || m.Error.Data != nil && guarded {
			t.Errorf("a call in the same write as the handshake: %+v (guarded %v)", m.Error, guarded)
		}
		if names := c.tools(t); !slices.Equal(names, []string{"add", "echo"}) {
			t.Fatalf("tools/list: %q", names)
		}
		rpcErr, available := c.unknownTool(t, "ech")
		if rpcErr.Code != -32602 || guarded != slices.Equal(available, []string{"add", "echo"}) {
			t.Errorf("after the pipelined handshake: %+v, availableTools %q (guarded %v)", rpcErr, available, guarded)
		}
	}
	for _, sdk := range []string{"mcpgo", "gosdk"} {
		for _, mode := range []string{sdk, sdk + "-guarded"} {
			t.Run(mode, func(t *testing.T) {
				c, stop := inProcess(t, mode)
				defer stop()
				check(t, c, mode != sdk)
			})
		}
	}
}

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
	if _, err := proc.All(); err != nil {
		t.Skip("finds the processes of a session in /proc:", err)
	}
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
