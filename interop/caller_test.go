package interop

import (
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

// callerCall posts a 2026-07-28 tools/call to url as c's caller.
func callerCall(t *testing.T, url string, c callerCase) (int, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"` + c.tool + `","arguments":{},"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"caller-test","version":"1"},` +
		`"io.modelcontextprotocol/clientCapabilities":` + c.caps + `}}}`
	hdr := http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {c.tool}}
	if c.auth != "" {
		hdr.Set("Authorization", c.auth)
	}
	if c.host != "" {
		hdr.Set("Host", c.host)
	}
	return fixture.Post(t, url, body, hdr)
}

// TestAskAsTheCaller runs every caller against each server alone and
// behind the guard, three times over (so every cache is warm), and checks
// the guard answers exactly where the server would have looked the tool
// up and not found it, with the list this caller may call.
func TestAskAsTheCaller(t *testing.T) {
	mcpgoServer, mcpgoHandler := callerMCPGo()
	mcpgoTools, err := toolguardmcpgo.Tools(mcpgoServer, mcpgoHandler, toolguardmcpgo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	gosdkHandler := callerGoSDK()
	discover := func(h http.Handler) toolguard.ToolSet {
		d, err := toolguard.Discover(h, toolguard.DiscoverOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, tc := range []struct {
		name    string
		handler http.Handler
		tools   toolguard.ToolSet
		unknown func(body string) (string, bool)
	}{
		{"mcp-go, toolguardmcpgo", mcpgoHandler, mcpgoTools, fixture.MCPGoUnknownTool},
		{"mcp-go, Discover", mcpgoHandler, discover(mcpgoHandler), fixture.MCPGoUnknownTool},
		{"go-sdk, Discover", gosdkHandler, discover(gosdkHandler), fixture.GoSDKUnknownTool},
	} {
		t.Run(tc.name, func(t *testing.T) {
			alone := httptest.NewServer(tc.handler)
			defer alone.Close()
			var mu sync.Mutex
			var rejected []string
			g, err := toolguard.New(toolguard.Options{Tools: tc.tools, OnReject: func(r *http.Request, rej *toolguard.Rejection) {
				mu.Lock()
				rejected = append(rejected, rej.Name)
				mu.Unlock()
			}})
			if err != nil {
				t.Fatal(err)
			}
			guarded := httptest.NewServer(g.Handler(tc.handler))
			defer guarded.Close()
			for round := range 3 {
				for _, c := range callerCases {
					mu.Lock()
					rejected = nil
					mu.Unlock()
					as, ab := callerCall(t, alone.URL, c)
					gs, gb := callerCall(t, guarded.URL, c)
					mu.Lock()
					guardAnswered := len(rejected) > 0
					mu.Unlock()
					switch {
					case c.refused:
						if as != http.StatusForbidden || gs != as || gb != ab || guardAnswered {
							t.Errorf("round %d, %s: alone %d %s; guarded %d %s (guard answered: %v)", round, c.name, as, ab, gs, gb, guardAnswered)
						}
					case c.runs:
						if !strings.Contains(ab, "ran "+c.tool) || gs != as || gb != ab {
							t.Errorf("round %d, %s: alone %d %s; guarded %d %s", round, c.name, as, ab, gs, gb)
						}
					default:
						name, ok := tc.unknown(ab)
						if !ok || name != c.tool {
							t.Fatalf("round %d, %s: the server alone answered %d %s", round, c.name, as, ab)
						}
						code, msg, _ := fixture.ErrorMessage(gb)
						if gs != as || code != -32602 || strings.Contains(gb, "ran ") {
							t.Errorf("round %d, %s: alone %d %s; guarded %d %s", round, c.name, as, ab, gs, gb)
						}
						// The guard answers itself where it can tell, with
						// the list of this caller (never the hidden tool).
						if guardAnswered && (msg != "Unknown tool: "+c.tool || strings.Contains(gb, `"`+c.tool+`"`) && !strings.Contains(gb, `"suggestions"`)) {
							t.Errorf("round %d, %s: guard answered %s", round, c.name, gb)
						}
						if round > 0 && tc.name != "mcp-go, toolguardmcpgo" && !guardAnswered {
							t.Errorf("round %d, %s: the guard left an unknown tool to the server: %s", round, c.name, gb)
						}
					}
				}
			}
		})
	}
}

// The real TypeScript SDK v2 client against the mcp-go server through the
// guard: declaring elicitation, it lists and calls delete_repository
// exactly as without the guard; not declaring it, it gets -32602.
func TestAskAsTheCallerTypeScriptClient(t *testing.T) {
	s, h := callerMCPGo()
	tools, err := toolguardmcpgo.Tools(s, h, toolguardmcpgo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d, err := toolguard.Discover(h, toolguard.DiscoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, set := range []toolguard.ToolSet{tools, d} {
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
		if a.Call.Code != -32602 || b.Call.Code != -32602 || slices.Contains(b.Tools, "delete_repository") || !slices.Equal(a.Tools, b.Tools) {
			t.Errorf("%T, not declaring it: alone %+v, guarded %+v", set, a, b)
		}
		t.Logf("%T: not declaring elicitation, the v2 client sees %v and gets %d %q %s", set, b.Tools, b.Call.Code, b.Call.Message, b.Call.Data)
		alone.Close()
		guarded.Close()
	}
}

// mcp-go's localhost protection with a warm cache: a 2025-era caller
// without a session, alternating a good Host and a foreign one, never
// receives a tool list when its Host is foreign.
func TestForeignHostWarmCache(t *testing.T) {
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
