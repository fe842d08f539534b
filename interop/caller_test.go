package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolguard/toolguard/adapters/mcpgo"
	"github.com/toolguard/toolguard/internal/fixture"
	toolguard "github.com/toolguard/toolguard/middleware"
)

// Servers whose tool list depends on who asks, as github-mcp-server's does:
// delete_repository only for a client that declares elicitation,
// admin_tool only with "Authorization: Bearer admin", and nothing at all
// for a Host other than localhost (the SDKs' DNS-rebinding protection,
// live because the servers listen on loopback).

type authKey struct{}

// callerMCPGo is a real mcp-go server listing by capability and
// credentials; mcp-go enforces its tool filter at call time too.
func callerMCPGo() (*server.MCPServer, http.Handler) {
	s := server.NewMCPServer("caller-mcpgo", "1.0.0", server.WithToolCapabilities(true),
		server.WithToolFilter(func(ctx context.Context, tools []mcp.Tool) []mcp.Tool {
			elicits := false
			if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.ClientCapabilities != nil {
				elicits = info.ClientCapabilities.Elicitation != nil
			} else if cs, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok {
				elicits = cs.GetClientCapabilities().Elicitation != nil
			}
			admin := ctx.Value(authKey{}) == "Bearer admin"
			return slices.DeleteFunc(tools, func(t mcp.Tool) bool {
				return t.Name == "delete_repository" && !elicits || t.Name == "admin_tool" && !admin
			})
		}))
	for _, n := range []string{"get_repository", "delete_repository", "admin_tool"} {
		s.AddTool(mcp.NewTool(n), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("ran " + n), nil
		})
	}
	h := server.NewStreamableHTTPServer(s, server.WithStateLess(true),
		server.WithHTTPContextFunc(func(ctx context.Context, r *http.Request) context.Context {
			return context.WithValue(ctx, authKey{}, r.Header.Get("Authorization"))
		}))
	return s, h
}

// callerGoSDK is a real go-sdk handler that builds, per request, the server
// this caller may use: go-sdk decides what a caller sees by which *Server
// it serves the request with.
func callerGoSDK() http.Handler {
	text := func(n string) gosdk.ToolHandler {
		return func(ctx context.Context, req *gosdk.CallToolRequest) (*gosdk.CallToolResult, error) {
			return &gosdk.CallToolResult{Content: []gosdk.Content{&gosdk.TextContent{Text: "ran " + n}}}, nil
		}
	}
	var mu sync.Mutex
	servers := map[[2]bool]*gosdk.Server{}
	return gosdk.NewStreamableHTTPHandler(func(r *http.Request) *gosdk.Server {
		elicits := false
		if r.Body != nil {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var m struct {
				Params struct {
					Meta map[string]json.RawMessage `json:"_meta"`
				} `json:"params"`
			}
			if json.Unmarshal(body, &m) == nil {
				var caps struct {
					Elicitation json.RawMessage `json:"elicitation"`
				}
				elicits = json.Unmarshal(m.Params.Meta["io.modelcontextprotocol/clientCapabilities"], &caps) == nil && caps.Elicitation != nil
			}
		}
		key := [2]bool{elicits, r.Header.Get("Authorization") == "Bearer admin"}
		mu.Lock()
		defer mu.Unlock()
		if s := servers[key]; s != nil {
			return s
		}
		s := gosdk.NewServer(&gosdk.Implementation{Name: "caller-gosdk", Version: "1.0.0"}, nil)
		s.AddTool(&gosdk.Tool{Name: "get_repository", InputSchema: map[string]any{"type": "object"}}, text("get_repository"))
		if key[0] {
			s.AddTool(&gosdk.Tool{Name: "delete_repository", InputSchema: map[string]any{"type": "object"}}, text("delete_repository"))
		}
		if key[1] {
			s.AddTool(&gosdk.Tool{Name: "admin_tool", InputSchema: map[string]any{"type": "object"}}, text("admin_tool"))
		}
		servers[key] = s
		return s
	}, &gosdk.StreamableHTTPOptions{Stateless: true})
}

// callerCase is one call by one kind of caller.
type callerCase struct {
	name    string
	tool    string
	caps    string // clientCapabilities in _meta
	auth    string
	host    string
	runs    bool // the server alone runs the tool
	refused bool // the server alone refuses before dispatch (foreign Host)
}

