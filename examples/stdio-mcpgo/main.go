// Command stdio-mcpgo serves a mark3labs/mcp-go server over standard input
// and output with toolguard in front, in process: a JSON MCP client
// configuration starts it like any stdio server.
//
// Copy: serve. Change: the tools (and their handlers).
//
//	go run ./stdio-mcpgo
package main

import (
	"context"
	"io"
	"log"
	"os"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	toolguard "github.com/toolguard/toolguard/middleware"
)

// serve runs the guarded server on in and out until in ends or ctx is done.
func serve(ctx context.Context, in io.Reader, out io.Writer) error {
	s := server.NewMCPServer("weather", "1.0.0", server.WithToolCapabilities(true))
	s.AddTool(mcp.NewTool("get_weather", mcp.WithDescription("Weather for a city"), mcp.WithString("city", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("Sunny in " + req.GetString("city", "?")), nil
		})

	// The guard sits between the client's streams and the server's: it
	// never speaks to the server; it replaces only the server's own
	// not-found answer, with the list the client's own tools/list got.
	g, err := toolguard.NewStdio(in, out, toolguard.StdioOptions{})
	if err != nil {
		return err
	}
	stdio := server.NewStdioServer(s)
	stdio.SetErrorLogger(log.New(os.Stderr, "", log.LstdFlags)) // standard output carries MCP only
	return stdio.Listen(ctx, g.Reader(), g.Writer())
}

func main() {
	if err := serve(context.Background(), os.Stdin, os.Stdout); err != nil && err != io.EOF && err != context.Canceled {
		log.Fatal(err)
	}
}
