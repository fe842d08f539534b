package toolguardmcpgo

// Reviewer's tests (review4) of the mcp-go tool set after the third
// review (db85f04): list.forCall, Redeliver with notification(), Lookup
// asking GetTool. Tests named TestReview4... that fail on the reviewed
// code demonstrate a broken promise, said in their comment; the others
// cover ground the earlier tests did not and pass.

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolguard/toolguard/internal/fixture"
	toolguard "github.com/toolguard/toolguard/middleware"
)

// aliasServer is an mcp-go server whose sessions get, on registration, a
// session tool under the key "alias" named "weather" (SetSessionTools
// allows any key; mcp-go runs a session tool found by its key and lists
// it by its name), guarded by the tool set.
func aliasServer(t *testing.T, listChanged bool) (s *server.MCPServer, alone *server.StreamableHTTPServer, tools *ToolSet, guarded func() *toolguard.Guard) {
	t.Helper()
	hooks := &server.Hooks{}
	hooks.AddOnRegisterSession(func(_ context.Context, cs server.ClientSession) {
		if st, ok := cs.(server.SessionWithTools); ok && strings.HasPrefix(cs.SessionID(), "mcp-session-") {
			st.SetSessionTools(map[string]server.ServerTool{
				"alias": {Tool: mcp.NewTool("weather"), Handler: ran},
			})
		}
	})
	s = server.NewMCPServer("alias", "1.0.0", server.WithToolCapabilities(listChanged), server.WithHooks(hooks))
	s.AddTool(mcp.NewTool("tool_01"), ran)
	alone = server.NewStreamableHTTPServer(s)
	tools, err := Tools(s, alone, Options{Discover: toolguard.DiscoverOptions{MinInterval: time.Nanosecond}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tools.Close() })
	return s, alone, tools, func() *toolguard.Guard {
		g, err := toolguard.New(toolguard.Options{Tools: tools})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
}

// Promise: never a wrong rejection. forCall (db85f04) adds the call's
// name to the list when it is the key of a session tool listed under
// another name, but only on the path where lists are reused. A server
// that does not announce list changes (WithToolCapabilities(false)), or a
// tool set after Close, takes every list from the Discovery, which has the
// names only: the call of "alias", which mcp-go runs, is answered -32602,
// every time, not only the session's first call.
// FAILS on the reviewed code.
func TestReview4SessionToolKeyRejectedWithoutListChanged(t *testing.T) {
	for _, tc := range []struct {
		name        string
		listChanged bool
		closed      bool
	}{{"no-list-changed", false, false}, {"closed", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			_, alone, tools, guard := aliasServer(t, tc.listChanged)
			if tc.closed {
				tools.Close()
			}
			open := func() string { return (&sessionServer{alone: alone}).open(t) }
			if w := fixture.Send(alone, callBody("alias"), hdr(open())); !strings.Contains(w.Body.String(), `"ran alias"`) {
				t.Fatalf("mcp-go alone does not run the session tool by its key: %d %s", w.Code, w.Body)
			}
			guarded := guard().Handler(alone)
			id := open()
			for i := range 2 {
				w := fixture.Send(guarded, callBody("alias"), hdr(id))
				if !strings.Contains(w.Body.String(), `"ran alias"`) {
					t.Errorf("call %d of the session tool by its key: %d %s; mcp-go runs it", i+1, w.Code, w.Body)
				}
			}
		})
	}
}
