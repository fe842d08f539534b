// Command gosdk serves a modelcontextprotocol/go-sdk server with toolguard
// in front.
//
// Copy: newHandler. Change: the tools, and getServer if you serve a
// different server per request. go-sdk has no public registry, so the
// guard takes no tool set: go-sdk decides every call, and the guard
// replaces only its own not-found answer, with the list go-sdk gave the
// caller's own tools/list (read as it passed; the guard asks nothing).
//
//	go run ./gosdk -addr 127.0.0.1:8080
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	toolguard "github.com/toolguard/toolguard/middleware"
)

type greetArgs struct {
	Name string `json:"name" jsonschema:"who to greet"`
}

func newHandler() (http.Handler, error) {
	s := mcp.NewServer(&mcp.Implementation{Name: "greeter", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "greet", Description: "Say hello"},
		func(ctx context.Context, req *mcp.CallToolRequest, in greetArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Hello, " + in.Name}}}, nil, nil
		})
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)

	// go-sdk decides: every call reaches it, and the guard replaces only
	// its own not-found answer, with the caller's tools/list in data.
	guard, err := toolguard.New(toolguard.Options{})
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
