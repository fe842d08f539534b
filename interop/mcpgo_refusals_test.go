package interop

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	toolguardmcpgo "github.com/toolguard/toolguard/adapters/mcpgo"
	"github.com/toolguard/toolguard/internal/fixture"
	toolguard "github.com/toolguard/toolguard/middleware"
)

// The requests mcp-go v1.6 refuses before it looks a tool up get its own
// refusal through the guard, with AnswerBeforeServer, byte for byte: a
// params member it defines, twice or in another letter case; a Host its
// WithAllowedHosts turns away (given to the tool set too); a POST to its
// protected resource metadata (StaticTools too); a body over its limit
// (the guard's is the same); and, in a session, an id already in flight.
// A browser's call, which mcp-go's CORS answers with its headers, gets
// them on the translated answer. Each is sent to the
// server alone and to the server behind the guard (two servers alike).
func TestMcpGoRefusalsBeforeItsLookupPassThrough(t *testing.T) {
	const call = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope"%s}}`
	build := func(guarded bool, tools toolguardmcpgo.Options, opts ...server.StreamableHTTPOption) http.Handler {
		s := newMCPGo("echo")
		s.AddTool(mcp.NewTool("wait"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			waiting <- struct{}{}
			<-release
			return mcp.NewToolResultText("waited"), nil
		})
		h := server.NewStreamableHTTPServer(s, opts...)
		if !guarded {
			return h
		}
		tools.AnswerBeforeServer = true
		ts, err := toolguardmcpgo.Tools(s, h, tools)
		if err != nil {
			t.Fatal(err)
		}
		g, err := toolguard.New(toolguard.Options{Tools: ts, MaxBodyBytes: 1024})
		if err != nil {
			t.Fatal(err)
		}
		return g.Handler(h)
	}
	same := func(t *testing.T, name string, tools toolguardmcpgo.Options, opts []server.StreamableHTTPOption, send func(h http.Handler) *httptest.ResponseRecorder) {
		t.Helper()
		alone, guarded := send(build(false, tools, opts...)), send(build(true, tools, opts...))
		if alone.Code == 200 && strings.Contains(alone.Body.String(), "not found") {
			t.Fatalf("%s: mcp-go alone looked the tool up: %d %s", name, alone.Code, alone.Body)
		}
		if alone.Code != guarded.Code || alone.Body.String() != guarded.Body.String() {
			t.Errorf("%s: alone %d %s\nguarded %d %s", name, alone.Code, alone.Body, guarded.Code, guarded.Body)
		}
	}
	stateless := []server.StreamableHTTPOption{server.WithStateLess(true), server.WithMaxRequestBodyBytes(1024)}
	post := func(path, host, body string) func(h http.Handler) *httptest.ResponseRecorder {
		return func(h http.Handler) *httptest.ResponseRecorder {
			r := httptest.NewRequest("POST", "http://x"+path, strings.NewReader(body))
			r.Host = host
			r.Header = http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"},
				"Mcp-Protocol-Version": {"2025-11-25"}}
			addr, _ := net.ResolveTCPAddr("tcp", "10.0.0.5:8080")
			r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, addr))
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			return w
		}
	}
	for _, member := range []string{`,"Cursor":"c"`, `,"reason":1,"reason":2`, `,"progreſs":1`, `,"\u0055RI":"u"`, `,"taskID":"t"`, `,"Message":"m"`} {
		same(t, member, toolguardmcpgo.Options{Stateless: true}, stateless, post("/mcp", "mcp.example.com", strings.Replace(call, "%s", member, 1)))
	}
	plain := strings.Replace(call, "%s", "", 1)
	hosts := append(stateless, server.WithAllowedHosts("mcp.example.com"))
	same(t, "a Host not allowed", toolguardmcpgo.Options{Stateless: true, AllowedHosts: []string{"mcp.example.com"}}, hosts, post("/mcp", "evil.example:8080", plain))
	empty := append(stateless, server.WithAllowedHosts(""))
	same(t, "no Host, an empty entry allowed", toolguardmcpgo.Options{Stateless: true, AllowedHosts: []string{""}}, empty, post("/mcp", "", plain))
	metadata := append(stateless, server.WithProtectedResourceMetadata(server.ProtectedResourceMetadataConfig{Resource: "https://mcp.example.com/mcp"}))
	same(t, "the metadata path", toolguardmcpgo.Options{Stateless: true}, metadata, post("/.well-known/oauth-protected-resource/mcp", "mcp.example.com", plain))
	same(t, "a body over the limit", toolguardmcpgo.Options{Stateless: true}, stateless,
		post("/mcp", "mcp.example.com", strings.Replace(call, "%s", `,"arguments":{"text":"`+strings.Repeat("x", 2000)+`"}`, 1)))

	// A browser's call to a server with CORS: mcp-go looks the name up and
	// puts its CORS headers on the answer, which the guard translates.
	cors := append(stateless, server.WithStreamableHTTPCORS(server.WithCORSAllowedOrigins("https://app.example")))
	fromApp := func(h http.Handler) *httptest.ResponseRecorder {
		r := httptest.NewRequest("POST", "http://mcp.example.com/mcp", strings.NewReader(plain))
		r.Header = http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"},
			"Mcp-Protocol-Version": {"2025-11-25"}, "Origin": {"https://app.example"}}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	alone, guarded := fromApp(build(false, toolguardmcpgo.Options{Stateless: true}, cors...)), fromApp(build(true, toolguardmcpgo.Options{Stateless: true}, cors...))
	if origin := alone.Header().Get("Access-Control-Allow-Origin"); origin == "" || guarded.Header().Get("Access-Control-Allow-Origin") != origin ||
		!strings.Contains(guarded.Body.String(), `"code":-32602`) {
		t.Errorf("a browser's call: alone %v %s\nguarded %v %s", alone.Header(), alone.Body, guarded.Header(), guarded.Body)
	}

	// A declared set in front of mcp-go leaves its metadata path to it too.
	s := newMCPGo("echo")
	h := server.NewStreamableHTTPServer(s, metadata...)
	g, err := toolguard.New(toolguard.Options{Tools: toolguard.StaticTools("echo")})
	if err != nil {
		t.Fatal(err)
	}
	send := post("/.well-known/oauth-protected-resource/mcp", "mcp.example.com", plain)
	if a, b := send(h), send(g.Handler(h)); a.Code == 200 || a.Code != b.Code || a.Body.String() != b.Body.String() {
		t.Errorf("StaticTools, the metadata path: alone %d %s\nguarded %d %s", a.Code, a.Body, b.Code, b.Body)
	}

	// An id in flight in a session: the first call (a tool that waits)
	// holds id 7 while the second, for a name mcp-go does not have, comes.
	same(t, "an id in flight", toolguardmcpgo.Options{}, nil, func(h http.Handler) *httptest.ResponseRecorder {
		return inFlight(t, h)
	})
}

