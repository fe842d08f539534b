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

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	toolguardmcpgo "github.com/toolguard/toolguard/adapters/mcpgo"
	toolguard "github.com/toolguard/toolguard/middleware"
)

// guardedMCPGo serves a real mcp-go server behind the guard. Every session
// gets a session tool, session_note, when it registers.
func guardedMCPGo(t *testing.T) (*httptest.Server, *[]string) {
	hooks := &server.Hooks{}
	hooks.AddOnRegisterSession(func(ctx context.Context, session server.ClientSession) {
		st, ok := session.(server.SessionWithTools)
		if !ok {
			return
		}
		// Set on the session itself, which sends no list_changed: one sent
		// once the client has initialized (the hook runs after mcp-go wrote
		// its initialize answer) could reach the client after its list and
		// drop it.
		st.SetSessionTools(map[string]server.ServerTool{"session_note": {Tool: mcp.NewTool("session_note", mcp.WithString("text")),
			Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText("session_note:" + req.GetString("text", "")), nil
			}}})
	})
	s := newMCPGo("echo", "add")
	server.WithHooks(hooks)(s)
	h := server.NewStreamableHTTPServer(s, server.WithEndpointPath("/mcp"))
	tools, err := toolguardmcpgo.Tools(s, h, toolguardmcpgo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var rejected []string
	g, err := toolguard.New(toolguard.Options{Tools: tools, OnReject: func(r *http.Request, rej *toolguard.Rejection) {
		mu.Lock()
		rejected = append(rejected, rej.Name)
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", g.Handler(h))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, &rejected
}

// recorder is an http.RoundTripper that keeps every response body, so a test
// can read what a client library does not expose (error data).
type recorder struct {
	mu     sync.Mutex
	bodies []string
}

func (rec *recorder) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil || r.Method != http.MethodPost {
		return resp, err // a GET is the standalone stream: it never ends
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	rec.mu.Lock()
	rec.bodies = append(rec.bodies, string(b))
	rec.mu.Unlock()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return resp, err
}

// availableTools finds the guard's rejection among the recorded bodies.
func (rec *recorder) availableTools(t *testing.T) []string {
	t.Helper()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, b := range rec.bodies {
		b = strings.TrimSpace(strings.TrimPrefix(b, "event: message\ndata: "))
		var msg struct {
			Error struct {
				Code int `json:"code"`
				Data struct {
					AvailableTools []string `json:"availableTools"`
				} `json:"data"`
			} `json:"error"`
		}
		if json.Unmarshal([]byte(b), &msg) == nil && msg.Error.Code == -32602 && msg.Error.Data.AvailableTools != nil {
			return msg.Error.Data.AvailableTools
		}
	}
	t.Fatal("no -32602 with data.availableTools on the wire")
	return nil
}

func TestMCPGoClientThroughGuard(t *testing.T) {
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(era, func(t *testing.T) {
			srv, rejected := guardedMCPGo(t)
			rec := &recorder{}
			var opts []mcpgoclient.ClientOption
			if era == "2025-11-25" {
				//lint:ignore SA1019 the 2025 era is one of the two this test covers
				opts = append(opts, mcpgoclient.WithLegacyProtocolOnly())
			}
			tr, err := transport.NewStreamableHTTP(srv.URL+"/mcp", transport.WithHTTPBasicClient(&http.Client{Transport: rec}))
			if err != nil {
				t.Fatal(err)
			}
			c := mcpgoclient.NewClient(tr, opts...)
			ctx := context.Background()
			if err := c.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			init := mcp.InitializeRequest{}
			init.Params.ProtocolVersion = era
			init.Params.ClientInfo = mcp.Implementation{Name: "interop", Version: "1"}
			res, err := c.Initialize(ctx, init)
			if err != nil {
				t.Fatal(err)
			}
			if res.ProtocolVersion != era {
				t.Errorf("negotiated %s", res.ProtocolVersion)
			}
			list, err := c.ListTools(ctx, mcp.ListToolsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range list.Tools {
				names = append(names, tool.Name)
			}
			want := []string{"add", "echo"}
			if era == "2025-11-25" {
				want = []string{"add", "echo", "session_note"}
			}
			if slices.Sort(names); !slices.Equal(names, want) {
				t.Errorf("tools %q, want %q", names, want)
			}
			for _, name := range want {
				call := mcp.CallToolRequest{}
				call.Params.Name = name
				call.Params.Arguments = map[string]any{"text": "hi"}
				out, err := c.CallTool(ctx, call)
				if err != nil || out.IsError || mcp.GetTextFromContent(out.Content[0]) != name+":hi" {
					t.Errorf("call %s: %v %+v", name, err, out)
				}
			}
			call := mcp.CallToolRequest{}
			call.Params.Name = "ech0"
			_, err = c.CallTool(ctx, call)
			if !errors.Is(err, mcp.ErrInvalidParams) || !strings.Contains(err.Error(), "Unknown tool: ech0") {
				t.Errorf("unknown tool: %v", err)
			}
			if got := rec.availableTools(t); !slices.Equal(got, want) {
				t.Errorf("availableTools %q, want %q", got, want)
			}
			if !slices.Equal(*rejected, []string{"ech0"}) {
				t.Errorf("guard rejected %q", *rejected)
			}
		})
	}
}

func TestGoSDKClientThroughGuard(t *testing.T) {
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(era, func(t *testing.T) {
			srv, rejected := guardedMCPGo(t)
			rec := &recorder{}
			c := gosdk.NewClient(&gosdk.Implementation{Name: "interop", Version: "1"}, nil)
			ctx := context.Background()
			cs, err := c.Connect(ctx, &gosdk.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: &http.Client{Transport: rec}},
				&gosdk.ClientSessionOptions{ProtocolVersion: era})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			list, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range list.Tools {
				names = append(names, tool.Name)
			}
			want := []string{"add", "echo"}
			if era == "2025-11-25" {
				want = []string{"add", "echo", "session_note"}
			}
			if slices.Sort(names); !slices.Equal(names, want) {
				t.Errorf("tools %q, want %q", names, want)
			}
			for _, name := range want {
				out, err := cs.CallTool(ctx, &gosdk.CallToolParams{Name: name, Arguments: map[string]any{"text": "hi"}})
				if err != nil || out.IsError || out.Content[0].(*gosdk.TextContent).Text != name+":hi" {
					t.Errorf("call %s: %v %+v", name, err, out)
				}
			}
			_, err = cs.CallTool(ctx, &gosdk.CallToolParams{Name: "ech0", Arguments: map[string]any{}})
			var werr *gosdkError
			if !errors.As(err, &werr) || werr.Code != -32602 || !strings.Contains(string(werr.Data), `"availableTools":[`) {
				t.Errorf("unknown tool: %v", err)
			}
			if got := rec.availableTools(t); !slices.Equal(got, want) {
				t.Errorf("availableTools %q, want %q", got, want)
			}
			if !slices.Equal(*rejected, []string{"ech0"}) {
				t.Errorf("guard rejected %q", *rejected)
			}
		})
	}
}
