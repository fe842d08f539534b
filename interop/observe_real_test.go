package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolguard/toolguard/internal/fixture"
	toolguard "github.com/toolguard/toolguard/middleware"
)

// target is one real server a test adds tools to and deletes them from.
type target struct {
	name    string
	handler http.Handler
	add     func(t testing.TB, name string)
	remove  func(t testing.TB, name string)
	// unknown reads the server's own answer to an unknown tool.
	unknown func(body string) bool
}

func mcpgoTarget() target {
	s := newMCPGo("echo", "add")
	return target{
		name:    "mcp-go",
		handler: server.NewStreamableHTTPServer(s, server.WithStateLess(true)),
		add: func(t testing.TB, n string) {
			s.AddTool(mcp.NewTool(n), func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText(n + ":"), nil
			})
		},
		remove: func(t testing.TB, n string) { s.DeleteTools(n) },
		unknown: func(body string) bool {
			code, msg, ok := fixture.ErrorMessage(body)
			return ok && code == -32602 && strings.Contains(msg, "not found")
		},
	}
}

func gosdkTarget() target {
	s := newGoSDK("echo", "add")
	return target{
		name:    "go-sdk",
		handler: goSDKHandler(s, &gosdk.StreamableHTTPOptions{Stateless: true}),
		add: func(t testing.TB, n string) {
			gosdk.AddTool(s, &gosdk.Tool{Name: n}, func(ctx context.Context, req *gosdk.CallToolRequest, in textArgs) (*gosdk.CallToolResult, any, error) {
				return &gosdk.CallToolResult{Content: []gosdk.Content{&gosdk.TextContent{Text: n + ":"}}}, nil, nil
			})
		},
		remove: func(t testing.TB, n string) { s.RemoveTools(n) },
		unknown: func(body string) bool {
			code, msg, ok := fixture.ErrorMessage(body)
			return ok && code == -32602 && strings.HasPrefix(msg, "unknown tool")
		},
	}
}

// tsTarget fronts a real TypeScript SDK server with a reverse proxy, as a
// Go gateway would.
func tsTarget(t *testing.T) target {
	ts := fixture.StartTS(t, "--mode=stateless", "--json=true")
	return target{
		name:    "typescript",
		handler: behindProxy(t, ts.URL),
		add:     ts.Add,
		remove:  ts.Remove,
		unknown: tsUnknownTool,
	}
}

// tsUnknownTool reports whether a TypeScript SDK reply is its answer to an
// unknown tool: a result with isError and "Tool X not found".
func tsUnknownTool(body string) bool {
	_, ok := tsUnknownName(body)
	return ok
}

