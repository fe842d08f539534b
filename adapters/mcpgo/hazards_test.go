package toolguardmcpgo

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolguard/toolguard/internal/fixture"
	toolguard "github.com/toolguard/toolguard/middleware"
)

type roleCtx struct{}

// taskCall calls a task tool without task augmentation: mcp-go finds the
// tool, then refuses the call (-32601). The guard, which never answers a
// task-augmented call (servers without task support refuse those before
// the lookup), must not answer this one either: the tool exists.
func taskCall(name string) string {
	return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + name + `","arguments":{}}}`
}

// found reports whether mcp-go's answer is not its unknown tool.
func found(body string) bool {
	_, unknown := mcpgoUnknownTool(body)
	return !unknown
}

func hdrFor(session string, extra ...string) http.Header {
	h := http.Header{"Mcp-Protocol-Version": {"2025-11-25"}}
	if session != "" {
		h.Set("Mcp-Session-Id", session)
	}
	for i := 0; i+1 < len(extra); i += 2 {
		h.Set(extra[i], extra[i+1])
	}
	return h
}

func openSession(t *testing.T, h http.Handler) string {
	w := fixture.Send(h, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, nil)
	id := w.Header().Get("Mcp-Session-Id")
	if w.Code != 200 || id == "" {
		t.Fatalf("initialize: %d %s", w.Code, w.Body)
	}
	fixture.Send(h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, http.Header{"Mcp-Session-Id": {id}})
	return id
}

func deleteSession(h http.Handler, id string) int {
	req := httptest.NewRequest(http.MethodDelete, "/mcp", nil)
	req.Header.Set("Mcp-Session-Id", id)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w.Code
}

func taskServer() (*server.MCPServer, *atomic.Int64) {
	var ran atomic.Int64
	s := server.NewMCPServer("s", "1.0.0", server.WithToolCapabilities(true), server.WithTaskCapabilities(true, true, true))
	s.AddTool(mcp.NewTool("echo"), func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("ok"), nil
	})
	s.AddTaskTool(mcp.NewTool("long_job", mcp.WithTaskSupport(mcp.TaskSupportOptional)),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CreateTaskResult, error) {
			ran.Add(1)
			return &mcp.CreateTaskResult{}, nil
		})
	return s, &ran
}

func guardFor(t *testing.T, s *server.MCPServer, h http.Handler, opts Options) (http.Handler, *ToolSet) {
	ts, err := Tools(s, h, opts)
	if err != nil {
		t.Fatal(err)
	}
	g, err := toolguard.New(toolguard.Options{Tools: ts})
	if err != nil {
		t.Fatal(err)
	}
	return g.Handler(h), ts
}

// Two tool sets on one server (two guards, or a new tool set after Close):
// each capture filter takes only its own tool set's lists, so neither reads
// the other's emptied list and rejects a task tool mcp-go runs.
func TestSecondToolSetKeepsLists(t *testing.T) {
	s, _ := taskServer()
	alone := server.NewStreamableHTTPServer(s, server.WithStateLess(true))
	_, ts1 := guardFor(t, s, alone, Options{})
	ts1.Close()
	guarded, ts2 := guardFor(t, s, alone, Options{})
	defer ts2.Close()

	w := fixture.Send(alone, taskCall("long_job"), hdrFor(""))
	if !found(w.Body.String()) {
		t.Fatalf("mcp-go alone did not run long_job: %d %s", w.Code, w.Body)
	}
	w = fixture.Send(guarded, taskCall("long_job"), hdrFor(""))
	if strings.Contains(w.Body.String(), `"availableTools"`) {
		t.Fatalf("guard rejected task tool mcp-go runs: %d %s", w.Code, w.Body)
	}
}

