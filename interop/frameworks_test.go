package interop

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	echov4 "github.com/labstack/echo/v4"
	echov5 "github.com/labstack/echo/v5"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	toolguardecho "github.com/toolguard/toolguard/adapters/echo"
	toolguardechov5 "github.com/toolguard/toolguard/adapters/echov5"
	toolguardgin "github.com/toolguard/toolguard/adapters/gin"
	"github.com/toolguard/toolguard/interop/internal/frameworktest"
	toolguard "github.com/toolguard/toolguard/middleware"
)

// frameworks are the web-framework adapters, each mounted as its users
// mount it, in front of streamingMCPGo.
var frameworks = []frameworktest.Framework{
	{Name: "echo", Path: "/mcp", Server: streamingMCPGo,
		Mount: func(g *toolguard.Guard, next http.Handler) (http.Handler, func() int) {
			e := echov4.New()
			handled := 0
			def := e.HTTPErrorHandler
			e.HTTPErrorHandler = func(err error, c echov4.Context) { handled++; def(err, c) }
			e.Any("/mcp", echov4.WrapHandler(next), toolguardecho.Middleware(g))
			return e, func() int { return handled }
		}},
	{Name: "echo/v5", Path: "/mcp", Server: streamingMCPGo,
		Mount: func(g *toolguard.Guard, next http.Handler) (http.Handler, func() int) {
			e := echov5.New()
			handled := 0
			def := e.HTTPErrorHandler
			e.HTTPErrorHandler = func(c *echov5.Context, err error) { handled++; def(c, err) }
			e.Any("/mcp", echov5.WrapHandler(next), toolguardechov5.Middleware(g))
			return e, func() int { return handled }
		}},
	{Name: "gin", Path: "/api/mcp", Server: streamingMCPGo,
		Mount: func(g *toolguard.Guard, next http.Handler) (http.Handler, func() int) {
			gin.SetMode(gin.ReleaseMode)
			e := gin.New()
			errs := 0
			e.Any("/api/mcp", toolguardgin.Middleware(g), gin.WrapH(next), func(c *gin.Context) {
				if len(c.Errors) > 0 {
					errs++
				}
			})
			return e, func() int { return errs }
		}},
}

// streamingMCPGo is frameworktest's Server: a real mcp-go server
// (stateless) with the tools "echo" and "get_weather", and a third,
// "stream", that sends the caller a notification and waits for read before
// it answers.
func streamingMCPGo(t *testing.T) (h http.Handler, read chan struct{}) {
	t.Helper()
	read = make(chan struct{})
	s := newMCPGo("echo", "get_weather")
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
// without Accept passed on (with its status); the framework's error
// handling never runs (echo's error handler; gin's chain goes on without
// errors).
func TestFrameworkAdapters(t *testing.T) {
	for _, fw := range frameworks {
		t.Run(fw.Name, func(t *testing.T) { frameworktest.Run(t, fw) })
	}
}

// Through gin, later handlers see what the server's handler wrote in
// c.Writer's Status, Size and Written, and may not write a second answer
// on top.
func TestGinWriterStateForLaterHandlers(t *testing.T) {
	sdk, _ := streamingMCPGo(t)
	type state struct {
		status, size int
		written      bool
	}
	var got state
	gin.SetMode(gin.ReleaseMode)
	e := gin.New()
	e.POST("/api/mcp", toolguardgin.Middleware(frameworktest.Guarded(t)), gin.WrapH(sdk), func(c *gin.Context) {
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
