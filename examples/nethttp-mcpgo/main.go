// Command nethttp-mcpgo serves a mark3labs/mcp-go server over Streamable
// HTTP with toolguard in front, using nothing but net/http.
//
// Copy: newHandler. Change: the tools (and their handlers), the address.
//
//	go run ./nethttp-mcpgo -addr 127.0.0.1:8080
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	toolguardmcpgo "github.com/toolguard/toolguard/adapters/mcpgo"
	toolguard "github.com/toolguard/toolguard/middleware"
)

// newHandler returns the guarded MCP endpoint.
func newHandler() (http.Handler, error) {
	s := server.NewMCPServer("weather", "1.0.0", server.WithToolCapabilities(true))
	s.AddTool(mcp.NewTool("get_weather", mcp.WithDescription("Weather for a city"), mcp.WithString("city", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("Sunny in " + req.GetString("city", "?")), nil
		})
	mcpHandler := server.NewStreamableHTTPServer(s)

	// The tool set reads mcp-go's registry at call time: a known tool's
	// call passes at once; for any other name mcp-go decides.
	tools, err := toolguardmcpgo.Tools(s, mcpHandler, toolguardmcpgo.Options{})
	if err != nil {
		return nil, err
	}
	guard, err := toolguard.New(toolguard.Options{Tools: tools})
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", guard.Handler(mcpHandler))
	return mux, nil
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	flag.Parse()
	if err := run(*addr, func(url string) { fmt.Println("listening on", url) }); err != nil {
		log.Fatal(err)
	}
}

// run serves on addr until the process ends, telling ready the URL.
func run(addr string, ready func(url string)) error {
	h, err := newHandler()
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	ready("http://" + ln.Addr().String() + "/mcp")
	return http.Serve(ln, h)
}
