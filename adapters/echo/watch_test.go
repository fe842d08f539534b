package toolguardecho

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	toolguard "github.com/toolguard/toolguard/middleware"
)

// mcpgo is a real mcp-go server (stateless) with two tools, and a third,
// "stream", that sends the caller a notification and waits for the client
// to have read it before it answers: its answer is an event stream that
// the test reads as it comes.
func mcpgo(t *testing.T) (h http.Handler, read chan struct{}) {
	t.Helper()
	read = make(chan struct{})
	s := server.NewMCPServer("adapter", "1.0.0", server.WithToolCapabilities(true))
	for _, n := range []string{"echo", "get_weather"} {
		s.AddTool(mcp.NewTool(n, mcp.WithString("text")), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("ran " + n), nil
		})
	}
	s.AddTool(mcp.NewTool("stream"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if err := s.SendNotificationToClient(ctx, "notifications/message", map[string]any{"level": "info", "data": "first"}); err != nil {
			return nil, err
		}
		select {
		case <-read:
		case <-ctx.Done():
		}
		return mcp.NewToolResultText("ran stream"), nil
	})
	return server.NewStreamableHTTPServer(s, server.WithStateLess(true)), read
}

// guarded is the guard in front of h, asking h for the caller's list.
func guarded(t *testing.T, h http.Handler) *toolguard.Guard {
	t.Helper()
	d, err := toolguard.Discover(h, toolguard.DiscoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := toolguard.New(toolguard.Options{Tools: d})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func call(name string) *http.Request {
	r := post(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"` + name + `","arguments":{"text":"hi"}}}`)
	r.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	return r
}

func serve(h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// A known call's answer is mcp-go's, byte for byte; an unknown call gets
// mcp-go's own not-found answer translated, the same bytes as through
// net/http; echo's error handler never runs.
func TestAnswersMatchNetHTTP(t *testing.T) {
	sdk, _ := mcpgo(t)
	g := guarded(t, sdk)
	e := echo.New()
	handled := 0
	def := e.HTTPErrorHandler
	e.HTTPErrorHandler = func(err error, c echo.Context) { handled++; def(err, c) }
	e.POST("/mcp", echo.WrapHandler(sdk), Middleware(g))

	alone := serve(sdk, call("echo"))
	if w := serve(e, call("echo")); w.Code != alone.Code || w.Body.String() != alone.Body.String() || w.Header().Get("Content-Type") != alone.Header().Get("Content-Type") {
		t.Errorf("known: echo %d %s, mcp-go alone %d %s", w.Code, w.Body, alone.Code, alone.Body)
	}
	want := serve(g.Handler(sdk), call("get_wether"))
	w := serve(e, call("get_wether"))
	if !strings.Contains(want.Body.String(), `"message":"Unknown tool: get_wether","data":{"availableTools":["echo","get_weather","stream"],"suggestions":["get_weather"]}`) {
		t.Fatalf("net/http: %d %s", want.Code, want.Body)
	}
	for _, k := range []string{"Content-Type", "Content-Length"} {
		if w.Header().Get(k) != want.Header().Get(k) {
			t.Errorf("%s: echo %q, net/http %q", k, w.Header().Get(k), want.Header().Get(k))
		}
	}
	if w.Code != want.Code || w.Body.String() != want.Body.String() || handled != 0 {
		t.Errorf("unknown: echo %d %s, net/http %d %s, error handler ran %d times", w.Code, w.Body, want.Code, want.Body, handled)
	}
}

// An event stream goes out as the server writes it: the client reads the
// first event while the tool still runs.
func TestEventStreamUntouched(t *testing.T) {
	sdk, read := mcpgo(t)
	e := echo.New()
	e.POST("/mcp", echo.WrapHandler(sdk), Middleware(guarded(t, sdk)))
	srv := httptest.NewServer(e)
	defer srv.Close()
	r := call("stream")
	req, _ := http.NewRequest("POST", srv.URL+"/mcp", r.Body)
	req.Header = r.Header
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	first, err := br.ReadString('\n')
	for err == nil && first != "\n" && !strings.Contains(first, "first") {
		first, err = br.ReadString('\n')
	}
	if err != nil || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("the first event did not come while the tool ran: %v %q", err, first)
	}
	close(read)
	rest, _ := io.ReadAll(br)
	if !strings.Contains(string(rest), "ran stream") {
		t.Errorf("the answer: %q", rest)
	}
}

// A call the server decides reaches later handlers with its body whole.
func TestBodyIntactForLaterHandlers(t *testing.T) {
	sdk, _ := mcpgo(t)
	var got []byte
	e := echo.New()
	e.POST("/mcp", func(c echo.Context) error {
		got, _ = io.ReadAll(c.Request().Body)
		c.Request().Body = io.NopCloser(strings.NewReader(string(got)))
		return echo.WrapHandler(sdk)(c)
	}, Middleware(guarded(t, sdk)))
	r := call("nope")
	body, _ := io.ReadAll(r.Body)
	r = call("nope")
	if w := serve(e, r); string(got) != string(body) || !strings.Contains(w.Body.String(), "Unknown tool: nope") {
		t.Errorf("the handler read %q; answer %d %s", got, w.Code, w.Body)
	}
}
