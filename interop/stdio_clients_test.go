package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolguard/toolguard/internal/fixture"
)

// tsStdioResult is what testdata/node/stdio-client.mjs prints.
type tsStdioResult struct {
	Tools   []string        `json:"tools"`
	Call    json.RawMessage `json:"call"`
	Unknown struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
		Result  json.RawMessage `json:"result"`
	} `json:"unknown"`
	LongRunning json.RawMessage `json:"longRunning"`
	Progress    []float64       `json:"progress"`
	Sampling    json.RawMessage `json:"sampling"`
	Elicitation json.RawMessage `json:"elicitation"`
	Seen        struct {
		Sampling    int `json:"sampling"`
		Elicitation int `json:"elicitation"`
	} `json:"seen"`
}

// tsStdioClient runs the TypeScript SDK client (StdioClientTransport)
// against the server argv.
func tsStdioClient(t *testing.T, argv []string, tool string, args map[string]any, everything bool) tsStdioResult {
	t.Helper()
	cfg, _ := json.Marshal(map[string]any{"command": argv[0], "args": argv[1:], "tool": tool, "toolArgs": args, "everything": everything})
	cmd := exec.Command("node", filepath.Join(fixture.NodeDir(t), "stdio-client.mjs"), string(cfg))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("TypeScript stdio client: %v", err)
	}
	var res tsStdioResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("TypeScript stdio client printed %q: %v", out, err)
	}
	return res
}

