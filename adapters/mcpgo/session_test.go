package toolguardmcpgo

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
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

// listTap sits between the tool set and mcp-go and records every
// tools/list and ping the tool set sends, with the reply's body.
type listTap struct {
	next    http.Handler
	mu      sync.Mutex
	lists   []string // reply bodies
	methods []string // what was asked: "tools/list" or "ping"
}

func (l *listTap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if !bytes.Contains(body, []byte(`"tools/list"`)) && !bytes.Contains(body, []byte(`"ping"`)) {
		l.next.ServeHTTP(w, r)
		return
	}
	rec := &recorder{ResponseWriter: w}
	l.next.ServeHTTP(rec, r)
	method := "ping"
	if bytes.Contains(body, []byte(`"tools/list"`)) {
		method = "tools/list"
	}
	l.mu.Lock()
	l.lists = append(l.lists, rec.buf.String())
	l.methods = append(l.methods, method)
	l.mu.Unlock()
}

func (l *listTap) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.lists)
}

type recorder struct {
	http.ResponseWriter
	buf bytes.Buffer
}

func (r *recorder) Write(p []byte) (int, error) {
	r.buf.Write(p)
	return r.ResponseWriter.Write(p)
}

func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// sessionServer is a default-mode mcp-go server with n global tools and
// a guard whose tool set asks through a listTap: with lean, it pings and
// puts lists together in process, as it does behind mcp-go's own handler
// on a server without tool filters; without, it asks for lists, as it
// does on a server with them.
type sessionServer struct {
	mcp     *server.MCPServer
	alone   http.Handler
	guarded http.Handler
	tap     *listTap
	ran     atomic.Int64
}

