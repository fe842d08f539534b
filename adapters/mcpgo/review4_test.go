package toolguardmcpgo

// Reviewer's tests (review4) of the mcp-go tool set after the third
// review (db85f04): list.forCall, Redeliver with notification(), Lookup
// asking GetTool. Tests named TestReview4... that fail on the reviewed
// code demonstrate a broken promise, said in their comment; the others
// cover ground the earlier tests did not and pass.

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolguard/toolguard/internal/fixture"
	toolguard "github.com/toolguard/toolguard/middleware"
)

// aliasServer is an mcp-go server whose sessions get, on registration, a
// session tool under the key "alias" named "weather" (SetSessionTools
// allows any key; mcp-go runs a session tool found by its key and lists
// it by its name), guarded by the tool set.
func aliasServer(t *testing.T, listChanged, wrapped bool) (s *server.MCPServer, alone *server.StreamableHTTPServer, tools *ToolSet, guarded func() *toolguard.Guard) {
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
	var h http.Handler = alone
	if wrapped {
		// A logging or metrics middleware around mcp-go's handler.
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { alone.ServeHTTP(w, r) })
	}
	tools, err := Tools(s, h, Options{Discover: toolguard.DiscoverOptions{MinInterval: time.Nanosecond}})
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
// another name, but only where the tool set captured the session's tools
// (mcp-go's own handler, lists reused). A server that does not announce
// list changes (WithToolCapabilities(false)) or a tool set after Close
// takes every list from the Discovery, and a tool set given a handler
// that wraps mcp-go's (a logging middleware) reads the list from the
// reply: names only, either way. The call of "alias", which mcp-go runs,
// is answered -32602, every time, not only the session's first call.
// FAILS on the reviewed code.
func TestReview4SessionToolKeyRejectedWithoutListChanged(t *testing.T) {
	for _, tc := range []struct {
		name        string
		listChanged bool
		closed      bool
		wrapped     bool
	}{{"no-list-changed", false, false, false}, {"closed", true, true, false}, {"wrapped-handler", true, false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			_, alone, tools, guard := aliasServer(t, tc.listChanged, tc.wrapped)
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

// Promise: never a lost message. A tools/list that outlasts
// DiscoverOptions.Timeout (a slow OnBeforeListTools hook, a tool filter
// that asks an authorization service) makes Discovery.send return at once
// with an error, while mcp-go goes on serving that request: its forwarder
// takes the session's queued notification and writes it into the capture,
// which nobody reads any more. The call passes (list-failed), but the
// notification never reaches the client: not with this call, not with the
// next POST. The late relay of 69aa321 does not help: the relay is made
// only from a reply that came in time. mcp-go alone delivers it with the
// call. Both through the mcp-go tool set and through Discover itself.
// FAILS on the reviewed code.
func TestReview4TimeoutLosesNotification(t *testing.T) {
	for _, viaTools := range []bool{true, false} {
		t.Run(map[bool]string{true: "tools", false: "discover"}[viaTools], func(t *testing.T) {
			const slow = 300 * time.Millisecond
			hooks := &server.Hooks{}
			hooks.AddBeforeListTools(func(context.Context, any, *mcp.ListToolsRequest) { time.Sleep(slow) })
			s := server.NewMCPServer("slow", "1.0.0", server.WithToolCapabilities(true), server.WithHooks(hooks))
			s.AddTool(mcp.NewTool("tool_01"), ran)
			alone := server.NewStreamableHTTPServer(s)
			dopts := toolguard.DiscoverOptions{MinInterval: time.Nanosecond, MaxWait: 2 * time.Second, Timeout: 50 * time.Millisecond}
			var ts toolguard.ToolSet
			if viaTools {
				tools, err := Tools(s, alone, Options{Discover: dopts})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { tools.Close() })
				ts = tools
			} else {
				d, err := toolguard.Discover(alone, dopts)
				if err != nil {
					t.Fatal(err)
				}
				ts = d
			}
			g, err := toolguard.New(toolguard.Options{Tools: ts})
			if err != nil {
				t.Fatal(err)
			}
			guarded := g.Handler(alone)
			open := func() string { return (&sessionServer{alone: alone}).open(t) }

			aloneDelivers(t, s, alone, open)

			id := open()
			noForwarders(t)
			if err := s.SendNotificationToSpecificClient(id, "notifications/message", map[string]any{"seq": 1}); err != nil {
				t.Fatal(err)
			}
			var seen []string
			first := fixture.Send(guarded, unknownCall, hdr(id))
			seen = append(seen, messagesOf(first)...)
			if !strings.Contains(first.Body.String(), `"code":-32602`) {
				t.Fatalf("unknown call: %d %s", first.Code, first.Body)
			}
			// Let the tool set's list finish, then the session's next POST.
			time.Sleep(slow + 200*time.Millisecond)
			noForwarders(t)
			seen = append(seen, messagesOf(fixture.Send(guarded, callBody("tool_01"), hdr(id)))...)
			if k := countNote(seen, "1"); k != 1 {
				t.Errorf("the notification reached the client %d times, want once (mcp-go alone: with the call): %q", k, seen)
			}
		})
	}
}

// notesOf returns the notifications among msgs (no id), in order.
func notesOf(msgs []string) []string {
	var out []string
	for _, m := range msgs {
		if !strings.Contains(m, `"id":`) {
			out = append(out, m)
		}
	}
	return out
}

// redeliveredAsAlone sends the session a notification (method, params),
// then a call through the guard that the lean ping confirms (the ping takes
// the notification; the call passes and Redeliver gives it back), and
// compares what the client gets with what mcp-go alone sends.
func redeliveredAsAlone(t *testing.T, method string, params map[string]any) {
	t.Helper()
	ls := newLeanServer(t, nil)
	ls.learn(t)
	var want []string
	for range 3 {
		id := ls.open(t)
		noForwarders(t)
		if err := ls.mcp.SendNotificationToSpecificClient(id, method, params); err != nil {
			t.Fatal(err)
		}
		if want = notesOf(messagesOf(fixture.Send(ls.alone, unknownCall, hdr(id)))); len(want) == 1 {
			break
		}
	}
	if len(want) != 1 {
		t.Fatalf("mcp-go alone did not deliver the notification with the call: %q", want)
	}
	// Through the guard, also one delivery in three tries: Redeliver puts
	// the notification back just after the tool set's own POST, whose
	// forwarder may still be there to take it (measured: about 1 in 1000,
	// as mcp-go alone loses about 1 in 2000).
	var got []string
	for range 3 {
		id := ls.open(t)
		noForwarders(t)
		if err := ls.mcp.SendNotificationToSpecificClient(id, method, params); err != nil {
			t.Fatal(err)
		}
		pings := ls.pings.Load()
		w := fixture.Send(ls.guarded, callBody("long_job"), hdr(id))
		if ls.pings.Load() == pings {
			t.Fatalf("the call was not confirmed by the tool set's ping: %d %s", w.Code, w.Body)
		}
		if got = notesOf(messagesOf(w)); len(got) == 1 {
			break
		}
	}
	if len(got) != 1 || got[0] != want[0] {
		t.Errorf("the client got %q, mcp-go alone sends %q", got, want)
	}
}

// Promise: never an altered message. notification() (db85f04) rebuilds
// the params from a map of their members: params that are an empty
// object have none, so mcp-go writes the notification again without
// "params" at all. mcp-go alone sends "params":{}.
// FAILS on the reviewed code.
func TestReview4RedeliveredEmptyParamsDropped(t *testing.T) {
	redeliveredAsAlone(t, "notifications/message", map[string]any{})
}

// Passing coverage: Redeliver gives the client, byte for byte, what mcp-go
// alone sends, for params that are absent, that carry _meta with an
// integer beyond 2^53 and nested values, and strings json escapes.
func TestReview4RedeliveredShapes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		method string
		params map[string]any
	}{
		{"nil", "notifications/resources/list_changed", nil},
		{"meta", "notifications/progress", map[string]any{"progressToken": "tok", "progress": 1.5,
			"_meta": map[string]any{"n": int64(9007199254740993), "nested": map[string]any{"x": []any{1, "<&>"}}}}},
		{"escapes", "notifications/message", map[string]any{"data": "a\u2028b<c>&\"d\"", "level": "info"}},
	} {
		t.Run(tc.name, func(t *testing.T) { redeliveredAsAlone(t, tc.method, tc.params) })
	}
}

