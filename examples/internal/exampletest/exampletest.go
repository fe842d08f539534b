// Package exampletest exercises a running example: one real tool call with a
// real MCP client, and one rejection checked by the conformance checker.
package exampletest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolguard/toolguard/conformance"
	"github.com/toolguard/toolguard/internal/fixture"
)

// Start runs an example's run function on a free loopback port and returns
// its MCP URL.
func Start(t *testing.T, run func(addr string, ready func(url string)) error) string {
	t.Helper()
	urls := make(chan string, 1)
	errs := make(chan error, 1)
	go func() { errs <- run("127.0.0.1:0", func(u string) { urls <- u }) }()
	select {
	case u := <-urls:
		return u
	case err := <-errs:
		t.Fatalf("the example did not start: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the example did not start")
	}
	return ""
}

// Exercise calls tool with args through a real mcp-go client and expects
// want in its text; then calls a tool that does not exist and expects the
// guard's -32602, and the checker to find the server VERIFIED.
func Exercise(t *testing.T, url, tool string, args map[string]any, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// 2025-11-25: mcp-go v1.2.1's client, speaking 2026-07-28, cannot call
	// tools on a go-sdk v1.8.0 server (with or without the guard), so the
	// examples are exercised in the era every SDK here speaks.
	tr, err := transport.NewStreamableHTTP(url)
	if err != nil {
		t.Fatal(err)
	}
	//lint:ignore SA1019 the 2025 era, which every SDK here speaks, on purpose
	c := client.NewClient(tr, client.WithLegacyProtocolOnly())
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = "2025-11-25"
	init.Params.ClientInfo = mcp.Implementation{Name: "exampletest", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	call := mcp.CallToolRequest{}
	call.Params.Name, call.Params.Arguments = tool, args
	res, err := c.CallTool(ctx, call)
	if err != nil || res.IsError || len(res.Content) == 0 || !strings.Contains(mcp.GetTextFromContent(res.Content[0]), want) {
		t.Fatalf("calling %s: %v %+v", tool, err, res)
	}
	call.Params.Name = tool + "_typo"
	if _, err := c.CallTool(ctx, call); err == nil || !strings.Contains(err.Error(), "Unknown tool: "+tool+"_typo") {
		t.Fatalf("unknown tool: %v", err)
	}
	rep, err := conformance.CheckURL(ctx, url, conformance.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Verdict != conformance.Verified || rep.ErrorCode == nil || *rep.ErrorCode != -32602 {
		t.Fatalf("checker: %s", rep)
	}
}

// RealClients exercises url with the clients nobody here wrote: the go-sdk
// client, the TypeScript SDK client and @modelcontextprotocol/inspector-cli.
// Each lists the tools, calls tool with args (expecting want in the text)
// and calls a tool that does not exist, getting -32602 with
// data.availableTools.
func RealClients(t *testing.T, url, tool string, args map[string]any, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	v := visit{url: url, tool: tool, args: args, want: want}
	t.Run("go-sdk client", func(t *testing.T) { v.goSDK(ctx, t) })
	t.Run("TypeScript SDK client", v.typeScriptSDK)
	t.Run("inspector-cli", v.inspector)
}

// A visit is what RealClients asks of each client: list url's tools, call
// tool with args expecting want in the text, and call tool+"_typo".
type visit struct {
	url, tool string
	args      map[string]any
	want      string
}

func (v visit) goSDK(ctx context.Context, t *testing.T) {
	cs, err := gosdk.NewClient(&gosdk.Implementation{Name: "exampletest", Version: "1"}, nil).
		Connect(ctx, &gosdk.StreamableClientTransport{Endpoint: v.url}, &gosdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	list, err := cs.ListTools(ctx, nil)
	if err != nil || !hasTool(list, v.tool) {
		t.Fatalf("list: %v %+v", err, list)
	}
	res, err := cs.CallTool(ctx, &gosdk.CallToolParams{Name: v.tool, Arguments: v.args})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*gosdk.TextContent).Text, v.want) {
		t.Fatalf("call: %v %+v", err, res)
	}
	_, err = cs.CallTool(ctx, &gosdk.CallToolParams{Name: v.tool + "_typo", Arguments: map[string]any{}})
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != -32602 || !strings.Contains(string(werr.Data), `"availableTools":[`) {
		t.Fatalf("unknown tool: %v", err)
	}
}

func (v visit) typeScriptSDK(t *testing.T) {
	res := fixture.TSClient(t, v.url, v.tool, v.args)
	if !slices.Contains(res.Tools, v.tool) || res.Call.IsError || len(res.Call.Content) == 0 || !strings.Contains(res.Call.Content[0].Text, v.want) {
		t.Fatalf("list or call: %+v", res)
	}
	if res.Unknown.Code != -32602 || !strings.Contains(string(res.Unknown.Data), `"availableTools":[`) {
		t.Fatalf("unknown tool: %+v", res.Unknown)
	}
}

func (v visit) inspector(t *testing.T) {
	out, code := fixture.Inspector(t, v.url, "--method", "tools/list")
	if code != 0 || !strings.Contains(out, `"name": "`+v.tool+`"`) {
		t.Fatalf("tools/list: exit %d\n%s", code, out)
	}
	callArgs := []string{"--method", "tools/call", "--tool-name", v.tool}
	for k, a := range v.args {
		callArgs = append(callArgs, "--tool-arg", fmt.Sprintf("%s=%v", k, a))
	}
	out, code = fixture.Inspector(t, v.url, callArgs...)
	if code != 0 || !strings.Contains(out, v.want) {
		t.Fatalf("tools/call: exit %d\n%s", code, out)
	}
	// A -32602 makes the inspector exit non-zero; an isError result would not.
	out, code = fixture.Inspector(t, v.url, "--method", "tools/call", "--tool-name", v.tool+"_typo")
	if code == 0 || !strings.Contains(out, "MCP error -32602: Unknown tool: "+v.tool+"_typo") {
		t.Fatalf("unknown tool: exit %d\n%s", code, out)
	}
}

func hasTool(list *gosdk.ListToolsResult, name string) bool {
	for _, t := range list.Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}