// DiscoverOptions.Key returning "" shares and reuses nothing: one caller's
// list never decides another's call.
func TestEmptyKeySharesNothing(t *testing.T) {
	s, _ := taskServer()
	server.WithToolFilter(func(ctx context.Context, tools []mcp.Tool) []mcp.Tool {
		if ctx.Value(roleCtx{}) == "admin" {
			return tools
		}
		out := tools[:0:0]
		for _, tl := range tools {
			if tl.Name != "long_job" {
				out = append(out, tl)
			}
		}
		return out
	})(s)
	alone := server.NewStreamableHTTPServer(s, server.WithStateLess(true),
		server.WithHTTPContextFunc(func(ctx context.Context, r *http.Request) context.Context {
			return context.WithValue(ctx, roleCtx{}, r.Header.Get("X-Role"))
		}))
	guarded, ts := guardFor(t, s, alone, Options{Discover: toolguard.DiscoverOptions{
		Key: func(*http.Request) string { return "" }}})
	defer ts.Close()

	// A non-admin caller's unknown call caches its list.
	if w := fixture.Send(guarded, taskCall("nope"), hdrFor("")); !strings.Contains(w.Body.String(), "availableTools") {
		t.Fatalf("setup: %s", w.Body)
	}
	// The admin's call of long_job: mcp-go runs it.
	w := fixture.Send(alone, taskCall("long_job"), hdrFor("", "X-Role", "admin"))
	if !found(w.Body.String()) {
		t.Fatalf("alone: %s", w.Body)
	}
	w = fixture.Send(guarded, taskCall("long_job"), hdrFor("", "X-Role", "admin"))
	if strings.Contains(w.Body.String(), `"availableTools"`) {
		t.Fatalf("guard rejected admin's long_job with the other caller's list: %s", w.Body)
	}
}

// A session that ends (DELETE) while the tool set's list for it is under
// way: the list is not reused once mcp-go refuses the session. The
// interleaving is forced by an OnAfterListTools hook that sends the DELETE.
func TestSessionEndedDuringListPassesThrough(t *testing.T) {
	hooks := &server.Hooks{}
	s := server.NewMCPServer("s", "1.0.0", server.WithToolCapabilities(true), server.WithHooks(hooks))
	s.AddTool(mcp.NewTool("echo"), func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("ok"), nil
	})
	alone := server.NewStreamableHTTPServer(s, server.WithStateful(true))
	var once sync.Once
	var id string
	hooks.AddAfterListTools(func(ctx context.Context, _ any, _ *mcp.ListToolsRequest, res *mcp.ListToolsResult) {
		if len(res.Tools) == 0 { // the tool set's own list
			once.Do(func() { deleteSession(alone, id) })
		}
	})
	guarded, ts := guardFor(t, s, alone, Options{}) // default MaxAge 1s
	defer ts.Close()
	id = openSession(t, alone)

	fixture.Send(guarded, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope","arguments":{}}}`, hdrFor(id))
	a := fixture.Send(alone, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope","arguments":{}}}`, hdrFor(id))
	g := fixture.Send(guarded, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope","arguments":{}}}`, hdrFor(id))
	if a.Code == 404 && strings.Contains(g.Body.String(), "availableTools") {
		t.Fatalf("ended session: mcp-go alone %d %q, guard %d %s", a.Code, a.Body, g.Code, g.Body)
	}
}

// A context function built on r.Context() drops mcp-go's session from the
// filters' context: the list is then not reused for a session caller, so an
// ended session gets mcp-go's own answer.
func TestContextFuncWithoutSessionPassesThrough(t *testing.T) {
	s := server.NewMCPServer("s", "1.0.0", server.WithToolCapabilities(true))
	s.AddTool(mcp.NewTool("echo"), func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("ok"), nil
	})
	alone := server.NewStreamableHTTPServer(s, server.WithStateful(true),
		server.WithHTTPContextFunc(func(_ context.Context, r *http.Request) context.Context {
			return context.WithValue(r.Context(), roleCtx{}, r.Header.Get("X-Role"))
		}))
	guarded, ts := guardFor(t, s, alone, Options{}) // default MaxAge 1s
	defer ts.Close()
	id := openSession(t, alone)
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope","arguments":{}}}`
	fixture.Send(guarded, call, hdrFor(id))
	if c := deleteSession(alone, id); c != 200 {
		t.Fatalf("DELETE %d", c)
	}
	a := fixture.Send(alone, call, hdrFor(id))
	g := fixture.Send(guarded, call, hdrFor(id))
	if a.Code == 404 && strings.Contains(g.Body.String(), "availableTools") {
		t.Fatalf("ended session: mcp-go alone %d %q, guard %d %s", a.Code, a.Body, g.Code, g.Body)
	}
}

// A call waits at most MaxWait for a list, its own request included; then
// it passes through.
func TestMaxWaitBoundsTheCallsOwnList(t *testing.T) {
	s := server.NewMCPServer("s", "1.0.0", server.WithToolCapabilities(true),
		server.WithToolFilter(func(ctx context.Context, tools []mcp.Tool) []mcp.Tool {
			if len(tools) > 1 {
				time.Sleep(3 * time.Second) // a slow list
			}
			return tools
		}))
	for _, n := range []string{"a", "b"} {
		s.AddTool(mcp.NewTool(n), func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("ok"), nil
		})
	}
	alone := server.NewStreamableHTTPServer(s, server.WithStateLess(true))
	guarded, ts := guardFor(t, s, alone, Options{Discover: toolguard.DiscoverOptions{MaxWait: 50 * time.Millisecond}})
	defer ts.Close()
	start := time.Now()
	fixture.Send(guarded, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope","arguments":{}}}`, hdrFor(""))
	if d := time.Since(start); d > 1500*time.Millisecond {
		t.Fatalf("call waited %v for a list, MaxWait is 50ms", d)
	}
}

// The watcher's session id is a session id like any other: a DELETE
// naming it (the default mode validates nothing on DELETE) unregisters it.
// The watcher registers again and drops every list, so a task tool added
// afterwards is not rejected from a list read before.
func TestWatcherUnregisteredByClient(t *testing.T) {
	s, ran := taskServer()
	alone := server.NewStreamableHTTPServer(s) // default mode
	guarded, ts := guardFor(t, s, alone, Options{MaxAge: time.Hour})
	defer ts.Close()
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope","arguments":{}}}`
	id := openSession(t, alone)
	fixture.Send(guarded, call, hdrFor(id))
	if code := deleteSession(alone, ts.watch.id); code != 200 {
		t.Fatalf("DELETE of the watcher's id: %d", code)
	}
	s.AddTaskTool(mcp.NewTool("new_job", mcp.WithTaskSupport(mcp.TaskSupportOptional)),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CreateTaskResult, error) {
			ran.Add(1)
			return &mcp.CreateTaskResult{}, nil
		})
	a := fixture.Send(alone, taskCall("new_job"), hdrFor(id))
	g := fixture.Send(guarded, taskCall("new_job"), hdrFor(id))
	if !found(a.Body.String()) {
		t.Fatalf("mcp-go alone did not run new_job: %d %s", a.Code, a.Body)
	}
	if strings.Contains(g.Body.String(), "availableTools") {
		t.Fatalf("new task tool rejected after the watcher was unregistered: %s", g.Body)
	}
}

