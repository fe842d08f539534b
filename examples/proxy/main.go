// Command proxy fronts any Streamable HTTP MCP server, in any language,
// with toolguard: every call reaches the server, and the server's own
// answer to a tool it does not have (a JSON-RPC error, or a result with
// isError from the TypeScript and Python SDKs) is replaced by the JSON-RPC
// -32602 error with the caller's tool list, with the server's HTTP status.
//
// Copy: newProxy. Change: the upstream URL; add your authentication in
// front of the guard so anonymous callers never see the tool list.
//
//	go run ./proxy -upstream http://127.0.0.1:3000/mcp -addr 127.0.0.1:8080
//
// The caller's Host reaches the upstream unchanged, so a server with a Host
// allow-list (DNS-rebinding protection) judges the caller, not the proxy,
// and a caller it turns away is never given a tool list to show.
// Pass-throughs of a tool call are logged with their reason on standard
// error. (cmd/toolguard-proxy does more to send only what the caller
// sent: a path only as written, one 100 Continue, and its -host flag.)
package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"

	toolguard "github.com/toolguard/toolguard/middleware"
)

// config is what the flags set besides the addresses.
type config struct {
	// logger, if set, is told why a tools/call passed through, and of every
	// answer the guard wrote.
	logger *slog.Logger
}

// newProxy returns a guarded reverse proxy to the MCP endpoint upstream.
func newProxy(upstream string, cfg config) (http.Handler, error) {
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
			// Send what the caller sent, and add nothing: its own
			// forwarding headers (which ReverseProxy takes out), no
			// X-Forwarded-* of the proxy's.
			for _, k := range []string{"Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto"} {
				if v, ok := pr.In.Header[k]; ok {
					pr.Out.Header[k] = v
				}
			}
		},
		FlushInterval: -1, // stream event streams as they come
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DisableCompression = true // no Accept-Encoding the caller did not send
	proxy.Transport = tr
	// No tool set: the upstream decides every call. The guard never asks
	// it anything; the list in its answers is the upstream's answer to the
	// caller's own tools/list, read as it passed.
	guard, err := toolguard.New(toolguard.Options{Logger: cfg.logger})
	if err != nil {
		return nil, err
	}
	guarded := guard.Handler(proxy)
	mux := http.NewServeMux()
	mux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Host == "" || !strings.HasPrefix(r.RequestURI, "/") {
			// net/http would send the upstream another Host than the
			// caller's: the URL's, when the request names none or has a
			// full URL as its target (whose host some servers read).
			http.Error(w, "proxy: send the path, with its host in Host", http.StatusBadRequest)
			return
		}
		guarded.ServeHTTP(w, r)
	}))
	return mux, nil
}

func main() {
	upstream := flag.String("upstream", "", "the MCP endpoint to front, e.g. http://127.0.0.1:3000/mcp")
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	flag.Parse()
	if *upstream == "" {
		log.Fatal("proxy: -upstream is required")
	}
	cfg := config{logger: slog.New(slog.NewTextHandler(os.Stderr, nil))}
	err := run(*upstream, *addr, cfg, func(url string) { fmt.Println("listening on", url, "->", *upstream) })
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}

func run(upstream, addr string, cfg config, ready func(url string)) error {
	h, err := newProxy(upstream, cfg)
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