var callerCases = []callerCase{
	{name: "declares elicitation", tool: "delete_repository", caps: `{"elicitation":{}}`, runs: true},
	{name: "does not declare it", tool: "delete_repository", caps: `{}`},
	{name: "admin", tool: "admin_tool", caps: `{}`, auth: "Bearer admin", runs: true},
	{name: "not admin", tool: "admin_tool", caps: `{}`, auth: "Bearer user"},
	{name: "everyone", tool: "get_repository", caps: `{}`, runs: true},
	{name: "foreign Host, known tool", tool: "get_repository", caps: `{}`, host: "evil.example", refused: true},
	{name: "foreign Host, unknown tool", tool: "nope", caps: `{"elicitation":{}}`, host: "evil.example", refused: true},
	{name: "foreign Host, hidden tool", tool: "delete_repository", caps: `{}`, host: "evil.example", refused: true},
}

// callerMeta is the params._meta of c's 2026-07-28 requests: its list and
// its calls carry the same one, as a client's do.
func callerMeta(c callerCase) string {
	return `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"caller-test","version":"1"},` +
		`"io.modelcontextprotocol/clientCapabilities":` + c.caps + `}`
}

// callerHeaders are the headers of c's 2026-07-28 request of method.
func callerHeaders(c callerCase, method string) http.Header {
	hdr := http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {method}}
	if method == "tools/call" {
		hdr.Set("Mcp-Name", c.tool)
	}
	if c.auth != "" {
		hdr.Set("Authorization", c.auth)
	}
	if c.host != "" {
		hdr.Set("Host", c.host)
	}
	return hdr
}