// inFlight opens a session on h, whose server has the tool wait, calls it
// with id 7, and while it runs calls nope with id 7 too; it returns the
// second answer.
func inFlight(t *testing.T, h http.Handler) *httptest.ResponseRecorder {
	t.Helper()
	hdr := http.Header{"Mcp-Protocol-Version": {"2025-11-25"}}
	w := fixture.Send(h, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, hdr)
	hdr.Set("Mcp-Session-Id", w.Header().Get("Mcp-Session-Id"))
	fixture.Send(h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		fixture.Send(h, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"wait"}}`, hdr)
	}()
	<-waiting
	second := fixture.Send(h, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope"}}`, hdr)
	release <- struct{}{}
	wg.Wait()
	return second
}

// waiting says the wait tool has begun; release lets it end.
var waiting, release = make(chan struct{}), make(chan struct{})

// TestDifferentialMcpGoAnswerBeforeServer holds the corpus, with its
// header and _meta variations, against interop's mcp-go (v1.6) with
// AnswerBeforeServer, in every mode: no wrong rejection, no answer where
// mcp-go refuses first, every other answer byte for byte. Calls without a
// session are answered before the server; in a session every answer is a
// translation.
func TestDifferentialMcpGoAnswerBeforeServer(t *testing.T) {
	var total fixture.Tally
	for _, mode := range []string{"stateless", "2026-07-28", "session"} {
		t.Run(mode, func(t *testing.T) {
			d := &fixture.Differential{UnknownTool: fixture.MCPGoUnknownTool, Exact: true}
			s := server.NewMCPServer("diff", "1.0.0", server.WithToolCapabilities(true))
			for _, n := range []string{"echo", "get_weather", "Ünïcode"} {
				s.AddTool(mcp.NewTool(n, mcp.WithString("text")), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					d.Ran(n)
					return mcp.NewToolResultText("ran " + n), nil
				})
			}
			var opts []server.StreamableHTTPOption
			if mode == "stateless" {
				opts = append(opts, server.WithStateLess(true))
			}
			h := server.NewStreamableHTTPServer(s, opts...)
			tools, err := toolguardmcpgo.Tools(s, h, toolguardmcpgo.Options{AnswerBeforeServer: true, Stateless: mode == "stateless"})
			if err != nil {
				t.Fatal(err)
			}
			var before int
			g, err := toolguard.New(toolguard.Options{Tools: tools, OnReject: func(_ *http.Request, rej *toolguard.Rejection) {
				d.Rejected(rej.Name)
				if !rej.Translated {
					before++
				}
			}})
			if err != nil {
				t.Fatal(err)
			}
			d.Alone, d.Guarded = h, g.Handler(d.Tee(h))
			session := ""
			if mode == "session" {
				w := fixture.Send(h, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"diff","version":"1"}}}`,
					http.Header{"Mcp-Protocol-Version": {"2025-11-25"}})
				session = w.Header().Get("Mcp-Session-Id")
			}
			headers := func(name string) http.Header {
				if mode == "2026-07-28" {
					return http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {fixture.HeaderName(name)}}
				}
				hdr := http.Header{"Mcp-Protocol-Version": {"2025-11-25"}}
				if session != "" {
					hdr.Set("Mcp-Session-Id", session)
				}
				return hdr
			}
			meta := ""
			if mode == "2026-07-28" {
				meta = fixture.ModernMeta
			}
			var tl fixture.Tally
			for _, name := range fixture.Names {
				for _, body := range fixture.Corpus(name, meta) {
					d.Compare(t, body, headers(name), &tl)
				}
			}
			d.CompareVariants(t, []string{"echo", "nope"}, meta, headers, &tl)
			if tl.Rejected == 0 || tl.RanAlone == 0 || (before > 0) != (mode != "session") {
				t.Errorf("%s: %d answered before the server; %v", mode, before, tl)
			}
			t.Logf("mcp-go (interop's), %s, AnswerBeforeServer: %v; %d answered before the server", mode, tl, before)
			total.Add(tl)
		})
	}
	t.Logf("all modes: %v", total)
}
