package interop

import (
	"bufio"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"testing"
	"time"

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

// BenchmarkProxyCommandMetricsPaired: two toolguard-proxy processes in
// front of one stateless mcp-go server with 1,000 tools, one with
// -metrics-listen and one without, paired ten calls by ten (a known
// call; fixture.PairedMedian): metrics/none is what the counting costs a
// caller, end to end. cmd/toolguard-proxy's BenchmarkMetricsPaired
// measures the handler alone, in one process.
//
//	go test -run '^$' -bench ProxyCommandMetricsPaired -benchtime 3000x -count 6 .
func BenchmarkProxyCommandMetricsPaired(b *testing.B) {
	names := make([]string, 1000)
	for i := range names {
		names[i] = fmt.Sprintf("tool_%04d", i)
	}
	upstream := httptest.NewServer(server.NewStreamableHTTPServer(newMCPGo(names...), server.WithStateLess(true)))
	defer upstream.Close()
	none := startProxyB(b, "-upstream", upstream.URL+"/mcp", "-quiet")
	counted := startProxyB(b, "-upstream", upstream.URL+"/mcp", "-quiet", "-metrics-listen", "127.0.0.1:0")
	hdr := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}, "Mcp-Protocol-Version": {"2025-11-25"}}
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"tool_0003","arguments":{"text":"hi"}}}`
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2}}
	defer client.CloseIdleConnections()
	callNone, callCounted := fixture.Poster(b, client, none, body, hdr), fixture.Poster(b, client, counted, body, hdr)
	callNone()
	callCounted()
	fixture.PairedMedian(b, 10, "metrics/none", callNone, callCounted)
}

// startProxyB starts toolguard-proxy for a benchmark and returns its URL;
// it is killed when b ends.
func startProxyB(b *testing.B, args ...string) string {
	b.Helper()
	cmd := exec.Command(command(b, "toolguard-proxy"), append([]string{"-listen", "127.0.0.1:0"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				ready <- m[1]
			}
		}
	}()
	select {
	case url := <-ready:
		return url
	case <-time.After(30 * time.Second):
		b.Fatal("toolguard-proxy did not start")
		return ""
	}
}