// callerCall posts a 2026-07-28 tools/call to url as c's caller.
func callerCall(t *testing.T, url string, c callerCase) (int, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"` + c.tool + `","arguments":{},` + callerMeta(c) + `}}`
	return fixture.Post(t, url, body, callerHeaders(c, "tools/call"))
}

// callerList posts a 2026-07-28 tools/list to url as c's caller and
// returns the status, the body and the names listed.
func callerList(t *testing.T, url string, c callerCase) (int, string, []string) {
	t.Helper()
	status, body := fixture.Post(t, url, `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{`+callerMeta(c)+`}}`, callerHeaders(c, "tools/list"))
	return status, body, listedNames(body)
}

// listedNames reads the tool names of a tools/list answer (JSON or an
// event stream), sorted; nil when it is not a list.
func listedNames(body string) []string {
	var names []string
	for _, m := range fixture.Messages(body) {
		var msg struct {
			Result *struct {
				Tools []struct {
					Name string `json:"name"`
				} `json:"tools"`
			} `json:"result"`
		}
		if json.Unmarshal([]byte(m), &msg) != nil || msg.Result == nil {
			continue
		}
		names = []string{}
		for _, tool := range msg.Result.Tools {
			names = append(names, tool.Name)
		}
	}
	slices.Sort(names)
	return names
}

// dataOf reads data.availableTools of a -32602 answer, and whether the
// answer has data at all.
func dataOf(t *testing.T, body string) (tools []string, has bool) {
	t.Helper()
	for _, m := range fixture.Messages(body) {
		var msg struct {
			Error *struct {
				Data *struct {
					AvailableTools []string `json:"availableTools"`
				} `json:"data"`
			} `json:"error"`
		}
		if json.Unmarshal([]byte(m), &msg) == nil && msg.Error != nil {
			if msg.Error.Data == nil {
				return nil, false
			}
			return msg.Error.Data.AvailableTools, true
		}
	}
	return nil, false
}

// callerToolSets are the ways the guard stands in front of the two caller
// servers: the mcp-go tool set, and no tool set (the server decides every
// call), as toolguard-proxy and go-sdk users run it.
func callerToolSets(t *testing.T) []struct {
	name    string
	handler http.Handler
	tools   toolguard.ToolSet
	unknown func(body string) (string, bool)
} {
	mcpgoServer, mcpgoHandler := callerMCPGo()
	mcpgoTools, err := toolguardmcpgo.Tools(mcpgoServer, mcpgoHandler, toolguardmcpgo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	gosdkHandler := callerGoSDK()
	return []struct {
		name    string
		handler http.Handler
		tools   toolguard.ToolSet
		unknown func(body string) (string, bool)
	}{
		{"mcp-go, toolguardmcpgo", mcpgoHandler, mcpgoTools, fixture.MCPGoUnknownTool},
		{"mcp-go, no tool set", mcpgoHandler, nil, fixture.MCPGoUnknownTool},
		{"go-sdk, no tool set", gosdkHandler, nil, fixture.GoSDKUnknownTool},
	}
}

// TestListsAsTheCallerSawThem runs every caller against each server alone
// and behind the guard, twice over: each lists, then calls, as clients do.
// The list passes as the server wrote it; the guard answers exactly where
// the server looked the tool up and did not find it, with the list this
// caller was given, without the called name (never the hidden tool).
func TestListsAsTheCallerSawThem(t *testing.T) {
	for _, tc := range callerToolSets(t) {
		t.Run(tc.name, func(t *testing.T) {
			alone := httptest.NewServer(tc.handler)
			defer alone.Close()
			var mu sync.Mutex
			var rejected []*toolguard.Rejection
			g, err := toolguard.New(toolguard.Options{Tools: tc.tools, OnReject: func(r *http.Request, rej *toolguard.Rejection) {
				mu.Lock()
				rejected = append(rejected, rej)
				mu.Unlock()
			}})
			if err != nil {
				t.Fatal(err)
			}
			guarded := httptest.NewServer(g.Handler(tc.handler))
			defer guarded.Close()
			for round := range 2 {
				for _, c := range callerCases {
					mu.Lock()
					rejected = nil
					mu.Unlock()
					als, alb, aloneListed := callerList(t, alone.URL, c)
					gls, glb, listed := callerList(t, guarded.URL, c)
					if gls != als || glb != alb {
						t.Errorf("round %d, %s: tools/list alone %d %s; guarded %d %s", round, c.name, als, alb, gls, glb)
					}
					as, ab := callerCall(t, alone.URL, c)
					gs, gb := callerCall(t, guarded.URL, c)
					mu.Lock()
					answered := slices.Clone(rejected)
					mu.Unlock()
					switch {
					case c.refused:
						if as != http.StatusForbidden || gls != http.StatusForbidden || gs != as || gb != ab || len(answered) > 0 {
							t.Errorf("round %d, %s: alone %d %s; guarded %d %s (guard answered: %d)", round, c.name, as, ab, gs, gb, len(answered))
						}
					case c.runs:
						if !strings.Contains(ab, "ran "+c.tool) || gs != as || gb != ab || len(answered) > 0 {
							t.Errorf("round %d, %s: alone %d %s; guarded %d %s", round, c.name, as, ab, gs, gb)
						}
					default:
						name, ok := tc.unknown(ab)
						if !ok || name != c.tool || slices.Contains(aloneListed, c.tool) {
							t.Fatalf("round %d, %s: the server alone listed %q and answered %d %s", round, c.name, aloneListed, as, ab)
						}
						if len(answered) == 0 {
							// The mcp-go tool set finds the hidden tool with
							// GetTool: the call passes unwatched, and mcp-go's
							// tool filter refuses it in its own words.
							if tc.name != "mcp-go, toolguardmcpgo" || gs != as || gb != ab {
								t.Errorf("round %d, %s: the guard left the server's not-found answer: alone %d %s; guarded %d %s", round, c.name, as, ab, gs, gb)
							}
							continue
						}
						code, msg, _ := fixture.ErrorMessage(gb)
						tools, has := dataOf(t, gb)
						want := slices.DeleteFunc(slices.Clone(listed), func(n string) bool { return n == c.tool })
						if gs != as || code != -32602 || !fixture.IsGuardMessage(msg, c.tool) || !answered[0].Translated || !has || !slices.Equal(tools, want) || answered[0].ListErr != nil {
							t.Errorf("round %d, %s: alone %d %s; guarded %d %s; want availableTools %q (listed %q)", round, c.name, as, ab, gs, gb, want, listed)
						}
					}
				}
			}
		})
	}
}

// TestListNeverShownToAnotherCaller: a caller that declares elicitation
// and holds the admin credentials lists, and its unknown call gets its
// list. A caller with other credentials, or other declared capabilities,
// that has not listed, gets -32602 without data (ErrNoList), never the
// first caller's list; once it lists, it gets its own. Against mcp-go and
// go-sdk servers whose list depends on both, and the TypeScript SDK v2
// capability server behind a reverse proxy.
func TestListNeverShownToAnotherCaller(t *testing.T) {
	type server struct {
		name    string
		handler http.Handler
		tools   toolguard.ToolSet
		hidden  []string // names only the first caller is listed
	}
	var servers []server
	for _, tc := range callerToolSets(t) {
		servers = append(servers, server{tc.name, tc.handler, tc.tools, []string{"admin_tool", "delete_repository"}})
	}
	if !testing.Short() {
		servers = append(servers, server{"TypeScript SDK v2", behindProxy(t, fixture.StartNode(t, "v2-caps-server.mjs", "--host-check").URL), nil, []string{"delete_repository"}})
	}
	first := callerCase{name: "first", tool: "nope", caps: `{"elicitation":{}}`, auth: "Bearer admin"}
	others := []callerCase{
		{name: "other credentials", tool: "nope", caps: `{"elicitation":{}}`, auth: "Bearer user"},
		{name: "no credentials", tool: "nope", caps: `{"elicitation":{}}`},
		{name: "other capabilities", tool: "nope", caps: `{}`, auth: "Bearer admin"},
		{name: "other capabilities and credentials", tool: "nope", caps: `{}`, auth: "Bearer user"},
	}
	for _, sv := range servers {
		t.Run(sv.name, func(t *testing.T) {
			var mu sync.Mutex
			var rejected []*toolguard.Rejection
			g, err := toolguard.New(toolguard.Options{Tools: sv.tools, OnReject: func(r *http.Request, rej *toolguard.Rejection) {
				mu.Lock()
				rejected = append(rejected, rej)
				mu.Unlock()
			}})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(g.Handler(sv.handler))
			defer srv.Close()
			last := func() *toolguard.Rejection {
				mu.Lock()
				defer mu.Unlock()
				if len(rejected) == 0 {
					return nil
				}
				return rejected[len(rejected)-1]
			}
			_, _, firstListed := callerList(t, srv.URL, first)
			for _, h := range sv.hidden {
				if !slices.Contains(firstListed, h) {
					t.Fatalf("the first caller was listed %q, without %s", firstListed, h)
				}
			}
			_, body := callerCall(t, srv.URL, first)
			if tools, _ := dataOf(t, body); !slices.Equal(tools, firstListed) {
				t.Fatalf("the first caller's unknown call: %s; want availableTools %q", body, firstListed)
			}
			for _, c := range others {
				status, body := callerCall(t, srv.URL, c)
				code, msg, _ := fixture.ErrorMessage(body)
				rej := last()
				if _, has := dataOf(t, body); code != -32602 || !fixture.IsGuardMessage(msg, "nope") || has || rej == nil || !errors.Is(rej.ListErr, toolguard.ErrNoList) {
					t.Errorf("%s, before listing: %d %s (rejection %+v); want -32602 without data", c.name, status, body, rej)
				}
				for _, h := range sv.hidden {
					if strings.Contains(body, h) {
						t.Errorf("%s was shown %s: %s", c.name, h, body)
					}
				}
				_, _, listed := callerList(t, srv.URL, c)
				_, body = callerCall(t, srv.URL, c)
				if tools, has := dataOf(t, body); !has || !slices.Equal(tools, listed) {
					t.Errorf("%s, after listing %q: %s", c.name, listed, body)
				}
			}
			// The first caller's list is still its own.
			_, body = callerCall(t, srv.URL, first)
			if tools, _ := dataOf(t, body); !slices.Equal(tools, firstListed) {
				t.Errorf("the first caller, last: %s; want availableTools %q", body, firstListed)
			}
		})
	}
}

// TestListNeverShownToAnotherSession: against stateful mcp-go and go-sdk
// servers, session A lists; session B (same headers but its session id)
// gets -32602 without data for an unknown call, A gets its list.
func TestListNeverShownToAnotherSession(t *testing.T) {
	mcpgoServer := newMCPGo("echo", "add")
	mcpgoHandler := server.NewStreamableHTTPServer(mcpgoServer)
	mcpgoTools, err := toolguardmcpgo.Tools(mcpgoServer, mcpgoHandler, toolguardmcpgo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		handler http.Handler
		tools   toolguard.ToolSet
	}{
		{"mcp-go, toolguardmcpgo", mcpgoHandler, mcpgoTools},
		{"go-sdk, no tool set", goSDKHandler(newGoSDK("echo", "add"), nil), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := toolguard.New(toolguard.Options{Tools: tc.tools})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(g.Handler(tc.handler))
			defer srv.Close()
			a, b := openSession(t, srv.URL), openSession(t, srv.URL)
			hdr := func(session string) http.Header {
				return http.Header{"Mcp-Protocol-Version": {"2025-11-25"}, "Mcp-Session-Id": {session}}
			}
			_, list := fixture.Post(t, srv.URL, `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`, hdr(a))
			if names := listedNames(list); !slices.Equal(names, []string{"add", "echo"}) {
				t.Fatalf("session A's tools/list: %s", list)
			}
			call := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nope","arguments":{}}}`
			_, bBody := fixture.Post(t, srv.URL, call, hdr(b))
			if _, has := dataOf(t, bBody); has || !strings.Contains(bBody, `"Unknown tool: nope. Call tools/list for the available tools."`) {
				t.Errorf("session B, which did not list: %s; want -32602 without data", bBody)
			}
			_, aBody := fixture.Post(t, srv.URL, call, hdr(a))
			if tools, _ := dataOf(t, aBody); !slices.Equal(tools, []string{"add", "echo"}) {
				t.Errorf("session A: %s; want availableTools [add echo]", aBody)
			}
		})
	}
}

