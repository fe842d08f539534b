package interop

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// behindProxy fronts the server at endpoint with a reverse proxy, as a Go
// gateway would: every request goes to the endpoint, with the caller's
// Host.
func behindProxy(t *testing.T, endpoint string) http.Handler {
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	return &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(u)
		pr.Out.URL.Path = u.Path
		pr.Out.Host = pr.In.Host
	}}
}

// newMCPGo returns a real mcp-go server with the given tools, each echoing
// its "text" argument.
func newMCPGo(names ...string) *server.MCPServer {
	s := server.NewMCPServer("mcpgo-fixture", "1.0.0", server.WithToolCapabilities(true))
	for _, n := range names {
		s.AddTool(mcp.NewTool(n, mcp.WithDescription("the "+n+" tool"), mcp.WithString("text")),
			func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText(n + ":" + req.GetString("text", "")), nil
			})
	}
	return s
}

type textArgs struct {
	Text string `json:"text,omitempty"`
}

// newGoSDK returns a real go-sdk server with the given tools.
func newGoSDK(names ...string) *gosdk.Server {
	s := gosdk.NewServer(&gosdk.Implementation{Name: "gosdk-fixture", Version: "1.0.0"}, nil)
	for _, n := range names {
		gosdk.AddTool(s, &gosdk.Tool{Name: n, Description: "the " + n + " tool"},
			func(ctx context.Context, req *gosdk.CallToolRequest, in textArgs) (*gosdk.CallToolResult, any, error) {
				return &gosdk.CallToolResult{Content: []gosdk.Content{&gosdk.TextContent{Text: fmt.Sprintf("%s:%s", n, in.Text)}}}, nil, nil
			})
	}
	return s
}

func goSDKHandler(s *gosdk.Server, opts *gosdk.StreamableHTTPOptions) http.Handler {
	return gosdk.NewStreamableHTTPHandler(func(*http.Request) *gosdk.Server { return s }, opts)
}

// gosdkError is the error go-sdk clients return for a JSON-RPC error.
type gosdkError = jsonrpc.Error
