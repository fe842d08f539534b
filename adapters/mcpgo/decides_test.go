package toolguardmcpgo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolguard/toolguard/internal/fixture"
	toolguard "github.com/toolguard/toolguard/middleware"
)

// A setup is a server under test: it adds its tools and hooks to s, and
// may wrap mcp-go's handler (the handler the guard is in front of).
type setup struct {
	tools func(s *server.MCPServer, hooks *server.Hooks)
	wrap  func(http.Handler) http.Handler
}

// peer is one server of a pair: mcp-go alone, or the same server guarded.
type peer struct {
	s       *server.MCPServer
	h       http.Handler
	session string
	modern  bool
	before  bool // guarded with AnswerBeforeServer
}

// pair builds the setup twice, alone and guarded, each a server of its
// own (hooks that change state must not see the other's calls), in mode
// ("session", "stateless" or "2026-07-28").
func pair(t *testing.T, mode string, before bool, st setup) (alone, guarded *peer) {
	t.Helper()
	build := func(guard bool) *peer {
		hooks := &server.Hooks{}
		s := server.NewMCPServer("decides", "1.0.0", server.WithToolCapabilities(true), server.WithHooks(hooks))
		for _, n := range []string{"echo", "get_weather"} {
			s.AddTool(mcp.NewTool(n, mcp.WithString("text")), ran(n))
		}
		if st.tools != nil {
			st.tools(s, hooks)
		}
		var opts []server.StreamableHTTPOption
		if mode == "stateless" {
			opts = append(opts, server.WithStateLess(true))
		}
		sdk := server.NewStreamableHTTPServer(s, opts...)
		var h http.Handler = sdk
		if st.wrap != nil {
			h = st.wrap(h)
		}
		p := &peer{s: s, h: h, modern: mode == "2026-07-28", before: guard && before}
		if guard {
			p.h = behindGuard(t, s, h, mode, before, nil)
		}
		if mode == "session" {
			p.session = initialize(t, p.h)
		}
		return p
	}
	return build(false), build(true)
}

func ran(name string) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("ran " + name), nil
	}
}

// call sends a tools/call for name as a client of p does.
func (p *peer) call(name string) (status int, ctype, body string) {
	meta, hdr := "", http.Header{"Mcp-Protocol-Version": {"2025-11-25"}}
	if p.modern {
		meta = fixture.ModernMeta
		hdr = http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {fixture.HeaderName(name)}}
	}
	if p.session != "" {
		hdr.Set("Mcp-Session-Id", p.session)
	}
	w := fixture.Send(p.h, fixture.Corpus(name, meta)[0], hdr)
	return w.Code, w.Header().Get("Content-Type"), w.Body.String()
}

// list sends the caller's tools/list, as a client does before it calls:
// the guard keeps mcp-go's answer for data.availableTools.
func (p *peer) list() {
	meta, hdr := "", http.Header{"Mcp-Protocol-Version": {"2025-11-25"}}
	if p.modern {
		meta = strings.TrimPrefix(fixture.ModernMeta, ",")
		hdr = http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/list"}}
	}
	if p.session != "" {
		hdr.Set("Mcp-Session-Id", p.session)
	}
	fixture.Send(p.h, `{"jsonrpc":"2.0","id":"list","method":"tools/list","params":{`+meta+`}}`, hdr)
}

// ping sends a ping as a client of p does: in a session, mcp-go hands it
// the notifications queued for the session (tools/list_changed after a
// tool was added), so that the next call's answer carries none.
func (p *peer) ping() {
	hdr := http.Header{"Mcp-Protocol-Version": {"2025-11-25"}}
	if p.session != "" {
		hdr.Set("Mcp-Session-Id", p.session)
	}
	fixture.Send(p.h, `{"jsonrpc":"2.0","id":"ping","method":"ping"}`, hdr)
}