// openSession initializes a 2025-11-25 session at url and returns its id.
func openSession(t *testing.T, url string) string {
	t.Helper()
	r := fixture.PostWithin(t, 0, url, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"caller-test","version":"1"}}}`, nil)
	id := r.Header.Get("Mcp-Session-Id")
	if r.Status != 200 || id == "" {
		t.Fatalf("initialize: %d %v %s", r.Status, r.Header, r.Body)
	}
	if status, body := fixture.Post(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, http.Header{"Mcp-Protocol-Version": {"2025-11-25"}, "Mcp-Session-Id": {id}}); status != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %d %s", status, body)
	}
	return id
}

// The real TypeScript SDK v2 client against the mcp-go server through the
// guard (with the mcp-go tool set, and with none): declaring elicitation,
// it lists and calls delete_repository exactly as without the guard; not
// declaring it, it gets -32602 with the list it was given.
func TestListsAsTheCallerSawThemTypeScriptClient(t *testing.T) {
	s, h := callerMCPGo()
	tools, err := toolguardmcpgo.Tools(s, h, toolguardmcpgo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, set := range []toolguard.ToolSet{tools, nil} {
		g, err := toolguard.New(toolguard.Options{Tools: set})
		if err != nil {
			t.Fatal(err)
		}
		alone := httptest.NewServer(h)
		guarded := httptest.NewServer(g.Handler(h))
		a := fixture.V2Client(t, alone.URL, "delete_repository", "elicitation")
		b := fixture.V2Client(t, guarded.URL, "delete_repository", "elicitation")
		if b.Call.Result == nil || b.Call.Result.Content[0].Text != "ran delete_repository" || !slices.Equal(a.Tools, b.Tools) || !slices.Contains(b.Tools, "delete_repository") {
			t.Errorf("%T, declaring elicitation: alone %+v, guarded %+v", set, a, b)
		}
		a = fixture.V2Client(t, alone.URL, "delete_repository", "")
		b = fixture.V2Client(t, guarded.URL, "delete_repository", "")
		var data struct {
			AvailableTools []string `json:"availableTools"`
		}
		json.Unmarshal(b.Call.Data, &data)
		if a.Call.Code != -32602 || b.Call.Code != -32602 || slices.Contains(b.Tools, "delete_repository") || !slices.Equal(a.Tools, b.Tools) {
			t.Errorf("%T, not declaring it: alone %+v, guarded %+v", set, a, b)
		}
		if set == nil && (!fixture.IsGuardMessage(b.Call.Message, "delete_repository") || !slices.Equal(data.AvailableTools, b.Tools)) {
			t.Errorf("no tool set, not declaring it: %q %s; want availableTools %q", b.Call.Message, b.Call.Data, b.Tools)
		}
		t.Logf("%T: not declaring elicitation, the v2 client sees %v and gets %d %q %s", set, b.Tools, b.Call.Code, b.Call.Message, b.Call.Data)
		alone.Close()
		guarded.Close()
	}
}

// mcp-go's localhost protection after a list: a 2025-era caller without a
// session lists with a good Host, then alternates calls with a good Host
// and a foreign one; it never receives a tool list when its Host is
// foreign.
func TestForeignHostAfterAList(t *testing.T) {
	s, h := callerMCPGo()
	tools, err := toolguardmcpgo.Tools(s, h, toolguardmcpgo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := toolguard.New(toolguard.Options{Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g.Handler(h))
	defer srv.Close()
	for _, host := range []string{"localhost", "evil.example"} {
		fixture.Post(t, srv.URL, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, http.Header{"Host": {host}, "Mcp-Protocol-Version": {"2025-11-25"}})
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope","arguments":{}}}`
	for i := range 100 {
		host := "localhost"
		if i%2 == 1 {
			host = "evil.example"
		}
		status, b := fixture.Post(t, srv.URL, body, http.Header{"Host": {host}, "Mcp-Protocol-Version": {"2025-11-25"}})
		listed := strings.Contains(b, "availableTools")
		if host == "localhost" && (status != 200 || !listed) || host != "localhost" && (status != 403 || listed) {
			t.Fatalf("call %d, Host %s: %d %s", i, host, status, b)
		}
	}
}
