package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	toolguardmcpgo "github.com/toolguard/toolguard/adapters/mcpgo"
	toolguard "github.com/toolguard/toolguard/middleware"
)

// bodyTap records the body each request carries into the SDK.
type bodyTap struct {
	next   http.Handler
	mu     sync.Mutex
	bodies []string
}

func (b *bodyTap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	b.mu.Lock()
	b.bodies = append(b.bodies, string(body))
	b.mu.Unlock()
	r.Body = io.NopCloser(bytes.NewReader(body))
	b.next.ServeHTTP(w, r)
}

// take returns every body recorded since the last take.
func (b *bodyTap) take() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.bodies
	b.bodies = nil
	return s
}

func callBody(name string) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 5, "method": "tools/call",
		"params": map[string]any{"name": name, "arguments": map[string]any{}}})
	return string(b)
}

// listFor is the tools/list a client sent before c, with c's headers (and
// c's _meta, in 2026-07-28), as the body and the headers to add.
func listFor(c wireCase) (string, http.Header) {
	hdr := c.header.Clone()
	if hdr.Get("Mcp-Method") == "" {
		return `{"jsonrpc":"2.0","id":"l","method":"tools/list"}`, hdr
	}
	hdr.Set("Mcp-Method", "tools/list")
	hdr.Del("Mcp-Name")
	return `{"jsonrpc":"2.0","id":"l","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`, hdr
}

// hosts serves one guard in front of one SDK handler through net/http and
// each of the frameworks, and returns the URL of each endpoint.
func hosts(t *testing.T, g *toolguard.Guard, sdk http.Handler) map[string]string {
	mux := http.NewServeMux()
	mux.Handle("/mcp", g.Handler(sdk))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	urls := map[string]string{"net/http": srv.URL + "/mcp"}
	for _, fw := range frameworks {
		h, _ := fw.Mount(g, sdk)
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		urls[fw.Name] = srv.URL + fw.Path
	}
	return urls
}

type wireCase struct {
	name   string
	method string
	body   string
	header http.Header
}

// wireTable is the shared table: every request the hosts must answer alike.
var wireTable = []wireCase{
	{"unknown tool", "POST", callBody("ech0"), nil},
	{"unknown tool, SSE only", "POST", callBody("ech0"), http.Header{"Accept": {"text/event-stream"}}},
	{"unknown tool, string id", "POST", `{"jsonrpc":"2.0","id":"a\"b","method":"tools/call","params":{"name":"nope"}}`, nil},
	// mcp-go v1.6 echoes this id exactly (v1.2.1 rounded it to
	// 9223372036854776000, another id, whose answer the guard left as it
	// was): its not-found answer is the call's, translated.
	{"unknown tool, 2^63-1 id", "POST", `{"jsonrpc":"2.0","id":9223372036854775807,"method":"tools/call","params":{"name":"nope"}}`, nil},
	{"unknown tool, 2026-07-28", "POST", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"nope","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
		http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {"nope"}}},
	{"known tool", "POST", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`, nil},
	{"tools/list", "POST", `{"jsonrpc":"2.0","id":6,"method":"tools/list"}`, nil},
	{"ambiguous name", "POST", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope","Name":"echo"}}`, nil},
	{"batch", "POST", "[" + callBody("nope") + "]", nil},
	{"notification", "POST", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil},
	{"not json", "POST", `{"jsonrpc":`, nil},
	{"header mismatch", "POST", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"nope","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
		http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {"other"}}},
	{"DELETE", "DELETE", "", nil},
}

type wireAnswer struct {
	status                    int
	contentType, length, body string
}

// Every request of the table, each after the tools/list a client sends
// with the same headers, gets the same answer through every host; the
// server reads exactly those two bodies, the client's, and nothing else.
func TestWireIdenticalAcrossHosts(t *testing.T) {
	s := newMCPGo("echo", "add")
	tap := &bodyTap{next: server.NewStreamableHTTPServer(s, server.WithStateLess(true))}
	tools, err := toolguardmcpgo.Tools(s, tap, toolguardmcpgo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := toolguard.New(toolguard.Options{Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	urls := hosts(t, g, tap)
	for _, tc := range wireTable {
		t.Run(tc.name, func(t *testing.T) {
			answers := map[string]wireAnswer{}
			do := func(method, url, body string, header http.Header) *http.Response {
				req, _ := http.NewRequest(method, url, strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
				for k, v := range header {
					req.Header[k] = v
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				return resp
			}
			listBody, listHeader := listFor(tc)
			for _, host := range []string{"net/http", "echo", "echo/v5", "gin"} {
				tap.take()
				resp := do("POST", urls[host], listBody, listHeader)
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				resp = do(tc.method, urls[host], tc.body, tc.header)
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				answers[host] = wireAnswer{status: resp.StatusCode, contentType: resp.Header.Get("Content-Type"),
					length: resp.Header.Get("Content-Length"), body: string(body)}
				if got := tap.take(); !slices.Equal(got, []string{listBody, tc.body}) {
					t.Errorf("%s: the SDK read %q, the client sent %q", host, got, []string{listBody, tc.body})
				}
			}
			want := answers["net/http"]
			if rejected := strings.HasPrefix(tc.name, "unknown tool"); rejected != strings.Contains(want.body, `"availableTools":["add","echo"]`) {
				t.Errorf("rejected=%v, answer %d %s", rejected, want.status, want.body)
			}
			for host, a := range answers {
				if a.status != want.status || a.contentType != want.contentType || a.length != want.length || a.body != want.body {
					t.Errorf("%s answered %d %q %q %s\nnet/http      %d %q %q %s", host, a.status, a.contentType, a.length, a.body,
						want.status, want.contentType, want.length, want.body)
				}
			}
		})
	}
}

// A long tools/call that sends progress notifications streams through every
// host: each event reaches the client while the tool still runs. The tool
// sends an event and waits for the client to have read it before the
// next, so an answer held until the end never completes (the client's
// timeout is a bound against that hang, not a measure).
func TestSSEStreamsThroughHosts(t *testing.T) {
	s := newMCPGo("echo")
	const steps = 3
	read := make(chan struct{})
	s.AddTool(mcp.NewTool("slow"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		srv := server.ServerFromContext(ctx)
		for i := 1; i <= steps; i++ {
			srv.SendNotificationToClient(ctx, "notifications/progress", map[string]any{
				"progressToken": req.Params.Meta.ProgressToken, "progress": i, "total": steps})
			select {
			case <-read:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return mcp.NewToolResultText("done"), nil
	})
	h := server.NewStreamableHTTPServer(s, server.WithStateLess(true))
	tools, err := toolguardmcpgo.Tools(s, h, toolguardmcpgo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := toolguard.New(toolguard.Options{Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 20 * time.Second}
	for host, url := range hosts(t, g, h) {
		t.Run(host, func(t *testing.T) {
			body := `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"progressToken":"p1"}}}`
			req, _ := http.NewRequest("POST", url, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
				t.Fatalf("Content-Type %q", ct)
			}
			var lines []string
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
					lines = append(lines, data)
					if strings.Contains(data, "notifications/progress") {
						read <- struct{}{} // the tool sends the next only now
					}
				}
			}
			if err := sc.Err(); err != nil {
				t.Fatalf("after %q: %v (an event held back?)", lines, err)
			}
			if len(lines) != steps+1 || !strings.Contains(lines[steps], `"done"`) {
				t.Fatalf("events %q", lines)
			}
		})
	}
}