func newSessionServer(t testing.TB, lean bool, n int, maxAge time.Duration, opts ...server.StreamableHTTPOption) *sessionServer {
	ss := &sessionServer{mcp: server.NewMCPServer("s", "1.0.0", server.WithToolCapabilities(true))}
	for i := range n {
		ss.mcp.AddTool(mcp.NewTool(fmt.Sprintf("tool_%04d", i), mcp.WithString("city", mcp.Description("a city"))), ss.handler)
	}
	ss.alone = server.NewStreamableHTTPServer(ss.mcp, opts...)
	ss.tap = &listTap{next: ss.alone}
	// MinInterval is cut so that a call right after a change of session
	// tools is decided, not passed for the flood bound (tested on its own).
	tools, err := Tools(ss.mcp, ss.tap, Options{MaxAge: maxAge, Discover: toolguard.DiscoverOptions{MinInterval: time.Nanosecond}})
	if err != nil {
		t.Fatal(err)
	}
	// The tap only records: the tool set may capture through it as
	// through mcp-go's own handler.
	tools.bare, tools.lean = true, lean
	t.Cleanup(func() { tools.Close() })
	g, err := toolguard.New(toolguard.Options{Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	ss.guarded = g.Handler(ss.alone)
	return ss
}

func (ss *sessionServer) handler(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	ss.ran.Add(1)
	return mcp.NewToolResultText("ran " + req.Params.Name), nil
}

func (ss *sessionServer) open(t testing.TB) string {
	w := fixture.Send(ss.alone, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, nil)
	id := w.Header().Get("Mcp-Session-Id")
	if w.Code != 200 || id == "" {
		t.Fatalf("initialize: %d %s", w.Code, w.Body)
	}
	fixture.Send(ss.alone, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, http.Header{"Mcp-Session-Id": {id}})
	return id
}

func (ss *sessionServer) call(h http.Handler, session, name string) (int, string) {
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + name + `","arguments":{}}}`
	hdr := http.Header{"Mcp-Protocol-Version": {"2025-11-25"}}
	if session != "" {
		hdr.Set("Mcp-Session-Id", session)
	}
	w := fixture.Send(h, body, hdr)
	return w.Code, w.Body.String()
}

// bothWays runs f with lists asked for and with lists put together.
func bothWays(t *testing.T, f func(t *testing.T, lean bool)) {
	for _, lean := range []bool{false, true} {
		t.Run(map[bool]string{false: "lists", true: "lean"}[lean], func(t *testing.T) { f(t, lean) })
	}
}

func rejected(body string) bool {
	return strings.Contains(body, `"code":-32602`) && strings.Contains(body, `"availableTools"`)
}

// A session caller's unknown calls are decided from one list, read in
// process: the list reply carries no tool, and later calls need no list.
func TestSessionListReusedWithoutSchemas(t *testing.T) {
	bothWays(t, func(t *testing.T, lean bool) {
		ss := newSessionServer(t, lean, 1000, time.Hour)
		id := ss.open(t)
		for i := range 50 {
			code, body := ss.call(ss.guarded, id, fmt.Sprintf("nope_%d", i))
			if code != 200 || !rejected(body) || !strings.Contains(body, `"tool_0000"`) {
				t.Fatalf("call %d: %d %.300s", i, code, body)
			}
		}
		if n := ss.tap.count(); n != 1 {
			t.Fatalf("50 unknown calls of one session cost %d lists, want 1", n)
		}
		if reply := ss.tap.lists[0]; strings.Contains(reply, "tool_0000") || len(reply) > 400 {
			t.Fatalf("the tool set's list reply carries tools (%d bytes): %.300s", len(reply), reply)
		}
		// The first new caller is asked for its list, in both ways.
		if ss.tap.methods[0] != "tools/list" {
			t.Fatalf("the tool set sent a %s, want a tools/list", ss.tap.methods[0])
		}
		// A second session gets its own list.
		other := ss.open(t)
		if _, body := ss.call(ss.guarded, other, "nope"); !rejected(body) {
			t.Fatalf("second session: %.300s", body)
		}
		if n := ss.tap.count(); n != 2 {
			t.Fatalf("a second session made %d lists in all, want 2", n)
		}
		// The next one pings where lists are put together.
		if want := map[bool]string{false: "tools/list", true: "ping"}[lean]; ss.tap.methods[1] != want {
			t.Fatalf("for the second session the tool set sent a %s, want a %s", ss.tap.methods[1], want)
		}
		// Known tools never ask.
		if code, body := ss.call(ss.guarded, id, "tool_0999"); code != 200 || !strings.Contains(body, "ran tool_0999") {
			t.Fatalf("known: %d %.300s", code, body)
		}
		if n := ss.tap.count(); n != 2 {
			t.Fatalf("a known call made a list (%d)", n)
		}
	})
}

// Session tools change without any notice the watcher hears: a tool added
// to the session is called, never rejected; a deleted one leaves the list
// the caller is shown.
func TestSessionToolsChangeWithoutNotice(t *testing.T) {
	bothWays(t, func(t *testing.T, lean bool) {
		ss := newSessionServer(t, lean, 3, time.Hour)
		id := ss.open(t)
		if _, body := ss.call(ss.guarded, id, "nope"); !rejected(body) {
			t.Fatalf("setup: %.300s", body)
		}
		for i := range 20 {
			name := fmt.Sprintf("session_tool_%d", i)
			if err := ss.mcp.AddSessionTool(id, mcp.NewTool(name), ss.handler); err != nil {
				t.Fatal(err)
			}
			if code, body := ss.call(ss.guarded, id, name); code != 200 || !strings.Contains(body, "ran "+name) {
				t.Fatalf("%s, added to the session: %d %.300s", name, code, body)
			}
			// Another session does not have it: rejected, and not listed.
			other := ss.open(t)
			if _, body := ss.call(ss.guarded, other, name); !rejected(body) || strings.Contains(body, `"session_tool_`) {
				t.Fatalf("%s from another session: %.300s", name, body)
			}
		}
		if _, body := ss.call(ss.guarded, id, "nope"); !rejected(body) || !strings.Contains(body, `"session_tool_19"`) {
			t.Fatalf("the session's list lacks its tools: %.400s", body)
		}
		if err := ss.mcp.DeleteSessionTools(id, "session_tool_19"); err != nil {
			t.Fatal(err)
		}
		if _, body := ss.call(ss.guarded, id, "nope"); !rejected(body) || strings.Contains(body, `"session_tool_19"`) {
			t.Fatalf("a deleted session tool is still listed: %.400s", body)
		}
	})
}

// A session that ended (DELETE) gets mcp-go's own answer, never the
// guard's list, wherever mcp-go refuses the ended session; where it still
// looks the tool up (the default mode keeps no session state) either
// answer is mcp-go's unknown tool.
func TestEndedSessionPassesThrough(t *testing.T) {
	bothWays(t, testEndedSessionPassesThrough)
}

func testEndedSessionPassesThrough(t *testing.T, lean bool) {
	for _, mode := range []string{"default", "stateful"} {
		t.Run(mode, func(t *testing.T) {
			var opts []server.StreamableHTTPOption
			if mode == "stateful" {
				opts = append(opts, server.WithStateful(true))
			}
			ss := newSessionServer(t, lean, 3, time.Hour, opts...)
			id := ss.open(t)
			if _, body := ss.call(ss.guarded, id, "nope"); !rejected(body) {
				t.Fatalf("setup: %.300s", body)
			}
			req, _ := http.NewRequest(http.MethodDelete, "/mcp", nil)
			req.Header.Set("Mcp-Session-Id", id)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
			rec := &statusRecorder{header: http.Header{}}
			ss.alone.ServeHTTP(rec, req)
			if rec.status != 200 {
				t.Fatalf("DELETE: %d", rec.status)
			}
			aloneCode, aloneBody := ss.call(ss.alone, id, "nope")
			_, unknown := mcpgoUnknownTool(aloneBody)
			if mode == "stateful" && (unknown || aloneCode == 200) {
				t.Fatalf("mcp-go alone still serves the ended session: %d %.300s", aloneCode, aloneBody)
			}
			code, body := ss.call(ss.guarded, id, "nope")
			if !unknown && (rejected(body) || code != aloneCode || body != aloneBody) {
				t.Fatalf("after DELETE the guard answered %d %.300s; mcp-go alone %d %.300s", code, body, aloneCode, aloneBody)
			}
		})
	}
}

type statusRecorder struct {
	header http.Header
	status int
}

func (r *statusRecorder) Header() http.Header { return r.header }
func (r *statusRecorder) WriteHeader(s int) {
	if r.status == 0 {
		r.status = s
	}
}
func (r *statusRecorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = 200
	}
	return len(p), nil
}

// Sessions and session tools changing while calls run: no call for a tool
// its session has is ever rejected.
func TestSessionToolsConcurrent(t *testing.T) {
	bothWays(t, func(t *testing.T, lean bool) {
		ss := newSessionServer(t, lean, 5, time.Hour)
		const sessions, rounds = 4, 40
		var wg sync.WaitGroup
		errs := make(chan string, sessions*rounds)
		for s := range sessions {
			id := ss.open(t)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range rounds {
					name := fmt.Sprintf("s%d_tool_%d", s, i)
					if _, body := ss.call(ss.guarded, id, "nope"); !rejected(body) {
						errs <- "unknown not rejected: " + body
					}
					if err := ss.mcp.AddSessionTool(id, mcp.NewTool(name), ss.handler); err != nil {
						errs <- err.Error()
						return
					}
					if _, body := ss.call(ss.guarded, id, name); !strings.Contains(body, "ran "+name) {
						errs <- name + ": " + body
					}
					if i%5 == 0 {
						ss.mcp.AddTool(mcp.NewTool(fmt.Sprintf("g%d_%d", s, i)), ss.handler)
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Error(e)
		}
	})
}
