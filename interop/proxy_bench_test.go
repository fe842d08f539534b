package interop

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"testing"

	"github.com/mark3labs/mcp-go/server"

	"github.com/toolguard/toolguard/internal/fixture"
	toolguard "github.com/toolguard/toolguard/middleware"
)

// BenchmarkProxyPaired: an httputil.ReverseProxy in front of a stateless
// mcp-go server with 1,000 tools on loopback, alone and with the guard
// (no tool set, as toolguard-proxy runs it), called over loopback and
// paired call by call: a known call, an unknown call (mcp-go's answer,
// translated with the list the caller was given) and the caller's
// tools/list, whose 1,000-tool answer the guard reads on its way.
//
//	go test -run '^$' -bench ProxyPaired -benchtime 3000x -count 6 .
func BenchmarkProxyPaired(b *testing.B) {
	names := make([]string, 1000)
	for i := range names {
		names[i] = fmt.Sprintf("tool_%04d", i)
	}
	upstream := httptest.NewServer(server.NewStreamableHTTPServer(newMCPGo(names...), server.WithStateLess(true)))
	defer upstream.Close()
	u, _ := url.Parse(upstream.URL + "/mcp")
	proxy := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(u); pr.Out.URL.Path = u.Path }, FlushInterval: -1}
	g, err := toolguard.New(toolguard.Options{})
	if err != nil {
		b.Fatal(err)
	}
	guarded := g.Handler(proxy)
	hdr := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}, "Mcp-Protocol-Version": {"2025-11-25"}}
	list := `{"jsonrpc":"2.0","id":"l","method":"tools/list"}`
	for _, c := range []struct{ name, body string }{
		{"known", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"tool_0003","arguments":{"text":"hi"}}}`},
		{"unknown", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"tool_9999","arguments":{}}}`},
		{"list", list},
	} {
		b.Run(c.name, func(b *testing.B) {
			callAlone, callGuarded := fixture.OverLoopback(b, proxy, guarded, c.body, hdr)
			// The caller lists first, as clients do, over the same
			// connection's headers: the guard keeps the list for it.
			_, listGuarded := fixture.OverLoopback(b, proxy, guarded, list, hdr)
			listGuarded()
			callAlone()
			callGuarded()
			fixture.Paired(b, "guard/alone", "guard/alone-cpu", callAlone, callGuarded)
		})
	}
}