// same lists the tools and calls name on both peers: the guarded answer is mcp-go's alone,
// byte for byte, or, where mcp-go answered its own not-found, the guard's
// -32602 with the caller's tools in data (never a name in hidden), with
// mcp-go's status and Content-Type. An answer before the server is JSON
// (the client accepts both) where mcp-go would have answered an event
// stream: a session's answers are event streams once mcp-go has sent the
// session a notification on one.
func same(t *testing.T, alone, guarded *peer, name string, hidden ...string) (notFound bool) {
	t.Helper()
	alone.list()
	guarded.list()
	as, at, ab := alone.call(name)
	gs, gt, gb := guarded.call(name)
	if _, notFound = fixture.MCPGoUnknownTool(ab); !notFound {
		if as != gs || at != gt || ab != gb {
			t.Errorf("%s: alone %d %s %q, guarded %d %s %q", name, as, at, ab, gs, gt, gb)
		}
		return false
	}
	a := fixture.ReadAnswer(t, gb)
	if gs != as || gt != at && !(guarded.before && gt == "application/json") || a.Code != -32602 || !fixture.IsGuardMessage(a.Message, name) || len(a.Data.AvailableTools) == 0 {
		t.Errorf("%s: alone %d %s %q, guarded %d %s %q: want the guard's -32602 with data, mcp-go's status and type", name, as, at, ab, gs, gt, gb)
	}
	for _, n := range hidden {
		if slices.Contains(a.Data.AvailableTools, n) || slices.Contains(a.Data.Suggestions, n) || strings.Contains(gb, `"`+n+`"`) {
			t.Errorf("%s: the hidden name %q is in the guard's answer: %s", name, n, gb)
		}
	}
	return true
}

// each runs f in every mode, with and without AnswerBeforeServer.
func each(t *testing.T, f func(t *testing.T, mode string, before bool)) {
	for _, mode := range []string{"session", "stateless", "2026-07-28"} {
		for _, before := range []bool{false, true} {
			name := mode
			if before {
				name += "/before"
			}
			t.Run(name, func(t *testing.T) { f(t, mode, before) })
		}
	}
}

// In every mode, era and framing: a known call passes untouched, an
// unknown one gets the guard's -32602 with availableTools, with the
// server's status and Content-Type. The event-stream answers come from a
// BeforeCallTool hook that has mcp-go answer the call as an event stream.
func TestKnownAndUnknownInEveryMode(t *testing.T) {
	for _, framing := range []string{"json", "sse"} {
		t.Run(framing, func(t *testing.T) {
			each(t, func(t *testing.T, mode string, before bool) {
				var st setup
				if framing == "sse" {
					st.tools = func(s *server.MCPServer, hooks *server.Hooks) {
						hooks.AddBeforeCallTool(func(ctx context.Context, id any, req *mcp.CallToolRequest) {
							if s, ok := server.ClientSessionFromContext(ctx).(server.SessionWithStreamableHTTPConfig); ok {
								s.UpgradeToSSEWhenReceiveNotification()
							}
						})
					}
				}
				alone, guarded := pair(t, mode, before, st)
				if _, ct, _ := alone.call("echo"); ct != map[string]string{"json": "application/json", "sse": "text/event-stream"}[framing] {
					t.Fatalf("mcp-go alone answers %s, not %s", ct, framing)
				}
				if same(t, alone, guarded, "echo") {
					t.Error("echo: not found alone")
				}
				if !same(t, alone, guarded, "get_weathr") {
					t.Error("get_weathr: not mcp-go's not-found answer alone")
				}
				_, _, b := guarded.call("get_weathr")
				if a := fixture.ReadAnswer(t, b); fmt.Sprint(a.Data.AvailableTools) != "[echo get_weather]" || fmt.Sprint(a.Data.Suggestions) != "[get_weather]" {
					t.Errorf("data: %+v", a.Data)
				}
			})
		})
	}
}

