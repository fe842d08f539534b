// Command proxy fronts any Streamable HTTP MCP server, in any language,
// with toolguard: a call to a tool the server does not have gets the
// JSON-RPC -32602 error with the tool list, even from servers whose SDK
// answers it as a result with isError (TypeScript, Python).
//
// Copy: newProxy. Change: the upstream URL; add your authentication in
// front of the guard so anonymous callers never see the tool list.
//
//	go run ./proxy -upstream http://127.0.0.1:3000/mcp -addr 127.0.0.1:8080
package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"

	toolguard "github.com/toolguard/toolguard/middleware"
)

// newProxy returns a guarded reverse proxy to the MCP endpoint upstream.
func newProxy(upstream string) (http.Handler, error) {
	u, err := url.Parse(upstream)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("proxy: -upstream %q is not an http(s) URL", upstream)
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(u)
			pr.Out.URL.Path, pr.Out.URL.RawPath = u.Path, u.RawPath
			// Keep the caller's Host, so the server's own DNS-rebinding
			// protection judges the caller, not the proxy.
			pr.Out.Host = pr.In.Host
			pr.SetXForwarded()
		},
		FlushInterval: -1, // stream event streams as they come
	}
	// The tool set asks the upstream itself, through the proxy, with the
	// caller's session and credentials.
	tools, err := toolguard.Discover(proxy, toolguard.DiscoverOptions{})
	if err != nil {
		return nil, err
	}
	guard, err := toolguard.New(toolguard.Options{
		Tools: tools,
		// The upstream may be a JavaScript server, which refuses integer
		// ids beyond 2^53: leave those to it.
		SafeIntegerIDs: true,
	})
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", guard.Handler(proxy))
	return mux, nil
}

func main() {
	upstream := flag.String("upstream", "", "the MCP endpoint to front, e.g. http://127.0.0.1:3000/mcp")
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	flag.Parse()
	if *upstream == "" {
		log.Fatal("proxy: -upstream is required")
	}
	err := run(*upstream, *addr, func(url string) { fmt.Println("listening on", url, "->", *upstream) })
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}

func run(upstream, addr string, ready func(url string)) error {
	h, err := newProxy(upstream)
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
