// Command echov5-mcpgo serves a mark3labs/mcp-go server from an echo v5 app,
// with toolguard as route middleware: echo-mcpgo for echo v5.
//
// Copy: newApp. Change: the tools, the route, your own middleware (put the
// guard after authentication, so anonymous callers never see the tool list).
//
//	go run ./echov5-mcpgo -addr 127.0.0.1:8080
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/labstack/echo/v5"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	toolguardechov5 "github.com/toolguard/toolguard/adapters/echov5"
	toolguardmcpgo "github.com/toolguard/toolguard/adapters/mcpgo"
	toolguard "github.com/toolguard/toolguard/middleware"
)

func newApp() (*echo.Echo, error) {
	s := server.NewMCPServer("notes", "1.0.0", server.WithToolCapabilities(true))
	s.AddTool(mcp.NewTool("add_note", mcp.WithDescription("Store a note"), mcp.WithString("text", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("Saved: " + req.GetString("text", "")), nil
		})
	mcpHandler := server.NewStreamableHTTPServer(s)

	tools, err := toolguardmcpgo.Tools(s, mcpHandler, toolguardmcpgo.Options{})
	if err != nil {
		return nil, err
	}
	guard, err := toolguardechov5.New(toolguard.Options{Tools: tools})
	if err != nil {
		return nil, err
	}
	e := echo.New()
	// Any: Streamable HTTP also uses GET (the event stream) and DELETE.
	e.Any("/mcp", echo.WrapHandler(mcpHandler), guard)
	return e, nil
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	flag.Parse()
	if err := run(*addr, func(url string) { fmt.Println("listening on", url) }); err != nil {
		log.Fatal(err)
	}
}

func run(addr string, ready func(url string)) error {
	e, err := newApp()
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	ready("http://" + ln.Addr().String() + "/mcp")
	// Ctrl+C or SIGTERM shuts the server down gracefully.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return echo.StartConfig{Listener: ln, HideBanner: true, HidePort: true}.Start(ctx, e)
}
