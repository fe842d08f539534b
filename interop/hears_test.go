package interop

import (
	"bytes"
	"context"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	toolguardmcpgo "github.com/toolguard/toolguard/adapters/mcpgo"
	"github.com/toolguard/toolguard/internal/fixture"
	toolguard "github.com/toolguard/toolguard/middleware"
)

// requestTap records every request that passes it, whole: method, target,
// Host, every header and the body's bytes, and hands next the same bytes.
type requestTap struct {
	next http.Handler
	mu   sync.Mutex
	seen []string
}

func (tp *requestTap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	var b strings.Builder
	b.WriteString(r.Method + " " + r.RequestURI + " host=" + r.Host + "\n")
	for _, k := range slices.Sorted(maps.Keys(r.Header)) {
		b.WriteString(k + ": " + strings.Join(r.Header[k], "\x00") + "\n")
	}
	b.Write(body)
	if err != nil {
		b.WriteString("\n(read error: " + err.Error() + ")")
	}
	tp.mu.Lock()
	tp.seen = append(tp.seen, b.String())
	tp.mu.Unlock()
	r.Body = io.NopCloser(bytes.NewReader(body))
	tp.next.ServeHTTP(w, r)
}

func (tp *requestTap) requests() []string {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return slices.Clone(tp.seen)
}