// A session's tools are Present, in its list, and gone with it: after
// the session ended, a call for one gets mcp-go's not-found answer,
// translated, as alone.
func TestSessionTools(t *testing.T) {
	for _, before := range []bool{false, true} {
		alone, guarded := pair(t, "session", before, setup{})
		for _, p := range []*peer{alone, guarded} {
			if err := p.s.AddSessionTool(p.session, mcp.NewTool("mine"), ran("mine")); err != nil {
				t.Fatal(err)
			}
			p.ping()
		}
		if same(t, alone, guarded, "mine") {
			t.Error("the session tool did not run alone")
		}
		if _, _, b := guarded.call("mina"); fmt.Sprint(fixture.ReadAnswer(t, b).Data.AvailableTools) != "[echo get_weather mine]" {
			t.Errorf("the session's list: %s", b)
		}
		for _, p := range []*peer{alone, guarded} {
			r := httptest.NewRequest("DELETE", "/mcp", nil)
			r.Header.Set("Mcp-Session-Id", p.session)
			w := httptest.NewRecorder()
			p.h.ServeHTTP(w, r)
			if w.Code != 200 {
				t.Fatalf("DELETE: %d %s", w.Code, w.Body)
			}
		}
		if !same(t, alone, guarded, "mine") {
			t.Error("the ended session's tool: not mcp-go's not-found answer alone")
		}
	}
}

// A tool added at runtime runs at once, whatever the tool set read
// before; a deleted one gets a -32602, from the guard or mcp-go.
func TestRuntimeChanges(t *testing.T) {
	each(t, func(t *testing.T, mode string, before bool) {
		alone, guarded := pair(t, mode, before, setup{})
		for i := range 10 {
			name := fmt.Sprintf("added_%d", i)
			if !same(t, alone, guarded, name) {
				t.Fatalf("%s before it exists: not mcp-go's not-found answer alone", name)
			}
			for _, p := range []*peer{alone, guarded} {
				p.s.AddTool(mcp.NewTool(name), ran(name))
				p.ping()
			}
			if same(t, alone, guarded, name) {
				t.Fatalf("%s did not run right after it was added", name)
			}
		}
		for _, p := range []*peer{alone, guarded} {
			p.s.DeleteTools("added_0")
			p.ping()
		}
		if !same(t, alone, guarded, "added_0") {
			t.Error("the deleted tool: not mcp-go's not-found answer alone")
		}
	})
}

// oneTool is an mcp-go server with the global tool name, and its tool set.
func oneTool(t *testing.T, name string) (*server.MCPServer, *ToolSet) {
	t.Helper()
	s := server.NewMCPServer("registry", "1.0.0", server.WithToolCapabilities(true))
	s.AddTool(mcp.NewTool(name), ran(name))
	tools, err := Tools(s, server.NewStreamableHTTPServer(s), Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s, tools
}

// The registry is read at call time: a tool added after Tools is Present
// at once, and a tool deleted is not Present from the moment it is gone.
func TestGlobalToolsFollowTheRegistry(t *testing.T) {
	s, tools := oneTool(t, "old")
	r := httptest.NewRequest("POST", "/mcp", nil)
	s.AddTool(mcp.NewTool("new"), ran("new"))
	if p := tools.Lookup(r, "new"); p != toolguard.Present {
		t.Fatalf("a tool added after Tools: %v, want Present", p)
	}
	s.DeleteTools("old", "new")
	if pOld, pNew := tools.Lookup(r, "old"), tools.Lookup(r, "new"); pOld == toolguard.Present || pNew == toolguard.Present {
		t.Fatalf("deleted tools: %v %v, want neither Present", pOld, pNew)
	}
}

// A tool deleted before a call answered before the server is not in that
// answer's list: the list is read at call time.
func TestAnswerBeforeTheServerListsNoDeletedTool(t *testing.T) {
	alone, guarded := pair(t, "stateless", true, setup{tools: func(s *server.MCPServer, _ *server.Hooks) {
		s.AddTool(mcp.NewTool("retired"), ran("retired"))
	}})
	for _, p := range []*peer{alone, guarded} {
		p.s.DeleteTools("retired")
	}
	if !same(t, alone, guarded, "nope", "retired") {
		t.Fatal("nope: not mcp-go's not-found answer alone")
	}
}

// addSessionTool gives the caller's session (the one mcp-go serves the
// request in) one more tool, as a hook does.
func addSessionTool(ctx context.Context, name string) {
	st, ok := server.ClientSessionFromContext(ctx).(server.SessionWithTools)
	if !ok {
		return
	}
	tools := maps.Clone(st.GetSessionTools())
	if tools == nil {
		tools = map[string]server.ServerTool{}
	}
	tools[name] = server.ServerTool{Tool: mcp.NewTool(name), Handler: ran(name)}
	st.SetSessionTools(tools)
}

// A tool loaded by a BeforeCallTool hook runs, as alone.
func TestBeforeCallToolHookLoadsATool(t *testing.T) {
	each(t, func(t *testing.T, mode string, before bool) {
		alone, guarded := pair(t, mode, before, setup{tools: func(s *server.MCPServer, hooks *server.Hooks) {
			hooks.AddBeforeCallTool(func(ctx context.Context, id any, req *mcp.CallToolRequest) {
				if req.Params.Name == "lazy" {
					addSessionTool(ctx, "lazy")
				}
			})
		}})
		if same(t, alone, guarded, "lazy") {
			t.Error("the lazy tool did not run alone")
		}
		if !same(t, alone, guarded, "nope") {
			t.Error("nope: not mcp-go's not-found answer alone")
		}
	})
}

// alias is a middleware in front of mcp-go that maps an old tool name to
// its new one.
func alias(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		body = bytes.ReplaceAll(body, []byte(`"name":"old_echo"`), []byte(`"name":"echo"`))
		if r.Header.Get("Mcp-Name") == "old_echo" {
			r.Header.Set("Mcp-Name", "echo")
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		next.ServeHTTP(w, r)
	})
}