// Concurrent unknown calls from a caller the server refuses share one
// request and its failure: 50 calls cost a few lists, not 50.
func TestRefusedCallersShareOneList(t *testing.T) {
	s := server.NewMCPServer("s", "1.0.0", server.WithToolCapabilities(true),
		server.WithToolFilter(func(ctx context.Context, tools []mcp.Tool) []mcp.Tool {
			time.Sleep(20 * time.Millisecond)
			return tools
		}))
	s.AddTool(mcp.NewTool("echo"), func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("ok"), nil
	})
	alone := server.NewStreamableHTTPServer(s, server.WithStateLess(true))
	// A refusing front: every list fails (after the server's work).
	var lists atomic.Int64
	front := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") == "tools/list" || peekMethod(r) == "tools/list" {
			lists.Add(1)
			time.Sleep(20 * time.Millisecond)
			http.Error(w, "no", http.StatusForbidden)
			return
		}
		alone.ServeHTTP(w, r)
	})
	guarded, ts := guardFor(t, s, front, Options{})
	defer ts.Close()
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fixture.Send(guarded, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope","arguments":{}}}`, hdrFor(""))
		}()
	}
	wg.Wait()
	if n := lists.Load(); n > 5 {
		t.Fatalf("50 concurrent calls of one caller cost %d lists", n)
	}
}

