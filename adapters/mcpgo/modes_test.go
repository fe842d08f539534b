package toolguardmcpgo

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolguard/toolguard/internal/fixture"
)

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
