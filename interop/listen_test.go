package interop

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolguard/toolguard/internal/fixture"
	toolguard "github.com/toolguard/toolguard/middleware"
)

// TestListChangedOnAListenStreamDropsTheList: in 2026-07-28 a changed list
// is announced on the caller's subscriptions/listen stream (there is no GET
// stream). A real mcp-go server removes a tool and says so there; the next
// unknown call is answered without the list the caller was shown before,
// which named the removed tool.
func TestListChangedOnAListenStreamDropsTheList(t *testing.T) {
	s := server.NewMCPServer("listen", "1.0.0", server.WithToolCapabilities(true))
	ok := func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("ok"), nil
	}
	s.AddTool(mcp.NewTool("echo"), ok)
	s.AddTool(mcp.NewTool("get_weather"), ok)
	g, err := toolguard.New(toolguard.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g.Handler(server.NewStreamableHTTPServer(s)))
	defer srv.Close()
	c := callerCase{tool: "get_wether", caps: `{}`}

	if _, body, names := callerList(t, srv.URL, c); strings.Join(names, ",") != "echo,get_weather" {
		t.Fatalf("list: %s", body)
	}
	if _, body := callerCall(t, srv.URL, c); !strings.Contains(body, `"availableTools":["echo","get_weather"]`) {
		t.Fatalf("before the change, the answer does not show the list: %s", body)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req := fixture.NewPost(srv.URL, `{"jsonrpc":"2.0","id":"sub","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},`+callerMeta(c)+`}}`,
		callerHeaders(c, "subscriptions/listen")).WithContext(ctx)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	waitFor := func(what string) {
		t.Helper()
		limit := time.NewTimer(30 * time.Second) // a bound on a failing run, not a wait
		defer limit.Stop()
		for {
			select {
			case l, open := <-lines:
				if !open {
					t.Fatalf("the listen stream ended before %s", what)
				}
				if strings.Contains(l, what) {
					return
				}
			case <-limit.C:
				t.Fatalf("no %s on the listen stream", what)
			}
		}
	}
	waitFor("acknowledged")
	s.DeleteTools("get_weather")
	// The guard drops the list before the bytes that end the event go on.
	waitFor("notifications/tools/list_changed")

	_, body := callerCall(t, srv.URL, c)
	if !strings.Contains(body, `"code":-32602`) || strings.Contains(body, "get_weather") {
		t.Errorf("after list_changed, the answer shows the old list: %s", body)
	}
}