// Passing coverage: mcp-go's own client, over real HTTP, through the
// guard with Discover in front of mcp-go (no Redeliverer), directly and
// through a reverse proxy (Content-Length from upstream): the session's
// queued notification, taken by the Discovery's tools/list, reaches the
// client's notification handler once, and the call's answer (mcp-go's
// JSON made an event stream by Guard.Handler, a trailing newline and all)
// is read as the tool's result.
func TestReview4MCPGoClientReadsRelayedStream(t *testing.T) {
	for _, proxied := range []bool{false, true} {
		t.Run(map[bool]string{false: "direct", true: "reverse-proxy"}[proxied], func(t *testing.T) { mcpgoClientThroughGuard(t, proxied) })
	}
}

// mcpgoClientThroughGuard runs the client through the guard in front of
// mcp-go, directly or (proxied) through an httputil.ReverseProxy to mcp-go
// on its own HTTP server, as toolguard-proxy does (FlushInterval -1).
func mcpgoClientThroughGuard(t *testing.T, proxied bool) {
	var lists atomic.Int64
	hooks := &server.Hooks{}
	// The list takes a moment, so that its POST's forwarder surely takes
	// the session's queued notification (the relay this test is about).
	hooks.AddBeforeListTools(func(context.Context, any, *mcp.ListToolsRequest) {
		lists.Add(1)
		time.Sleep(5 * time.Millisecond)
	})
	s := server.NewMCPServer("relay", "1.0.0", server.WithToolCapabilities(true), server.WithHooks(hooks))
	s.AddTool(mcp.NewTool("tool_01"), ran)
	var alone http.Handler = server.NewStreamableHTTPServer(s)
	if proxied {
		upstream := httptest.NewServer(alone)
		defer upstream.Close()
		u, err := url.Parse(upstream.URL)
		if err != nil {
			t.Fatal(err)
		}
		alone = &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(u) }, FlushInterval: -1}
	}
	// The Discovery's own requests, teed: whether its list took the
	// session's notification (the relay this test is about).
	var tookNote atomic.Bool
	listed := alone
	tee := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		listed.ServeHTTP(rec, r)
		if strings.Contains(rec.Body.String(), `"notifications/message"`) {
			tookNote.Store(true)
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	})
	d, err := toolguard.Discover(tee, toolguard.DiscoverOptions{MinInterval: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	g, err := toolguard.New(toolguard.Options{Tools: d})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g.Handler(alone))
	defer srv.Close()

	c, err := client.NewStreamableHttpClient(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var mu sync.Mutex
	var got []string
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == "notifications/message" {
			mu.Lock()
			got = append(got, fmt.Sprint(n.Params.AdditionalFields["seq"]))
			mu.Unlock()
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = "2025-11-25"
	init.Params.ClientInfo = mcp.Implementation{Name: "t", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	noForwarders(t)
	if err := s.SendNotificationToSpecificClient(c.GetSessionId(), "notifications/message", map[string]any{"seq": 1}); err != nil {
		t.Fatal(err)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = "tool_01"
	res, err := c.CallTool(ctx, req)
	if err != nil {
		t.Fatalf("call through the guard: %v", err)
	}
	if len(res.Content) != 1 || !strings.Contains(fmt.Sprint(res.Content[0]), "ran tool_01") {
		t.Fatalf("result %+v", res)
	}
	if lists.Load() == 0 {
		t.Fatal("the call was not confirmed by a list: nothing was relayed")
	}
	if !tookNote.Load() {
		t.Fatal("the Discovery's list did not take the notification: nothing was relayed")
	}
	// A second call (its list is reused or fetched again) must not bring
	// the notification again.
	if _, err := c.CallTool(ctx, req); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0] != "1" {
		t.Errorf("notifications seen by the client: %q, want [1] once", got)
	}
}