// A tool renamed by a middleware between the guard and mcp-go runs under
// its old name, as alone.
func TestAliasingMiddleware(t *testing.T) {
	each(t, func(t *testing.T, mode string, before bool) {
		alone, guarded := pair(t, mode, before, setup{wrap: alias})
		if same(t, alone, guarded, "old_echo") {
			t.Error("old_echo did not run alone")
		}
		same(t, alone, guarded, "nope")
	})
}

// A request hook that refuses tools/call (a quota) refuses it through
// the guard too, with its own answer, for known and unknown names alike.
func TestRequestHookRefusesCalls(t *testing.T) {
	each(t, func(t *testing.T, mode string, before bool) {
		alone, guarded := pair(t, mode, before, setup{tools: func(s *server.MCPServer, hooks *server.Hooks) {
			hooks.AddOnRequestInitialization(func(ctx context.Context, id any, message any) error {
				if raw, ok := message.(json.RawMessage); ok && bytes.Contains(raw, []byte(`"tools/call"`)) {
					return errors.New("quota exceeded for this caller")
				}
				return nil
			})
		}})
		for _, name := range []string{"echo", "nope"} {
			if same(t, alone, guarded, name) {
				t.Errorf("%s: the hook did not refuse it alone", name)
			}
		}
		if _, _, b := guarded.call("nope"); !strings.Contains(b, "quota exceeded") {
			t.Errorf("guarded: %s", b)
		}
	})
}

// A name an AfterListTools hook hides from the caller's list is never in
// the guard's answer, and still runs when called, as alone.
func TestAfterListToolsHookHidesAName(t *testing.T) {
	each(t, func(t *testing.T, mode string, before bool) {
		alone, guarded := pair(t, mode, before, setup{tools: func(s *server.MCPServer, hooks *server.Hooks) {
			s.AddTool(mcp.NewTool("secret", mcp.WithString("text")), ran("secret"))
			hooks.AddAfterListTools(func(ctx context.Context, id any, req *mcp.ListToolsRequest, res *mcp.ListToolsResult) {
				res.Tools = slices.DeleteFunc(res.Tools, func(t mcp.Tool) bool { return t.Name == "secret" })
			})
		}})
		for _, name := range []string{"secre", "Secret", "nope"} {
			if !same(t, alone, guarded, name, "secret") {
				t.Errorf("%s: not mcp-go's not-found answer alone", name)
			}
		}
		if same(t, alone, guarded, "secret") {
			t.Error("secret did not run alone")
		}
	})
}

