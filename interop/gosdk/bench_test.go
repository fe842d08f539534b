package gosdk

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolguard/toolguard/internal/fixture"
	toolguard "github.com/toolguard/toolguard/middleware"
)

type benchArgs struct {
	City   string `json:"city,omitempty"`
	Detail string `json:"detail,omitempty"`
}

// benchServer is a real go-sdk server with n tools, alone and guarded.
func benchServer(b *testing.B, n int, opts *mcp.StreamableHTTPOptions) (alone, guarded http.Handler) {
	s := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "1.0.0"}, nil)
	for i := range n {
		mcp.AddTool(s, &mcp.Tool{Name: fmt.Sprintf("tool_%04d", i)}, func(ctx context.Context, req *mcp.CallToolRequest, in benchArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
		})
	}
	alone = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, opts)
	g, err := toolguard.New(toolguard.Options{})
	if err != nil {
		b.Fatal(err)
	}
	return alone, g.Handler(alone)
}

// call300 is a 300-byte tools/call.
func call300(name string) string {
	s := `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"` + name + `","arguments":{"city":"Oslo","detail":"%s"}}}`
	return fmt.Sprintf(s, strings.Repeat("x", 300-len(s)+2))
}

func send(b *testing.B, h http.Handler, body string, hdr http.Header) *fixture.Sink {
	r := httptest.NewRequest("POST", "/mcp", strings.NewReader(body))
	r.Header = hdr.Clone()
	w := fixture.NewSink()
	h.ServeHTTP(w, r)
	if w.Code != 200 && w.Code != 202 {
		b.Fatalf("%d %s", w.Code, w.Head())
	}
	return w
}

// BenchmarkPaired runs the same request through go-sdk alone and through
// guard + go-sdk, in batches that take turns going first, and reports the
// ratio guard/alone of their times and of the process CPU time (the one
// that holds on a machine shared with other work). It covers 10 and 1,000
// tools, callers without a session (a stateless handler) and with one
// (go-sdk's default), a known call and an unknown call (answered by go-sdk
// and translated, the caller's list warm). The calls are served in
// process, with httptest's recorder: the guard's cost against the SDK's
// handler alone.
//
//	go test -run '^$' -bench '^BenchmarkPaired$' -benchtime 20000x -count 5 .
func BenchmarkPaired(b *testing.B) { pairedRows(b, false) }

// BenchmarkLoopbackPaired is BenchmarkPaired with each side served by
// net/http on a loopback listener, called over a kept-alive connection:
// the cost a deployed server's callers see.
//
//	go test -run '^$' -bench LoopbackPaired -benchtime 5000x -count 5 .
func BenchmarkLoopbackPaired(b *testing.B) { pairedRows(b, true) }

func pairedRows(b *testing.B, loopback bool) {
	hdr := http.Header{
		"Content-Type":         {"application/json"},
		"Accept":               {"application/json, text/event-stream"},
		"Mcp-Protocol-Version": {"2025-11-25"},
	}
	for _, n := range []int{10, 1000} {
		for _, mode := range []string{"sessionless", "session"} {
			alone, guarded := benchServer(b, n, &mcp.StreamableHTTPOptions{Stateless: mode == "sessionless"})
			h := hdr.Clone()
			if mode == "session" {
				w := send(b, alone, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`, hdr)
				h.Set("Mcp-Session-Id", w.Header().Get("Mcp-Session-Id"))
				send(b, alone, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, h)
			}
			for _, c := range []struct{ name, tool string }{{"known", "tool_0003"}, {"unknown", "tool_9999"}} {
				body := call300(c.tool)
				b.Run(fmt.Sprintf("tools=%d/%s/%s", n, mode, c.name), func(b *testing.B) {
					fixture.PairedHandlers(b, loopback, alone, guarded, body, h, func(hd http.Handler) { send(b, hd, body, h) })
				})
			}
		}
	}
}
