package toolguardgin

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
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
// without Accept passed on (with its status); the chain goes on, without
// errors.
func TestFramework(t *testing.T) {
	frameworktest.Run(t, frameworktest.Framework{
		Name:   "gin",
		Path:   "/api/mcp",
		Server: mcpgo,
		Mount: func(g *toolguard.Guard, before func(*http.Request), next http.Handler) (http.Handler, func() int) {
			e := gin.New()
			errs := 0
			e.POST("/api/mcp", Middleware(g), func(c *gin.Context) {
				if before != nil {
					before(c.Request)
				}
			}, gin.WrapH(next), func(c *gin.Context) {
				if len(c.Errors) > 0 {
					errs++
				}
			})
			return e, func() int { return errs }
		},
	})
}

// Later handlers see what the server's handler wrote in c.Writer's
// Status, Size and Written, and may not write a second answer on top.
func TestWriterStateForLaterHandlers(t *testing.T) {
	sdk, _ := mcpgo(t)
	type state struct {
		status, size int
		written      bool
	}
	var got state
	e := gin.New()
	e.POST("/api/mcp", Middleware(frameworktest.Guarded(t, sdk)), gin.WrapH(sdk), func(c *gin.Context) {
		got = state{c.Writer.Status(), c.Writer.Size(), c.Writer.Written()}
	})
	for _, name := range []string{"echo", "nope"} {
		alone := frameworktest.Serve(sdk, frameworktest.Call("/api/mcp", name))
		w := frameworktest.Serve(e, frameworktest.Call("/api/mcp", name))
		if want := (state{alone.Code, alone.Body.Len(), true}); got != want {
			t.Errorf("%s: later handler saw %+v, want %+v", name, got, want)
		}
		if name == "echo" && w.Body.String() != alone.Body.String() || name == "nope" && !strings.Contains(w.Body.String(), "Unknown tool: nope") {
			t.Errorf("%s: %d %s", name, w.Code, w.Body)
		}
	}
}