func availableTools(t *testing.T, data json.RawMessage) []string {
	t.Helper()
	var d struct {
		AvailableTools []string `json:"availableTools"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("data %s: %v", data, err)
	}
	return d.AvailableTools
}

func tsFixture(t *testing.T) []string { return fixture.StdioCommand(t) }

func TestTypeScriptClientThroughStdioCommand(t *testing.T) {
	args := map[string]any{"text": "hi"}
	alone := tsStdioClient(t, tsFixture(t), "echo", args, false)
	through := tsStdioClient(t, wrapped(t, tsFixture(t)), "echo", args, false)
	if !slices.Equal(through.Tools, []string{"add", "echo"}) || !slices.Equal(through.Tools, alone.Tools) {
		t.Errorf("tools %q, alone %q", through.Tools, alone.Tools)
	}
	if !bytes.Equal(through.Call, alone.Call) || !strings.Contains(string(through.Call), "echo:hi") {
		t.Errorf("known call: %s, alone %s", through.Call, alone.Call)
	}
	if !strings.Contains(string(alone.Unknown.Result), `"isError":true`) {
		t.Errorf("alone, the TypeScript server answers isError: %+v", alone.Unknown)
	}
	if through.Unknown.Code != -32602 || !strings.Contains(through.Unknown.Message, "Unknown tool: echo_typo") ||
		!slices.Equal(availableTools(t, through.Unknown.Data), []string{"add", "echo"}) {
		t.Errorf("unknown tool through the command: %+v", through.Unknown)
	}
}

// TestProgressSamplingElicitationThroughStdioCommand: server-everything
// reports progress and sends sampling and elicitation requests to the
// client; all of it works through the command as without it.
func TestProgressSamplingElicitationThroughStdioCommand(t *testing.T) {
	argv := publishedServer(t, "server-everything")
	args := map[string]any{"message": "hi"}
	alone := tsStdioClient(t, argv, "echo", args, true)
	through := tsStdioClient(t, wrapped(t, argv), "echo", args, true)
	// The tools that need sampling and elicitation are registered after
	// initialization, for clients that declare them: the guard's list,
	// asked as the caller, has them.
	for _, name := range []string{"trigger-sampling-request", "trigger-elicitation-request"} {
		if !slices.Contains(through.Tools, name) {
			t.Errorf("tools/list lacks %s: %q", name, through.Tools)
		}
	}
	if !slices.Equal(through.Tools, alone.Tools) {
		t.Errorf("tools %q, alone %q", through.Tools, alone.Tools)
	}
	if through.Unknown.Code != -32602 || !slices.Equal(availableTools(t, through.Unknown.Data), alone.Tools) {
		t.Errorf("unknown tool: %+v", through.Unknown)
	}
	// The server sends its last progress notification right before the
	// result, so the client may count it or not, with or without the guard.
	for _, p := range [][]float64{through.Progress, alone.Progress} {
		if len(p) < 2 || !slices.Equal(p[:2], []float64{1, 2}) || len(p) > 3 || (len(p) == 3 && p[2] != 3) {
			t.Errorf("progress %v (through the command %v, alone %v), want 1, 2 and perhaps 3", p, through.Progress, alone.Progress)
		}
	}
	for name, pair := range map[string][2]json.RawMessage{
		"known call":   {through.Call, alone.Call},
		"long running": {through.LongRunning, alone.LongRunning},
		"sampling":     {through.Sampling, alone.Sampling},
		"elicitation":  {through.Elicitation, alone.Elicitation},
	} {
		if !bytes.Equal(pair[0], pair[1]) || len(pair[0]) == 0 || strings.Contains(string(pair[0]), `"isError":true`) {
			t.Errorf("%s: %s\nalone: %s", name, pair[0], pair[1])
		}
	}
	if through.Seen.Sampling != 1 || through.Seen.Elicitation != 1 {
		t.Errorf("the client answered %d sampling and %d elicitation requests, want 1 each", through.Seen.Sampling, through.Seen.Elicitation)
	}
	if !strings.Contains(string(through.Sampling), "sampled by the test client") || !strings.Contains(string(through.Elicitation), "Ada Lovelace") {
		t.Errorf("the client's answers did not reach the server: %s %s", through.Sampling, through.Elicitation)
	}
}

// tap keeps a copy of every byte read through it.
type tap struct {
	r   io.Reader
	mu  sync.Mutex
	buf bytes.Buffer
}

func (t *tap) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	t.mu.Lock()
	t.buf.Write(p[:n])
	t.mu.Unlock()
	return n, err
}

func (t *tap) lines() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Split(t.buf.String(), "\n")
}

func TestMCPGoClientThroughStdioCommand(t *testing.T) {
	argv := wrapped(t, tsFixture(t))
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	wire := &tap{r: out}
	c := mcpgoclient.NewClient(transport.NewIO(wire, in, io.NopCloser(strings.NewReader(""))))
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "interop", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	list, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	if slices.Sort(names); !slices.Equal(names, []string{"add", "echo"}) {
		t.Errorf("tools %q", names)
	}
	call := mcp.CallToolRequest{}
	call.Params.Name = "echo"
	call.Params.Arguments = map[string]any{"text": "hi"}
	res, err := c.CallTool(ctx, call)
	if err != nil || res.IsError || mcp.GetTextFromContent(res.Content[0]) != "echo:hi" {
		t.Errorf("known call: %v %+v", err, res)
	}
	call.Params.Name = "ech0"
	_, err = c.CallTool(ctx, call)
	if !errors.Is(err, mcp.ErrInvalidParams) || !strings.Contains(err.Error(), "Unknown tool: ech0") {
		t.Errorf("unknown tool: %v", err)
	}
	var found bool
	for _, line := range wire.lines() {
		var m rpcMessage
		if json.Unmarshal([]byte(line), &m) == nil && m.Error != nil && m.Error.Code == -32602 {
			found = slices.Equal(availableTools(t, m.Error.Data), []string{"add", "echo"})
		}
	}
	if !found {
		t.Errorf("no -32602 with availableTools [add echo] on the wire:\n%s", strings.Join(wire.lines(), "\n"))
	}
	c.Close()
	in.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("toolguard-stdio: %v", err)
	}
}

func TestGoSDKClientThroughStdioCommand(t *testing.T) {
	argv := wrapped(t, tsFixture(t))
	client := gosdk.NewClient(&gosdk.Implementation{Name: "interop", Version: "1"}, nil)
	ctx := context.Background()
	cs, err := client.Connect(ctx, &gosdk.CommandTransport{Command: exec.Command(argv[0], argv[1:]...)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	if slices.Sort(names); !slices.Equal(names, []string{"add", "echo"}) {
		t.Errorf("tools %q", names)
	}
	out, err := cs.CallTool(ctx, &gosdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil || out.IsError || out.Content[0].(*gosdk.TextContent).Text != "echo:hi" {
		t.Errorf("known call: %v %+v", err, out)
	}
	_, err = cs.CallTool(ctx, &gosdk.CallToolParams{Name: "ech0", Arguments: map[string]any{}})
	var werr *gosdkError
	if !errors.As(err, &werr) || werr.Code != -32602 || !reflect.DeepEqual(availableTools(t, werr.Data), []string{"add", "echo"}) {
		t.Errorf("unknown tool: %v", err)
	}
}

// inspectorStdio runs inspector-cli against a stdio command.
func inspectorStdio(t *testing.T, argv []string, args ...string) (string, int) {
	t.Helper()
	// inspector-cli takes the command before its options and the
	// command's own arguments after "--".
	full := append(append([]string{"index.js", argv[0]}, args...), append([]string{"--"}, argv[1:]...)...)
	cmd := exec.Command("node", full...)
	cmd.Dir = filepath.Join(fixture.NodeDir(t), "node_modules", "@modelcontextprotocol", "inspector-cli", "build")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(out), ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

func TestInspectorThroughStdioCommand(t *testing.T) {
	argv := wrapped(t, tsFixture(t))
	out, code := inspectorStdio(t, argv, "--method", "tools/list")
	if code != 0 || !strings.Contains(out, `"name": "echo"`) || !strings.Contains(out, `"name": "add"`) {
		t.Errorf("tools/list: exit %d\n%s", code, out)
	}
	known, code := inspectorStdio(t, argv, "--method", "tools/call", "--tool-name", "echo", "--tool-arg", "text=hi")
	alone, _ := inspectorStdio(t, tsFixture(t), "--method", "tools/call", "--tool-name", "echo", "--tool-arg", "text=hi")
	if code != 0 || known != alone || !strings.Contains(known, "echo:hi") {
		t.Errorf("known call: exit %d\n%s\nalone:\n%s", code, known, alone)
	}
	out, code = inspectorStdio(t, argv, "--method", "tools/call", "--tool-name", "ech0")
	if code == 0 || !strings.Contains(out, "MCP error -32602: Unknown tool: ech0") {
		t.Errorf("unknown tool: exit %d\n%s", code, out)
	}
}