// Other broadcasts never reach the watcher: its channel does not fill up
// and mcp-go reports no blocked notification channel to OnError hooks.
func TestWatcherTakesOnlyListChanged(t *testing.T) {
	hooks := &server.Hooks{}
	var errs atomic.Int64
	hooks.AddOnError(func(ctx context.Context, id any, method mcp.MCPMethod, message any, err error) { errs.Add(1) })
	s := server.NewMCPServer("s", "1.0.0", server.WithToolCapabilities(true), server.WithHooks(hooks))
	s.AddTool(mcp.NewTool("echo"), func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("ok"), nil
	})
	alone := server.NewStreamableHTTPServer(s)
	_, ts := guardFor(t, s, alone, Options{})
	defer ts.Close()
	for range 100 {
		s.SendNotificationToAllClients("notifications/resources/list_changed", nil)
	}
	time.Sleep(100 * time.Millisecond)
	if n := errs.Load(); n > 0 {
		t.Fatalf("%d OnError calls: notification channel blocked for the watcher", n)
	}
}

// A Key that does not separate sessions ("" or a per-user key such as
// Authorization) never lets session A's list decide session B's call.
func TestKeyNeverSharesSessions(t *testing.T) {
	for name, key := range map[string]func(*http.Request) string{
		"empty":         func(*http.Request) string { return "" },
		"authorization": func(r *http.Request) string { return r.Header.Get("Authorization") },
	} {
		t.Run(name, func(t *testing.T) {
			s, _ := taskServer()
			alone := server.NewStreamableHTTPServer(s)
			guarded, ts := guardFor(t, s, alone, Options{Discover: toolguard.DiscoverOptions{Key: key}})
			defer ts.Close()
			a, b := openSession(t, alone), openSession(t, alone)
			call := func(n string) string {
				return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + n + `","arguments":{}}}`
			}
			fixture.Send(guarded, call("nope"), hdrFor(a, "Authorization", "Bearer u"))
			if err := s.AddSessionTool(b, mcp.NewTool("mine"), func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText("ran mine"), nil
			}); err != nil {
				t.Fatal(err)
			}
			g := fixture.Send(guarded, call("mine"), hdrFor(b, "Authorization", "Bearer u"))
			if !strings.Contains(g.Body.String(), "ran mine") {
				t.Fatalf("session B's own tool: %s", g.Body)
			}
		})
	}
}

// peekMethod reads the JSON-RPC method of r's body and puts the body back.
func peekMethod(r *http.Request) string {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var msg struct {
		Method string `json:"method"`
	}
	json.Unmarshal(body, &msg)
	return msg.Method
}

// Through a handler that is not mcp-go's own, the names come from the
// reply, never from inside mcp-go: a wrapper that hides tools from a
// caller's tools/list hides them from the guard's list too, and one that
// renames tools has its names checked, not mcp-go's.
func TestWrappedHandlerListsWhatTheCallerSees(t *testing.T) {
	s := server.NewMCPServer("s", "1.0.0", server.WithToolCapabilities(true))
	for _, n := range []string{"echo", "admin_reset"} {
		s.AddTool(mcp.NewTool(n), func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("ran " + r.Params.Name), nil
		})
	}
	alone := server.NewStreamableHTTPServer(s, server.WithStateLess(true))
	// hide drops admin_* tools from tools/list replies for non-admins.
	hide := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if peekMethod(r) != "tools/list" || r.Header.Get("Authorization") == "Bearer admin" {
			alone.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		alone.ServeHTTP(rec, r)
		var msg map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &msg); err != nil {
			t.Errorf("the list reply is not JSON: %s", rec.Body)
			return
		}
		res := msg["result"].(map[string]any)
		var keep []any
		for _, tl := range res["tools"].([]any) {
			if !strings.HasPrefix(tl.(map[string]any)["name"].(string), "admin_") {
				keep = append(keep, tl)
			}
		}
		res["tools"] = keep
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(msg)
	})
	guarded, ts := guardFor(t, s, hide, Options{})
	defer ts.Close()
	w := fixture.Send(guarded, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope","arguments":{}}}`, hdrFor("", "Authorization", "Bearer user"))
	if body := w.Body.String(); !strings.Contains(body, `"availableTools":["echo"]`) {
		t.Fatalf("the guard lists what the caller's tools/list hides, or no list: %s", body)
	}
}
