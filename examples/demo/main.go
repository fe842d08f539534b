// Command demo shows toolguard at work on this machine, with nothing but Go:
// it starts two MCP servers on loopback, one that answers an unknown tool
// with an ordinary result marked isError (as the TypeScript and Python SDKs
// do) and a real mark3labs/mcp-go server; serves each without and with the
// guard; runs the conformance checker on all four; and prints the verdicts
// and what a client sees for a mistyped tool name.
//
//	go run ./demo          (from the examples folder)
//	go run -C examples ./demo   (from the repository root)
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	toolguardmcpgo "github.com/toolguard/toolguard/adapters/mcpgo"
	"github.com/toolguard/toolguard/conformance"
	toolguard "github.com/toolguard/toolguard/middleware"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		log.Fatal(err)
	}
}

var tools = []string{"get_weather", "search_docs"}

const typo = "get_wether"

type endpoint struct {
	server, guard string
	url           string
}

func run(ctx context.Context, w io.Writer) error {
	// The isError server, alone and behind the guard. The guard has no tool
	// set: the server decides every call, and the list in the answer is
	// the server's answer to the client's own tools/list, read as it
	// passed, as for any server in any language.
	isErr := isErrorServer(tools)
	guardIsErr, err := toolguard.New(toolguard.Options{})
	if err != nil {
		return err
	}

	// A real mcp-go server, alone and behind the guard.
	s := server.NewMCPServer("demo", "1.0.0", server.WithToolCapabilities(true))
	for _, name := range tools {
		s.AddTool(mcp.NewTool(name, mcp.WithString("q")), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(name + " ran"), nil
		})
	}
	mcpgo := server.NewStreamableHTTPServer(s, server.WithStateLess(true), server.WithEndpointPath("/"))
	mcpgoTools, err := toolguardmcpgo.Tools(s, mcpgo, toolguardmcpgo.Options{})
	if err != nil {
		return err
	}
	guardMCPGo, err := toolguard.New(toolguard.Options{Tools: mcpgoTools})
	if err != nil {
		return err
	}

	endpoints := []endpoint{
		{server: "isError server (like TypeScript, Python)", guard: "without guard"},
		{server: "isError server (like TypeScript, Python)", guard: "with guard"},
		{server: "mcp-go v1.2.1", guard: "without guard"},
		{server: "mcp-go v1.2.1", guard: "with guard"},
	}
	for i, h := range []http.Handler{isErr, guardIsErr.Handler(isErr), mcpgo, guardMCPGo.Handler(mcpgo)} {
		srv := httptest.NewServer(h)
		defer srv.Close()
		endpoints[i].url = srv.URL
	}

	fmt.Fprintf(w, "toolguard demo: how four local MCP servers answer a call to a tool they do not have\n\n")
	fmt.Fprintf(w, "1. The checker (error_taxonomy: VERIFIED is a JSON-RPC error, OBSERVED_RISK anything else)\n\n")
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	fmt.Fprintln(tw, "server\twithout guard\twith guard\t")
	for i := 0; i < len(endpoints); i += 2 {
		var cells []string
		for _, ep := range endpoints[i : i+2] {
			rep, err := conformance.CheckURL(ctx, ep.url, conformance.Options{})
			if err != nil {
				return err
			}
			cell := string(rep.Verdict)
			if rep.Category != "" {
				cell += " " + string(rep.Category)
			}
			if rep.ErrorCode != nil {
				cell += fmt.Sprintf(" (%d)", *rep.ErrorCode)
			}
			cells = append(cells, cell)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t\n", endpoints[i].server, cells[0], cells[1])
	}
	tw.Flush()

	fmt.Fprintf(w, "\n2. On the wire: tools/call %q (a typo of get_weather), protocol 2025-11-25\n", typo)
	for _, ep := range endpoints {
		status, body, err := callOnce(ctx, ep.url, typo)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "\n%s, %s:\n  HTTP %d  %s\n", ep.server, ep.guard, status, body)
	}
	fmt.Fprintf(w, "\nWith the guard, both answer the protocol error the MCP spec asks for, listing the tools\nthe caller can call and the nearest name. Known tools and everything else pass through untouched.\n")
	return nil
}

// callOnce initializes a session, lists its tools and calls name, returning the reply to the
// call (the data of an event stream, if the server streams).
func callOnce(ctx context.Context, url, name string) (int, string, error) {
	session := ""
	post := func(body string) (*http.Response, []byte, error) {
		req, err := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(body))
		if err != nil {
			return nil, nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp, b, err
	}
	resp, _, err := post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"demo","version":"1"}}}`)
	if err != nil {
		return 0, "", err
	}
	session = resp.Header.Get("Mcp-Session-Id")
	if _, _, err := post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
		return 0, "", err
	}
	// The client lists its tools first, as real clients do: the guard
	// reads the answer as it passes, for the list in its own answer.
	if _, _, err := post(`{"jsonrpc":"2.0","id":"list","method":"tools/list"}`); err != nil {
		return 0, "", err
	}
	q, _ := json.Marshal(name)
	resp, b, err := post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":` + string(q) + `,"arguments":{}}}`)
	if err != nil {
		return 0, "", err
	}
	if i := bytes.Index(b, []byte("data: ")); i >= 0 && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b = b[i+len("data: "):]
	}
	return resp.StatusCode, strings.TrimSpace(string(b)), nil
}
