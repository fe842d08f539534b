package interop

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolguard/toolguard/internal/fixture"
	toolguard "github.com/toolguard/toolguard/middleware"
)

// BenchmarkDiscoverPaired: toolguard.Discover in front of a reverse proxy
// to a real mcp-go server on loopback (what toolguard-proxy does), against
// the reverse proxy alone, in every iteration alternately, for 10 and
// 1,000 tools: a known call, and an unknown call (mcp-go's own not-found
// answer, translated with the caller's list, warm). It reports time and
// process CPU per op of each side and their ratios guard/alone.
//
//	go test -run '^$' -bench DiscoverPaired -benchtime 10000x -count 5 .
func BenchmarkDiscoverPaired(b *testing.B) {
	for _, n := range []int{10, 1000} {
		s := server.NewMCPServer("bench", "1.0.0", server.WithToolCapabilities(true))
		for i := range n {
			s.AddTool(mcp.NewTool(fmt.Sprintf("tool_%04d", i), mcp.WithString("city")),
				func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return mcp.NewToolResultText("ok"), nil
				})
		}
		up := httptest.NewServer(server.NewStreamableHTTPServer(s, server.WithStateLess(true)))
		u, _ := url.Parse(up.URL + "/mcp")
		proxy := httputil.NewSingleHostReverseProxy(u)
		// The default TTL: the list is read again every 10 seconds, as
		// deployed, and the answers after each read match it by identity.
		d, err := toolguard.Discover(proxy, toolguard.DiscoverOptions{})
		if err != nil {
			b.Fatal(err)
		}
		g, err := toolguard.New(toolguard.Options{Tools: d})
		if err != nil {
			b.Fatal(err)
		}
		alone, guarded := httptest.NewServer(proxy), httptest.NewServer(g.Handler(proxy))
		for _, c := range []struct{ name, tool string }{{"known", "tool_0003"}, {"unknown", "tool_9999"}} {
			body := `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"` + c.tool + `","arguments":{"city":"Oslo"}}}`
			b.Run(fmt.Sprintf("tools=%d/%s", n, c.name), func(b *testing.B) {
				client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
				call := func(url string) func() {
					return func() {
						req, _ := http.NewRequest("POST", url, strings.NewReader(body))
						req.Header.Set("Content-Type", "application/json")
						req.Header.Set("Accept", "application/json, text/event-stream")
						resp, err := client.Do(req)
						if err != nil {
							b.Fatal(err)
						}
						var buf [4096]byte
						for {
							if _, err := resp.Body.Read(buf[:]); err != nil {
								break
							}
						}
						resp.Body.Close()
					}
				}
				call(guarded.URL)() // the caller's list, warm
				fixture.Paired(b, "time-ratio", "cpu-ratio", call(alone.URL), call(guarded.URL))
			})
		}
		alone.Close()
		guarded.Close()
		up.Close()
	}
}
