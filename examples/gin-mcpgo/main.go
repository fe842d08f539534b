// Command gin-mcpgo serves a mark3labs/mcp-go server from a gin app, with
// toolguard as route middleware.
//
// Copy: newRouter. Change: the tools, the route group, your own middleware
// (put the guard after authentication).
//
//	go run ./gin-mcpgo -addr 127.0.0.1:8080
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	toolguardgin "github.com/toolguard/toolguard/adapters/gin"
	toolguardmcpgo "github.com/toolguard/toolguard/adapters/mcpgo"
	toolguard "github.com/toolguard/toolguard/middleware"
)

func newRouter() (*gin.Engine, error) {
	s := server.NewMCPServer("calc", "1.0.0", server.WithToolCapabilities(true))
	s.AddTool(mcp.NewTool("add", mcp.WithDescription("Add two numbers"),
		mcp.WithNumber("a", mcp.Required()), mcp.WithNumber("b", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(fmt.Sprint(req.GetFloat("a", 0) + req.GetFloat("b", 0))), nil
		})
	mcpHandler := server.NewStreamableHTTPServer(s)

	tools, err := toolguardmcpgo.Tools(s, mcpHandler, toolguardmcpgo.Options{})
	if err != nil {
		return nil, err
	}
	guard, err := toolguardgin.New(toolguard.Options{Tools: tools})
	if err != nil {
		return nil, err
	}
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	api := r.Group("/")
	// Any: Streamable HTTP also uses GET (the event stream) and DELETE.
	api.Any("/mcp", guard, gin.WrapH(mcpHandler))
	return r, nil
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	flag.Parse()
	if err := run(*addr, func(url string) { fmt.Println("listening on", url) }); err != nil {
		log.Fatal(err)
	}
}

func run(addr string, ready func(url string)) error {
	r, err := newRouter()
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	ready("http://" + ln.Addr().String() + "/mcp")
	return http.Serve(ln, r)
}