// A BeforeListTools hook that loads a tool into the caller's session:
// once the caller has listed, the call runs, as alone (the guard never
// answers first where such a hook is set).
func TestBeforeListToolsHookLoadsATool(t *testing.T) {
	each(t, func(t *testing.T, mode string, before bool) {
		alone, guarded := pair(t, mode, before, setup{tools: func(s *server.MCPServer, hooks *server.Hooks) {
			hooks.AddBeforeListTools(func(ctx context.Context, id any, req *mcp.ListToolsRequest) {
				addSessionTool(ctx, "listed_lazy")
			})
		}})
		if same(t, alone, guarded, "listed_lazy") {
			t.Error("listed_lazy: did not run alone once listed")
		}
	})
}

// With AnswerBeforeServer, a name mcp-go does not have is Absent only
// where mcp-go looks it up: not in a session (mcp-go v1.6 refuses an id
// already in flight in it), not at the protected resource metadata path
// (which refuses a POST), not for a Host that AllowedHosts (mcp-go's
// WithAllowedHosts) turns away, nor for a foreign Host on a loopback
// listener.
func TestAbsentOnlyWhereMcpGoLooksTheNameUp(t *testing.T) {
	s := server.NewMCPServer("hosts", "1.0.0", server.WithToolCapabilities(true))
	s.AddTool(mcp.NewTool("echo"), ran("echo"))
	h := server.NewStreamableHTTPServer(s, server.WithStateLess(true))
	request := func(path, host, local string, hdr http.Header) *http.Request {
		r := httptest.NewRequest("POST", "http://x"+path, nil)
		r.Host = host
		r.Header = hdr
		addr, _ := net.ResolveTCPAddr("tcp", local)
		return r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, addr))
	}
	v2025 := http.Header{"Mcp-Protocol-Version": {"2025-11-25"}}
	session := http.Header{"Mcp-Protocol-Version": {"2025-11-25"}, "Mcp-Session-Id": {"s-1"}}
	for _, c := range []struct {
		name    string
		allowed []string
		r       *http.Request
		want    toolguard.Presence
	}{
		{"a sessionless call", nil, request("/mcp", "mcp.example.com", "10.0.0.5:8080", v2025), toolguard.Absent},
		{"a call in a session", nil, request("/mcp", "mcp.example.com", "10.0.0.5:8080", session), toolguard.Unsure},
		{"the metadata path", nil, request("/.well-known/oauth-protected-resource/mcp", "mcp.example.com", "10.0.0.5:8080", v2025), toolguard.Unsure},
		{"a foreign Host on loopback", nil, request("/mcp", "evil.example", "127.0.0.1:8080", v2025), toolguard.Unsure},
		{"an allowed Host", []string{"mcp.example.com"}, request("/mcp", "mcp.example.com", "10.0.0.5:8080", v2025), toolguard.Absent},
		{"a Host not allowed", []string{"mcp.example.com"}, request("/mcp", "evil.example:8080", "10.0.0.5:8080", v2025), toolguard.Unsure},
		{"loopback, allowed always", []string{"mcp.example.com"}, request("/mcp", "localhost:8080", "10.0.0.5:8080", v2025), toolguard.Absent},
	} {
		tools, err := Tools(s, h, Options{AnswerBeforeServer: true, Stateless: true, AllowedHosts: c.allowed})
		if err != nil {
			t.Fatal(err)
		}
		if got := tools.Lookup(c.r, "nope"); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	// A session mcp-go opened, guarded as the author would.
	stateful := server.NewStreamableHTTPServer(s)
	tools, err := Tools(s, stateful, Options{AnswerBeforeServer: true})
	if err != nil {
		t.Fatal(err)
	}
	guard, err := toolguard.New(toolguard.Options{Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	id := initialize(t, guard.Handler(stateful))
	r := request("/mcp", "mcp.example.com", "10.0.0.5:8080", http.Header{"Mcp-Protocol-Version": {"2025-11-25"}, "Mcp-Session-Id": {id}})
	if got := tools.Lookup(r, "nope"); got != toolguard.Unsure {
		t.Errorf("a call in a session mcp-go opened: %v, want Unsure", got)
	}
}
