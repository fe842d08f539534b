package interop

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/toolguard/toolguard/internal/fixture"
)

// postAs posts body to url with the Host header host ("" for the URL's)
// and returns the status and body.
func postAs(t *testing.T, url, host, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	if host != "" {
		req.Host = host
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// requestLines returns the proxy's log lines about requests: all but the
// lines of its start and its shutdown.
func requestLines(p *proxyProcess) []string {
	var out []string
	for _, l := range p.logLines() {
		if !strings.Contains(l, "listening on") && !strings.HasSuffix(l, "shutting down") {
			out = append(out, l)
		}
	}
	return out
}

const (
	reportInitialize = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"interop","version":"1"}}}`
	reportUnknown    = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ech0","arguments":{}}}`
	reportKnown      = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`
)

// TestProxyCommandUnreachableUpstream: toolguard-proxy in front of a port
// nothing listens on answers 502 with a body naming the cause, and logs
// one line naming the upstream and the cause.
func TestProxyCommandUnreachableUpstream(t *testing.T) {
	upstream := "http://" + fixture.FreeAddr(t) + "/mcp"
	p := startProxy(t, "-upstream", upstream)
	answersAndLogsOnce(t, p, upstream, reportUnknown, http.StatusBadGateway, "connection refused")
}

// answersAndLogsOnce posts body through p, in front of upstream: the answer
// is status with a body naming cause, and p logs one line naming upstream
// and cause.
func answersAndLogsOnce(t *testing.T, p *proxyProcess, upstream, body string, status int, cause string) {
	t.Helper()
	got, b := postAs(t, p.URL, "", body)
	if got != status || !strings.Contains(b, cause) {
		t.Errorf("answered %d %q, want %d naming %q", got, b, status, cause)
	}
	p.stop(t)
	lines := requestLines(p)
	if len(lines) != 1 || !strings.Contains(lines[0], upstream) || !strings.Contains(lines[0], cause) {
		t.Errorf("logged %q, want one line naming %s and %q", lines, upstream, cause)
	}
}

// TestProxyCommandSilentUpstream: in front of an upstream that accepts
// connections and never answers, toolguard-proxy answers 504 after
// -upstream-timeout, with a body naming the cause, and logs one line.
func TestProxyCommandSilentUpstream(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var held []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c) // read nothing, answer nothing
			mu.Unlock()
		}
	}()
	defer func() {
		ln.Close()
		mu.Lock()
		for _, c := range held {
			c.Close()
		}
		mu.Unlock()
	}()
	upstream := "http://" + ln.Addr().String() + "/mcp"
	p := startProxy(t, "-upstream", upstream, "-upstream-timeout", "1s")
	answersAndLogsOnce(t, p, upstream, reportInitialize, http.StatusGatewayTimeout, "did not answer within 1s")
}

// TestProxyCommandLogPassHostAllowList: mcp-go v1.2.1 on localhost, with
// its DNS-rebinding protection on (its default), answers 403 to a Host
// that is not a loopback name. Through toolguard-proxy -log-pass (which
// keeps the caller's Host), the pass-through lines name the reason, the
// 403 and the Host; with -host upstream the same caller gets through.
func TestProxyCommandLogPassHostAllowList(t *testing.T) {
	up := httptest.NewServer(server.NewStreamableHTTPServer(newMCPGo("echo", "add"), server.WithStateLess(true)))
	defer up.Close()
	if status, body := postAs(t, up.URL+"/mcp", "mcp.example", reportInitialize); status != http.StatusForbidden {
		t.Fatalf("mcp-go alone answered Host mcp.example %d %q, want its 403", status, body)
	}

	p := startProxy(t, "-upstream", up.URL+"/mcp", "-log-pass")
	for _, body := range []string{reportInitialize, reportUnknown, reportKnown} {
		if status, got := postAs(t, p.URL, "mcp.example", body); status != http.StatusForbidden {
			t.Errorf("%.50s: answered %d %q, want mcp-go's 403", body, status, got)
		}
	}
	p.stop(t)
	lines := requestLines(p)
	if len(lines) != 3 {
		t.Fatalf("logged %d lines, want one per request:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	for i, reason := range []string{"reason=not-tools-call", "reason=", "reason="} {
		l := lines[i]
		if !strings.Contains(l, reason) || !strings.Contains(l, "status=403") || !strings.Contains(l, `host="mcp.example"`) {
			t.Errorf("line %d: %q, want the reason, status=403 and the Host", i, l)
		}
	}
	if !strings.Contains(lines[1], `tool="ech0"`) || !strings.Contains(lines[2], `tool="echo"`) {
		t.Errorf("the calls' lines do not name their tools:\n%s", strings.Join(lines, "\n"))
	}

	p = startProxy(t, "-upstream", up.URL+"/mcp", "-host", "upstream")
	if status, got := postAs(t, p.URL, "mcp.example", reportKnown); status != http.StatusOK || !strings.Contains(got, "echo:hi") {
		t.Errorf("-host upstream: the known call answered %d %q", status, got)
	}
	if status, got := postAs(t, p.URL, "mcp.example", reportUnknown); !strings.Contains(got, `"code":-32602`) {
		t.Errorf("-host upstream: the unknown call answered %d %q", status, got)
	}
	p.stop(t)
}
