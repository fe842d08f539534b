package toolguardgosdk

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

func TestToolsValidates(t *testing.T) {
	if _, err := Tools(nil, Options{}); err == nil || !strings.Contains(err.Error(), "h is nil") {
		t.Errorf("nil handler: %v", err)
	}
	if _, err := Tools(http.NotFoundHandler(), Options{Discover: toolguard.DiscoverOptions{TTL: -1}}); err == nil ||
		!strings.Contains(err.Error(), "DiscoverOptions.TTL") {
		t.Errorf("negative TTL: %v", err)
	}
}

// A go-sdk handler that serves admins a server with one more tool: the
// guard confirms with the list of the caller's own server, and a caller
// on a foreign Host gets go-sdk's 403, never a list.
func TestAsksAsTheCaller(t *testing.T) {
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
	tools, err := Tools(h, Options{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := toolguard.New(toolguard.Options{Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g.Handler(h))
	defer srv.Close()
	call := func(auth, host string) (int, string) {
		hdr := http.Header{"Mcp-Protocol-Version": {"2025-11-25"}, "Authorization": {auth}}
		if host != "" {
			hdr.Set("Host", host)
		}
		return fixture.Post(t, srv.URL, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"admin_tool","arguments":{}}}`, hdr)
	}
	for range 3 {
		if st, b := call("Bearer admin", ""); st != 200 || !strings.Contains(b, "ran admin_tool") {
			t.Fatalf("admin: %d %s", st, b)
		}
		if st, b := call("Bearer user", ""); st != 200 || !strings.Contains(b, `"message":"Unknown tool: admin_tool","data":{"availableTools":["echo"]`) {
			t.Fatalf("user: %d %s", st, b)
		}
		if st, b := call("Bearer admin", "evil.example"); st != 403 || strings.Contains(b, "availableTools") {
			t.Fatalf("foreign Host: %d %s", st, b)
		}
	}
}
