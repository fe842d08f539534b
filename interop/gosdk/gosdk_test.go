package gosdk

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolguard/toolguard/internal/fixture"
	toolguard "github.com/toolguard/toolguard/middleware"
)

// A go-sdk handler that serves admins a server with one more tool: the
// answer lists what go-sdk listed to that caller, never another's list,
// and a caller on a foreign Host gets go-sdk's 403, never a list.
func TestShowsWhatTheCallerWasListed(t *testing.T) {
	newServer := func(names ...string) *mcp.Server {
		s := mcp.NewServer(&mcp.Implementation{Name: "by-role", Version: "1"}, nil)
		for _, n := range names {
			s.AddTool(&mcp.Tool{Name: n, InputSchema: map[string]any{"type": "object"}},
				func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ran " + n}}}, nil
				})
		}
		return s
	}
	user, admin := newServer("echo"), newServer("echo", "admin_tool")
	h := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		if r.Header.Get("Authorization") == "Bearer admin" {
			return admin
		}
		return user
	}, &mcp.StreamableHTTPOptions{Stateless: true})
	g, err := toolguard.New(toolguard.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g.Handler(h))
	defer srv.Close()
	send := func(auth, host, body string) (int, string) {
		hdr := http.Header{"Mcp-Protocol-Version": {"2025-11-25"}, "Authorization": {auth}}
		if host != "" {
			hdr.Set("Host", host)
		}
		return fixture.Post(t, srv.URL, body, hdr)
	}
	call := func(auth, host string) (int, string) {
		return send(auth, host, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"admin_tool","arguments":{}}}`)
	}
	// Before anyone listed: the answer has no data.
	if st, b := call("Bearer user", ""); st != 200 || !strings.Contains(b, `"message":"Unknown tool: admin_tool. Call tools/list for the available tools."}`) {
		t.Fatalf("user before listing: %d %s", st, b)
	}
	// The admin lists; the user is never shown the admin's list.
	send("Bearer admin", "", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if st, b := call("Bearer user", ""); st != 200 || strings.Contains(b, "availableTools") {
		t.Fatalf("user after the admin listed: %d %s", st, b)
	}
	send("Bearer user", "", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	send("Bearer admin", "evil.example", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	for range 3 {
		if st, b := call("Bearer admin", ""); st != 200 || !strings.Contains(b, "ran admin_tool") {
			t.Fatalf("admin: %d %s", st, b)
		}
		if st, b := call("Bearer user", ""); st != 200 || !strings.Contains(b, `"message":"Unknown tool: admin_tool. Call tools/list for the available tools.","data":{"availableTools":["echo"]`) {
			t.Fatalf("user: %d %s", st, b)
		}
		if st, b := call("Bearer admin", "evil.example"); st != 403 || strings.Contains(b, "availableTools") {
			t.Fatalf("foreign Host: %d %s", st, b)
		}
	}
}