func tsUnknownName(body string) (string, bool) {
	for _, m := range fixture.Messages(body) {
		var msg struct {
			Result *struct {
				IsError bool `json:"isError"`
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"result"`
		}
		if json.Unmarshal([]byte(m), &msg) != nil || msg.Result == nil || !msg.Result.IsError || len(msg.Result.Content) == 0 {
			continue
		}
		text := msg.Result.Content[0].Text
		if name, ok := strings.CutPrefix(text, "MCP error -32602: Tool "); ok {
			if name, ok = strings.CutSuffix(name, " not found"); ok {
				return name, true
			}
		}
	}
	return "", false
}

var clientHeaders = http.Header{"Mcp-Protocol-Version": {"2025-11-25"}}

// Against each real server, behind a guard with no tool set, a client that
// lists and calls as clients do: a call before any list gets -32602
// without data; known tools pass; an unknown tool gets -32602 with the
// list the client was given; a tool added at runtime runs, and appears
// once the client lists again; a tool deleted answers -32602 without
// itself in the list (the server just said it is not there).
func TestObservedListOnRealServers(t *testing.T) {
	for _, mk := range []func(*testing.T) target{
		func(*testing.T) target { return mcpgoTarget() },
		func(*testing.T) target { return gosdkTarget() },
		tsTarget,
	} {
		tg := mk(t)
		t.Run(tg.name, func(t *testing.T) {
			g, err := toolguard.New(toolguard.Options{})
			if err != nil {
				t.Fatal(err)
			}
			guarded := g.Handler(tg.handler)
			list := func() []string {
				return listedNames(fixture.Send(guarded, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, clientHeaders).Body.String())
			}
			unknown := func(name string) ([]string, bool) {
				w := fixture.Send(guarded, callBody(name), clientHeaders)
				code, msg, ok := fixture.ErrorMessage(w.Body.String())
				if !ok || code != -32602 || !fixture.IsGuardMessage(msg, name) {
					return nil, false
				}
				tools, _ := dataOf(t, w.Body.String())
				return tools, true
			}
			if tools, ok := unknown("ech0"); !ok || tools != nil {
				t.Fatalf("before any list: %q %v", tools, ok)
			}
			if names := list(); !slices.Equal(names, []string{"add", "echo"}) {
				t.Fatalf("tools/list: %q", names)
			}
			if _, ok := unknown("echo"); ok {
				t.Fatal("known tool rejected")
			}
			if tools, ok := unknown("ech0"); !ok || !slices.Equal(tools, []string{"add", "echo"}) {
				t.Fatalf("unknown tool: %q %v", tools, ok)
			}
			for i := range 3 {
				name := fmt.Sprintf("fresh_%d", i)
				if tools, ok := unknown(name); !ok || slices.Contains(tools, name) {
					t.Fatalf("%s before it exists: %q %v", name, tools, ok)
				}
				tg.add(t, name)
				if _, ok := unknown(name); ok {
					t.Fatalf("%s rejected right after it was added", name)
				}
				if tools, ok := unknown("ech0"); !ok || slices.Contains(tools, name) {
					t.Fatalf("%s shown before the client listed it: %q", name, tools)
				}
				listed := list()
				if tools, ok := unknown("ech0"); !ok || !slices.Contains(tools, name) || !slices.Equal(tools, listed) {
					t.Fatalf("%s listed %q, then an unknown call shows %q", name, listed, tools)
				}
				// Deleted, and still in the client's list (a stateless
				// server cannot say its list changed): the server's own
				// answer passes, as a tool's own answer in the same words
				// would.
				tg.remove(t, name)
				alone := fixture.Send(tg.handler, callBody(name), clientHeaders).Body.String()
				if got := fixture.Send(guarded, callBody(name), clientHeaders).Body.String(); got != alone || !tg.unknown(got) {
					t.Fatalf("%s after it was deleted: %s, the server alone %s", name, got, alone)
				}
			}
			if alone := fixture.Send(tg.handler, callBody("ech0"), clientHeaders); !tg.unknown(alone.Body.String()) {
				t.Errorf("server alone: %d %s", alone.Code, alone.Body)
			}
		})
	}
}

// The corpus against the TypeScript SDK through a reverse proxy, behind a
// guard with no tool set, after the client listed: the guard turns its
// isError answer into -32602, for the same name, and never stops a call
// the server would run.
func TestDifferentialTypeScript(t *testing.T) {
	tg := tsTarget(t)
	diff := &fixture.Differential{Alone: tg.handler, UnknownTool: tsUnknownName, Exact: true}
	g, err := toolguard.New(toolguard.Options{OnReject: func(r *http.Request, rej *toolguard.Rejection) { diff.Rejected(rej.Name) }})
	if err != nil {
		t.Fatal(err)
	}
	diff.Guarded = g.Handler(tg.handler)
	fixture.Send(diff.Guarded, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, clientHeaders)
	var tl fixture.Tally
	names := []string{"echo", "add", "nope", "ECHO", "x\"y", "😀", ""}
	for _, name := range names {
		for _, body := range fixture.Corpus(name, "") {
			// The server runs a tool in another process: a result that is not
			// an error is a tool that ran.
			alone := fixture.Send(tg.handler, body, clientHeaders)
			if ranTS(alone.Body.String()) {
				diff.Ran(name)
			}
			guarded := diff.Do(diff.Guarded, body, clientHeaders)
			tl.Cases++
			if len(guarded.Rejected) == 0 {
				tl.Passed++
				continue
			}
			tl.Rejected++
			if ranTS(alone.Body.String()) {
				t.Errorf("guard rejected %q, the server ran it\nbody %q", guarded.Rejected[0], body)
			}
			if sdkName, ok := tsUnknownName(alone.Body.String()); !ok || sdkName != guarded.Rejected[0] {
				t.Errorf("guard rejected %q, the server answered %s\nbody %q", guarded.Rejected[0], alone.Body, body)
			}
		}
	}
	if tl.Rejected == 0 || tl.Passed == 0 {
		t.Errorf("degenerate: %+v", tl)
	}
	t.Logf("typescript: %d cases, %d rejected by the guard (each an isError 'not found' from the server alone), %d passed through", tl.Cases, tl.Rejected, tl.Passed)
}

// ranTS reports whether a TypeScript SDK reply is a tool's own result.
func ranTS(body string) bool {
	for _, m := range fixture.Messages(body) {
		var msg struct {
			Result *struct {
				IsError bool `json:"isError"`
			} `json:"result"`
		}
		if json.Unmarshal([]byte(m), &msg) == nil && msg.Result != nil && !msg.Result.IsError {
			return true
		}
	}
	return false
}

// v2UnknownName reads the TypeScript SDK v2's own answer to an unknown
// tool: -32602 "Tool X not found" (a protocol error, HTTP 200), or, on its
// 2025-era fallback, the v1 shape (a result with isError).
func v2UnknownName(body string) (string, bool) {
	if code, msg, ok := fixture.ErrorMessage(body); ok && code == -32602 {
		if name, ok := strings.CutPrefix(msg, "Tool "); ok {
			return strings.CutSuffix(name, " not found")
		}
		return "", false
	}
	return tsUnknownName(body)
}

// ranRecorder marks, on d, every reply of next that is a tool's own result.
func ranRecorder(d *fixture.Differential, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		if ranTS(rec.Body.String()) {
			d.Ran("tool")
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	})
}

// v2Server starts the TypeScript SDK v2 server of v2-caps-server.mjs (its
// list depends on the client's capabilities; it refuses a foreign Host)
// and returns a reverse proxy to it.
func v2Server(t *testing.T) http.Handler {
	return behindProxy(t, fixture.StartNode(t, "v2-caps-server.mjs", "--host-check").URL)
}

// The corpus, the _meta and the header variations against a real
// TypeScript SDK v2 server (whose list depends on the client's
// capabilities, and which refuses a foreign Host) behind a reverse proxy,
// in both eras, behind a guard with no tool set: no disagreement of any
// kind.
func TestDifferentialTypeScriptV2(t *testing.T) {
	proxy := v2Server(t)
	diff := &fixture.Differential{UnknownTool: v2UnknownName, Exact: true}
	g, err := toolguard.New(toolguard.Options{
		OnReject: func(r *http.Request, rej *toolguard.Rejection) { diff.Rejected(rej.Name) }})
	if err != nil {
		t.Fatal(err)
	}
	diff.Alone = ranRecorder(diff, proxy)
	diff.Guarded = g.Handler(diff.Tee(ranRecorder(diff, proxy)))
	var total fixture.Tally
	for _, era := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(era, func(t *testing.T) {
			headers := func(name string) http.Header {
				h := http.Header{"Mcp-Protocol-Version": {era}}
				if era == "2026-07-28" {
					h.Set("Mcp-Method", "tools/call")
					h.Set("Mcp-Name", fixture.HeaderName(name))
				}
				return h
			}
			meta := ""
			if era == "2026-07-28" {
				meta = fixture.ModernMeta
			}
			var tl fixture.Tally
			for _, name := range []string{"get_repository", "delete_repository", "nope", "Ünïcode", ""} {
				for _, body := range fixture.Corpus(name, meta) {
					diff.Compare(t, body, headers(name), &tl)
				}
			}
			diff.CompareVariants(t, []string{"get_repository", "delete_repository", "nope", "Ünïcode", ""}, meta, headers, &tl)
			if tl.Rejected == 0 || tl.RanAlone == 0 {
				t.Errorf("degenerate: %v", tl)
			}
			t.Logf("TypeScript SDK v2, %s: %v", era, tl)
			total.Add(tl)
		})
	}
	t.Logf("TypeScript SDK v2, both eras: %v", total)
}
