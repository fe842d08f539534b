package toolguardmcpgo

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolguard/toolguard/internal/fixture"
	"github.com/toolguard/toolguard/internal/sse"
	toolguard "github.com/toolguard/toolguard/middleware"
)

// leanServer is a default-mode mcp-go server behind its own handler, with
// counters of the pings and tools/list requests mcp-go dispatches.
type leanServer struct {
	mcp          *server.MCPServer
	alone        http.Handler
	guarded      http.Handler
	tools        *ToolSet
	pings, lists atomic.Int64
}

func newLeanServer(t *testing.T, setup func(*server.MCPServer, *server.Hooks), opts ...server.StreamableHTTPOption) *leanServer {
	ls := &leanServer{}
	hooks := &server.Hooks{}
	hooks.AddBeforePing(func(context.Context, any, *mcp.PingRequest) { ls.pings.Add(1) })
	hooks.AddBeforeListTools(func(context.Context, any, *mcp.ListToolsRequest) { ls.lists.Add(1) })
	ls.mcp = server.NewMCPServer("lean", "1.0.0", server.WithToolCapabilities(true), server.WithTaskCapabilities(true, true, true), server.WithHooks(hooks))
	for i := range 30 {
		ls.mcp.AddTool(mcp.NewTool(fmt.Sprintf("tool_%02d", i)), ran)
	}
	ls.mcp.AddTaskTool(mcp.NewTool("long_job", mcp.WithTaskSupport(mcp.TaskSupportRequired)),
		func(context.Context, mcp.CallToolRequest) (*mcp.CreateTaskResult, error) {
			return &mcp.CreateTaskResult{}, nil
		})
	if setup != nil {
		setup(ls.mcp, hooks)
	}
	ls.alone = server.NewStreamableHTTPServer(ls.mcp, opts...)
	tools, err := Tools(ls.mcp, ls.alone, Options{MaxAge: time.Hour, Discover: toolguard.DiscoverOptions{MinInterval: time.Nanosecond}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tools.Close() })
	ls.tools = tools
	g, err := toolguard.New(toolguard.Options{Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	ls.guarded = g.Handler(ls.alone)
	return ls
}

func ran(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return mcp.NewToolResultText("ran " + req.Params.Name), nil
}

func (ls *leanServer) open(t *testing.T) string {
	return (&sessionServer{alone: ls.alone}).open(t)
}

// learn makes the tool set learn the server's list: the first new caller
// after a change is asked for its list (one without session tools is the
// server's); the callers after it ping.
func (ls *leanServer) learn(t *testing.T) {
	ls.guardList(t, ls.open(t))
}

func hdr(session string) http.Header {
	h := http.Header{"Mcp-Protocol-Version": {"2025-11-25"}}
	if session != "" {
		h.Set("Mcp-Session-Id", session)
	}
	return h
}

// serverList is mcp-go's own tools/list for the session, every page.
func (ls *leanServer) serverList(t *testing.T, session string) []string {
	w := fixture.Send(ls.alone, `{"jsonrpc":"2.0","id":"l","method":"tools/list"}`, hdr(session))
	msg := w.Body.Bytes()
	if strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
		// Notifications for the session came first: the reply is the
		// stream's last message.
		msgs := sse.Messages(msg)
		msg = msgs[len(msgs)-1]
	}
	var reply struct {
		Result struct {
			Tools []struct{ Name string } `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(msg, &reply); err != nil {
		t.Fatalf("tools/list: %v: %s", err, w.Body)
	}
	var names []string
	for _, tool := range reply.Result.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// guardList is the list the guard answers an unknown call with.
func (ls *leanServer) guardList(t *testing.T, session string) []string {
	w := fixture.Send(ls.guarded, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope","arguments":{}}}`, hdr(session))
	msgs := fixture.Messages(w.Body.String()) // notifications for the session come first
	var reply struct {
		Error struct {
			Code int `json:"code"`
			Data struct {
				AvailableTools []string `json:"availableTools"`
			} `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(msgs[len(msgs)-1]), &reply); err != nil || reply.Error.Code != -32602 {
		t.Fatalf("unknown call: %v: %d %s", err, w.Code, w.Body)
	}
	return reply.Error.Data.AvailableTools
}

// Behind mcp-go's own handler, on a server without tool filters, a new
// caller costs a ping (which mcp-go answers without building a list) and
// the list is put together in process: the guard lists exactly what
// mcp-go lists that caller, global, task and session tools alike, and
// follows the session's tools as they change.
func TestLeanListIsTheCallersList(t *testing.T) {
	ls := newLeanServer(t, nil)
	if !ls.tools.lean {
		t.Fatal("no filter and mcp-go's own handler, yet not lean")
	}
	plain, rich := ls.open(t), ls.open(t)
	for i := range 3 {
		if err := ls.mcp.AddSessionTool(rich, mcp.NewTool(fmt.Sprintf("mine_%d", i)), ran); err != nil {
			t.Fatal(err)
		}
	}
	// One that shadows a global tool: listed once.
	if err := ls.mcp.AddSessionTool(rich, mcp.NewTool("tool_05"), ran); err != nil {
		t.Fatal(err)
	}
	ls.learn(t)
	ls.pings.Store(0)
	for _, session := range []string{plain, rich} {
		want := ls.serverList(t, session)
		ls.lists.Store(0)
		got := ls.guardList(t, session)
		if !slices.Equal(got, want) {
			t.Errorf("session %s: the guard lists %q, mcp-go %q", session, got, want)
		}
		if n := ls.lists.Load(); n != 0 {
			t.Errorf("session %s: %d tools/list dispatched for a lean list", session, n)
		}
	}
	if !slices.Contains(ls.guardList(t, rich), "long_job") || !slices.Contains(ls.guardList(t, rich), "mine_2") {
		t.Fatal("task or session tool missing")
	}
	if p := ls.pings.Load(); p != 2 {
		t.Errorf("%d pings for two new callers, want 2", p)
	}
	// A session tool added without notice is followed.
	if err := ls.mcp.AddSessionTool(plain, mcp.NewTool("late"), ran); err != nil {
		t.Fatal(err)
	}
	if got, want := ls.guardList(t, plain), ls.serverList(t, plain); !slices.Equal(got, want) || !slices.Contains(got, "late") {
		t.Errorf("after a session tool was added: the guard lists %q, mcp-go %q", got, want)
	}
	// A global tool added: announced, and listed to everyone (the first
	// caller after it is asked for its list, the next one pings).
	ls.mcp.AddTool(mcp.NewTool("new_global"), ran)
	for _, session := range []string{rich, plain, ls.open(t)} {
		if got, want := ls.guardList(t, session), ls.serverList(t, session); !slices.Equal(got, want) || !slices.Contains(got, "new_global") {
			t.Errorf("after a global tool was added: the guard lists %q, mcp-go %q", got, want)
		}
	}
}

// A caller the server refuses (an unknown session, a foreign Host on a
// loopback server) fails the ping: the call passes through to mcp-go's
// own answer, and no list is shown.
func TestLeanRefusedCallerPassesThrough(t *testing.T) {
	ls := newLeanServer(t, nil)
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope","arguments":{}}}`
	for _, h := range []http.Header{hdr("mcp-session-not-one-of-ours"), func() http.Header {
		h := hdr(ls.open(t))
		h.Set("Host", "evil.example")
		return h
	}()} {
		alone := fixture.Send(ls.alone, body, h)
		guarded := fixture.Send(ls.guarded, body, h)
		if guarded.Code != alone.Code || guarded.Body.String() != alone.Body.String() {
			t.Errorf("headers %v: the guard answered %d %s; mcp-go alone %d %s", h, guarded.Code, guarded.Body, alone.Code, alone.Body)
		}
	}
}

// Lean needs the server's only tool filter to be the tool set's, mcp-go's
// own handler, and no request hook; otherwise the caller's list is asked
// of the server, where the filters and hooks apply.
func TestLeanOnlyWhereProvable(t *testing.T) {
	filtered := newLeanServer(t, func(s *server.MCPServer, _ *server.Hooks) {
		server.WithToolFilter(func(ctx context.Context, tools []mcp.Tool) []mcp.Tool {
			return slices.DeleteFunc(tools, func(t mcp.Tool) bool { return t.Name == "tool_07" })
		})(s)
	})
	if filtered.tools.lean {
		t.Fatal("a server with a tool filter is lean")
	}
	if got := filtered.guardList(t, filtered.open(t)); slices.Contains(got, "tool_07") {
		t.Errorf("a tool the filter hides is listed: %q", got)
	}
	if filtered.pings.Load() != 0 {
		t.Error("pinged on a server with a filter")
	}

	hooked := newLeanServer(t, func(_ *server.MCPServer, h *server.Hooks) {
		h.AddOnRequestInitialization(func(context.Context, any, any) error { return nil })
	})
	hooked.lists.Store(0)
	hooked.guardList(t, hooked.open(t))
	if hooked.pings.Load() != 0 || hooked.lists.Load() == 0 {
		t.Errorf("with a request hook: %d pings, %d lists; want a list and no ping", hooked.pings.Load(), hooked.lists.Load())
	}

	s := server.NewMCPServer("w", "1.0.0", server.WithToolCapabilities(true))
	s.AddTool(mcp.NewTool("a"), ran)
	inner := server.NewStreamableHTTPServer(s)
	wrapped, err := Tools(s, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { inner.ServeHTTP(w, r) }), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer wrapped.Close()
	if wrapped.lean {
		t.Error("lean through a wrapper")
	}
}