// TestServerHearsOnlyTheClient: a tap in front of the guard records the
// client's requests as they arrived, a tap between the guard and a real
// server records what the server got. Across initialize, an unknown call
// before any list, tools/list, known and unknown calls, a call of a
// session tool and the session's DELETE, the two are equal, request for
// request and byte for byte: the guard sends nothing of its own. Over
// stdio, the server's input is exactly the client's bytes.
func TestServerHearsOnlyTheClient(t *testing.T) {
	mcpgoServer := newMCPGo("echo", "add")
	mcpgoHandler := server.NewStreamableHTTPServer(mcpgoServer)
	inner := &requestTap{next: mcpgoHandler}
	mcpgoTools, err := toolguardmcpgo.Tools(mcpgoServer, inner, toolguardmcpgo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		inner *requestTap
		tools toolguard.ToolSet
	}{
		{"mcp-go over HTTP, toolguardmcpgo", inner, mcpgoTools},
		{"mcp-go over HTTP, no tool set", &requestTap{next: server.NewStreamableHTTPServer(newMCPGo("echo", "add"))}, nil},
		{"go-sdk over HTTP, no tool set", &requestTap{next: goSDKHandler(newGoSDK("echo", "add"), nil)}, nil},
		{"go-sdk over HTTP, stateless", &requestTap{next: goSDKHandler(newGoSDK("echo", "add"), &gosdk.StreamableHTTPOptions{Stateless: true})}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var translated int
			g, err := toolguard.New(toolguard.Options{Tools: tc.tools, OnReject: func(*http.Request, *toolguard.Rejection) { translated++ }})
			if err != nil {
				t.Fatal(err)
			}
			outer := &requestTap{next: g.Handler(tc.inner)}
			srv := httptest.NewServer(outer)
			defer srv.Close()

			hdr := http.Header{"Mcp-Protocol-Version": {"2025-11-25"}, "Authorization": {"Bearer x"}}
			init := fixture.PostWithin(t, 20*time.Second, srv.URL, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"hears","version":"1"}}}`, hdr)
			if init.Status != 200 {
				t.Fatalf("initialize: %d %s", init.Status, init.Body)
			}
			if id := init.Header.Get("Mcp-Session-Id"); id != "" {
				hdr.Set("Mcp-Session-Id", id)
			}
			post := func(body string) string {
				t.Helper()
				return fixture.PostWithin(t, 20*time.Second, srv.URL, body, hdr).Body
			}
			post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			before := post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ech","arguments":{}}}`)
			list := post(`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}`)
			known := post(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`)
			after := post(`{"jsonrpc":"2.0","id":"5","method":"tools/call","params":{"name":"ech","arguments":{},"_meta":{"progressToken":"p"}}}`)
			post(`{"jsonrpc":"2.0","id":6,"method":"ping"}`)
			if id := hdr.Get("Mcp-Session-Id"); id != "" {
				req := fixture.NewPost(srv.URL, "", hdr)
				req.Method = http.MethodDelete
				if resp, err := http.DefaultClient.Do(req); err == nil {
					resp.Body.Close()
				}
			}

			// Not vacuous: the guard translated both unknown calls, the
			// second with the list the client was given.
			if tools, has := dataOf(t, before); has || !strings.Contains(before, `"Unknown tool: ech. Call tools/list for the available tools."`) {
				t.Errorf("the call before any list: %s (data %q)", before, tools)
			}
			if names := listedNames(list); !slices.Equal(names, []string{"add", "echo"}) {
				t.Errorf("tools/list: %s", list)
			}
			if !strings.Contains(known, "echo:hi") {
				t.Errorf("known call: %s", known)
			}
			if tools, _ := dataOf(t, after); !slices.Equal(tools, []string{"add", "echo"}) {
				t.Errorf("the call after the list: %s", after)
			}
			if translated != 2 {
				t.Errorf("%d answers translated, want 2", translated)
			}

			sent, heard := outer.requests(), tc.inner.requests()
			if !slices.Equal(sent, heard) {
				t.Errorf("the server heard %d requests, the client sent %d", len(heard), len(sent))
				for i := range max(len(sent), len(heard)) {
					var s, h string
					if i < len(sent) {
						s = sent[i]
					}
					if i < len(heard) {
						h = heard[i]
					}
					if s != h {
						t.Errorf("request %d: the client sent\n%s\nthe server heard\n%s", i, s, h)
					}
				}
			}
			if len(sent) < 7 {
				t.Errorf("only %d requests recorded", len(sent))
			}
			tc.inner.mu.Lock()
			tc.inner.seen = nil
			tc.inner.mu.Unlock()
		})
	}

	for _, sdk := range []string{"mcpgo", "gosdk"} {
		t.Run(sdk+" over stdio", func(t *testing.T) { hearsOnlyTheClientOverStdio(t, sdk) })
	}
}

// hearsOnlyTheClientOverStdio runs a real SDK stdio server behind
// toolguard.NewStdio on pipes, in this process, and compares every byte
// the server read with every byte the client wrote.
func hearsOnlyTheClientOverStdio(t *testing.T, sdk string) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var sent, heard fixture.SyncBuffer
	var translated atomic.Int64
	g, err := toolguard.NewStdio(inR, outW, toolguard.StdioOptions{OnTranslate: func(*toolguard.Rejection) { translated.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	r := struct {
		io.Reader
		io.Closer
	}{io.TeeReader(g.Reader(), &heard), g.Reader()}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() {
		var err error
		switch sdk {
		case "mcpgo":
			err = server.NewStdioServer(newMCPGo("echo", "add")).Listen(ctx, r, g.Writer())
		case "gosdk":
			err = newGoSDK("echo", "add").Run(ctx, &gosdk.IOTransport{Reader: r, Writer: g.Writer()})
		}
		served <- err
		outW.Close()
	}()
	c := newLineClient(io.MultiWriter(inW, &sent), outR)

	c.handshake(t, map[string]any{})
	before, _ := c.unknownTool(t, "ech")
	names := c.tools(t)
	if m := c.request(t, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi"}}); !strings.Contains(string(m.Result), "echo:hi") {
		t.Errorf("known call: %+v %s", m.Error, m.Result)
	}
	after, available := c.unknownTool(t, "ech")
	c.request(t, "ping", map[string]any{})
	if before.Code != -32602 || !fixture.IsGuardMessage(before.Message, "ech") || before.Data != nil {
		t.Errorf("the call before any list: %+v", before)
	}
	if after.Code != -32602 || !slices.Equal(available, []string{"add", "echo"}) || !slices.Equal(names, available) {
		t.Errorf("the call after the list: %+v, availableTools %q, tools/list %q", after, available, names)
	}

	inW.Close()
	select {
	case <-served:
	case <-time.After(10 * time.Second): // a bound against a hang, not a measure
		t.Fatal("the server did not return after its input closed")
	}
	for range c.lines {
	}
	if n := translated.Load(); n != 2 {
		t.Errorf("%d answers translated, want 2", n)
	}
	if sent.String() == "" || heard.String() != sent.String() {
		t.Errorf("the server read\n%q\nthe client wrote\n%q", heard.String(), sent.String())
	}
}
