package toolguardechov5

import (
	"context"
	"net/http"
	"testing"

	"github.com/labstack/echo/v5"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolguard/toolguard/internal/fixture/frameworktest"
	toolguard "github.com/toolguard/toolguard/middleware"
)

// mcpgo is frameworktest's Server: a real mcp-go server (stateless) with
// two tools, and a third, "stream", that sends the caller a notification
// and waits for read before it answers.
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

// The tests every framework adapter passes: answers as through net/http,
// event streams as they come, the body whole for later handlers, a call
// without Accept passed on; echo's error handler never runs.
func TestFramework(t *testing.T) {
	frameworktest.Run(t, frameworktest.Framework{
		Name:   "echo",
		Path:   "/mcp",
		Server: mcpgo,
		Mount: func(g *toolguard.Guard, before func(*http.Request), next http.Handler) (http.Handler, func() int) {
			e := echo.New()
			handled := 0
			def := e.HTTPErrorHandler
			e.HTTPErrorHandler = func(c *echo.Context, err error) { handled++; def(c, err) }
			e.POST("/mcp", func(c *echo.Context) error {
				if before != nil {
					before(c.Request())
				}
				return echo.WrapHandler(next)(c)
			}, Middleware(g))
			return e, func() int { return handled }
		},
	})
}
