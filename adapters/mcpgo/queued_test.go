package toolguardmcpgo

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolguard/toolguard/internal/fixture"
	toolguard "github.com/toolguard/toolguard/middleware"
)

// mcp-go sends the list_changed it queued for a session on that session's
// next answer, whatever the request (here a ping, then a known call): the
// guard reads it there, so an unknown call after it shows no deleted tool.
// (On a call's answer mcp-go sends it from another goroutine, which may
// lose the race with the result: the list is then kept, as the client
// was not told.)
func TestListChangedQueuedOnAnotherAnswerDropsTheList(t *testing.T) {
	for _, next := range []string{
		`{"jsonrpc":"2.0","id":3,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{}}}`,
	} {
		s := server.NewMCPServer("t", "1", server.WithToolCapabilities(true))
		for _, n := range []string{"echo", "old"} {
			s.AddTool(mcp.NewTool(n), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText("ok"), nil
			})
		}
		h := server.NewStreamableHTTPServer(s)
		tools, err := Tools(s, h, Options{})
		if err != nil {
			t.Fatal(err)
		}
		g, err := toolguard.New(toolguard.Options{Tools: tools})
		if err != nil {
			t.Fatal(err)
		}
		guarded := g.Handler(h)
		hdr := http.Header{"Mcp-Protocol-Version": {"2025-06-18"}}
		post := func(body string) string { return fixture.Send(guarded, body, hdr).Body.String() }
		hdr.Set("Mcp-Session-Id", fixture.Send(guarded, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, nil).Header().Get("Mcp-Session-Id"))
		post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		post(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
		if got := post(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"nope","arguments":{}}}`); !strings.Contains(got, `"availableTools":["echo","old"]`) {
			t.Fatalf("the list was not kept: %s", got)
		}
		// Each change queues a list_changed for the session; the client
		// is told when the next answer carries it. Until then the list
		// stays (the client was not told either); then it goes.
		told := false
		for i := 0; i < 20 && !told; i++ {
			if i == 0 {
				s.DeleteTools("old")
			} else {
				s.AddTool(mcp.NewTool(fmt.Sprintf("new_%d", i)), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return mcp.NewToolResultText("ok"), nil
				})
			}
			told = strings.Contains(post(next), "notifications/tools/list_changed")
			if got := post(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"nope","arguments":{}}}`); strings.Contains(got, "availableTools") == told {
				t.Fatalf("list_changed on %.50s… told the client %v: %s", next, told, got)
			}
		}
		if !told {
			t.Fatalf("mcp-go never sent the queued list_changed on %.50s…", next)
		}
	}
}
