package toolguardmcpgo

// Reviewer's tests of the lean mechanism (commit 060c26e): the tool set
// pings as the caller and puts the caller's list together in process.
// Tests named TestReview... that fail on the reviewed code demonstrate a
// broken promise, said in their comment; the others cover ground the
// existing tests did not and pass.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolguard/toolguard/internal/fixture"
)

const unknownCall = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope","arguments":{}}}`

func callBody(name string) string {
	return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + name + `","arguments":{}}}`
}

// messagesOf returns the JSON-RPC messages of a reply: the body, or each
// event of an event stream.
func messagesOf(w *httptest.ResponseRecorder) []string {
	return fixture.Messages(w.Body.String())
}

// Promise: the guard never loses a message the client would have got.
// mcp-go queues a session's notifications (here the tools/list_changed
// that AddSessionTool sends the session) on the session and delivers them
// on the session's next POST. The tool set's own request as the caller
// (the lean ping, or the list) is such a POST: mcp-go hands it the queued
// notification, and the tool set throws the reply away. The client, which
// would have received the notification with its call (or its next
// request), never does, and never learns that its tools changed.
// Not new with lean: the list request swallows it the same way (both
// subtests fail).
func TestReviewPingSwallowsSessionNotifications(t *testing.T) {
	for _, lean := range []bool{true, false} {
		t.Run(map[bool]string{true: "lean", false: "lists"}[lean], func(t *testing.T) {
			var ls *leanServer
			if lean {
				ls = newLeanServer(t, nil)
			} else {
				ls = newLeanServer(t, func(s *server.MCPServer, _ *server.Hooks) {
					server.WithToolFilter(func(_ context.Context, tools []mcp.Tool) []mcp.Tool { return tools })(s)
				})
			}
			if ls.tools.lean != lean {
				t.Fatalf("lean = %v, want %v", ls.tools.lean, lean)
			}
			id := ls.open(t)
			noForwarders(t)
			if err := ls.mcp.AddSessionTool(id, mcp.NewTool("mine"), ran); err != nil {
				t.Fatal(err)
			}
			// The session's unknown call through the guard, then a known
			// call: between them, the client must see the list_changed.
			var seen []string
			for _, body := range []string{unknownCall, callBody("tool_01")} {
				w := fixture.Send(ls.guarded, body, hdr(id))
				seen = append(seen, messagesOf(w)...)
			}
			for _, m := range seen {
				if strings.Contains(m, `"notifications/tools/list_changed"`) {
					return
				}
			}
			t.Errorf("the session's tools/list_changed never reached the client; it got %q", seen)
		})
	}
}

// noForwarders waits until no goroutine of mcp-go's POST handling is left
// from earlier requests. mcp-go v1.2.1 has a race of its own here: each
// POST starts a goroutine that forwards the session's queued
// notifications, which ends once the POST is answered; one that has not
// yet run when a notification is queued may take it off the queue and then
// drop it (its POST is over). Without this wait, mcp-go alone loses the
// notification in about one run in ten (measured: 8 to 16 in 100 with and
// without -race), whatever the guard does.
func noForwarders(t *testing.T) {
	t.Helper()
	buf := make([]byte, 1<<20)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		if n := runtime.Stack(buf, true); !bytes.Contains(buf[:n], []byte("(*StreamableHTTPServer).handlePost")) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("mcp-go's POST goroutines never ended")
		}
	}
}

// For comparison, the same two requests to mcp-go alone deliver it.
func TestReviewNotificationDeliveredWithoutGuard(t *testing.T) {
	// mcp-go's forwarder may still take a notification just as its POST
	// is answered, and drop it (about one run in 200 here): one delivery
	// in three tries shows what mcp-go means to do.
	ls := newLeanServer(t, nil)
	var last string
	for range 3 {
		id := ls.open(t)
		noForwarders(t)
		if err := ls.mcp.AddSessionTool(id, mcp.NewTool("mine"), ran); err != nil {
			t.Fatal(err)
		}
		w := fixture.Send(ls.alone, unknownCall, hdr(id))
		if slices.ContainsFunc(messagesOf(w), func(m string) bool { return strings.Contains(m, "notifications/tools/list_changed") }) {
			return
		}
		last = w.Body.String()
	}
	t.Fatalf("mcp-go alone did not deliver the notification with the call: %s", last)
}

// Promise: the listed tools are what mcp-go's own tools/list shows the
// caller. mcp-go lists a session tool by its Tool.Name and finds it for a
// call by its key in the session's tool map; the two differ when the
// server sets a session's tools with SetSessionTools (a public method of
// every SessionWithTools) under other keys. The list the tool set reads
// from mcp-go shows the Tool.Name; the lean list shows the keys (union of
// the base list and GetSessionTools' keys). New with lean ("lists"
// passes). No call is decided wrongly (Lookup reads the keys, as mcp-go's
// call does); only availableTools differs.
func TestReviewLeanListsSessionToolKeysNotNames(t *testing.T) {
	for _, lean := range []bool{true, false} {
		t.Run(map[bool]string{true: "lean", false: "lists"}[lean], func(t *testing.T) {
			ls := newLeanServer(t, func(s *server.MCPServer, h *server.Hooks) {
				h.AddOnRegisterSession(func(_ context.Context, cs server.ClientSession) {
					if st, ok := cs.(server.SessionWithTools); ok && strings.HasPrefix(cs.SessionID(), "mcp-session-") {
						st.SetSessionTools(map[string]server.ServerTool{
							"alias": {Tool: mcp.NewTool("weather"), Handler: ran},
						})
					}
				})
				if !lean {
					server.WithToolFilter(func(_ context.Context, tools []mcp.Tool) []mcp.Tool { return tools })(s)
				}
			})
			id := ls.open(t)
			want := ls.serverList(t, id)
			if !slices.Contains(want, "weather") || slices.Contains(want, "alias") {
				t.Fatalf("setup: mcp-go lists %q", want)
			}
			if got := ls.guardList(t, id); !slices.Equal(got, want) {
				t.Errorf("the guard lists %q, mcp-go's tools/list %q", got, want)
			}
		})
	}
}

// Promise: never a tool list shown to a caller mcp-go refuses before
// lookup. leanBase looks for OnRequestInitialization hooks in the Hooks
// Tools saw; a server that installs new Hooks after Tools (here a copy of
// the old ones, which keeps the tool set's own hooks, plus a request hook
// that refuses tools/call and tools/list) refuses the call before lookup,
// yet the lean tool set pings (the hook lets pings through) and answers
// the call with a list. (The server's base list, read in process through
// the new hooks, would be refused; it is read once per version of the
// tools, here before the hooks were replaced.) New with lean ("lists"
// passes: the tools/list is refused as the call is). Package doc asks for
// Tools after the server's options are set, but leanBase could read
// s.GetHooks() live.
func TestReviewHooksReplacedAfterTools(t *testing.T) {
	for _, lean := range []bool{true, false} {
		t.Run(map[bool]string{true: "lean", false: "lists"}[lean], func(t *testing.T) {
			ls := newLeanServer(t, func(s *server.MCPServer, _ *server.Hooks) {
				if !lean {
					server.WithToolFilter(func(_ context.Context, tools []mcp.Tool) []mcp.Tool { return tools })(s)
				}
			})
			// Another caller's unknown call, before the change: the server's
			// base list is read (and kept for this version of the tools).
			ls.guardList(t, ls.open(t))
			id := ls.open(t)
			replaced := *ls.mcp.GetHooks()
			replaced.AddOnRequestInitialization(func(_ context.Context, _ any, message any) error {
				if raw, ok := message.(json.RawMessage); ok && strings.Contains(string(raw), `"tools/`) {
					return fmt.Errorf("tools are closed")
				}
				return nil
			})
			server.WithHooks(&replaced)(ls.mcp)
			alone := fixture.Send(ls.alone, unknownCall, hdr(id))
			if !strings.Contains(alone.Body.String(), "tools are closed") {
				t.Fatalf("setup: mcp-go alone: %d %s", alone.Code, alone.Body)
			}
			guarded := fixture.Send(ls.guarded, unknownCall, hdr(id))
			if rejected(guarded.Body.String()) || guarded.Body.String() != alone.Body.String() {
				t.Errorf("mcp-go refuses the call before lookup (%s), the guard answered %d %s", strings.TrimSpace(alone.Body.String()), guarded.Code, guarded.Body)
			}
		})
	}
}

// Stateless mode: a GET without a session id registers a listening
// session whose id is "" (the stateless manager generates ""), and every
// sessionless POST is then dispatched with that session, its session tools
// included. A session tool added to it is called by every sessionless
// caller; the tool set keeps a sessionless caller's list without watching
// that session's tools (ask drops the session of a caller without
// Mcp-Session-Id), so the call is rejected for up to MaxAge. Promise
// broken: never a wrong rejection. Not new with lean (both subtests fail).
func TestReviewStatelessListenerSessionTools(t *testing.T) {
	for _, lean := range []bool{true, false} {
		t.Run(map[bool]string{true: "lean", false: "lists"}[lean], func(t *testing.T) {
			var registered = make(chan string, 4)
			setup := func(s *server.MCPServer, h *server.Hooks) {
				h.AddOnRegisterSession(func(_ context.Context, cs server.ClientSession) { registered <- cs.SessionID() })
				if !lean {
					server.WithToolFilter(func(_ context.Context, tools []mcp.Tool) []mcp.Tool { return tools })(s)
				}
			}
			ls := newLeanServer(t, setup, server.WithStateLess(true))
			<-registered // the watcher
			ctx, cancel := context.WithCancel(context.Background())
			getDone := make(chan struct{})
			go func() {
				defer close(getDone)
				r := httptest.NewRequestWithContext(ctx, http.MethodGet, "/mcp", nil)
				r.Host = "localhost:8080"
				r.RemoteAddr = "127.0.0.1:50000"
				r.Header.Set("Mcp-Protocol-Version", "2025-11-25")
				r.Header.Set("Accept", "text/event-stream")
				ls.alone.ServeHTTP(httptest.NewRecorder(), r)
			}()
			defer func() { cancel(); <-getDone }()
			select {
			case id := <-registered:
				if id != "" {
					t.Fatalf("the GET registered session %q, want \"\"", id)
				}
			case <-time.After(3 * time.Second):
				t.Fatal("the GET registered no session")
			}
			// A sessionless caller's list, reused from now on.
			if got := ls.guardList(t, ""); slices.Contains(got, "late") {
				t.Fatalf("setup: %q", got)
			}
			if err := ls.mcp.AddSessionTool("", mcp.NewTool("late"), ran); err != nil {
				t.Fatal(err)
			}
			alone := fixture.Send(ls.alone, callBody("late"), hdr(""))
			if !strings.Contains(alone.Body.String(), "ran late") {
				t.Fatalf("setup: mcp-go alone does not run it: %s", alone.Body)
			}
			guarded := fixture.Send(ls.guarded, callBody("late"), hdr(""))
			if !strings.Contains(guarded.Body.String(), "ran late") {
				t.Errorf("mcp-go runs the session tool for a sessionless caller; the guard answered %s", guarded.Body)
			}
		})
	}
}

// Promise: never a wrong rejection. A call that arrives after a task
// tool was added (AddTaskTool has returned: mcp-go would run it) joins the
// request for its caller's list that another call of the same caller
// started before the change, and is decided by that request's list. A list
// asked of mcp-go is built when mcp-go dispatches it, so it has the tool;
// the lean list is built from the server's list read before the ping was
// sent, so it lacks it for as long as the ping takes to reach mcp-go's
// dispatch. Here the ping is slowed by the server's HTTP context function
// (say, a token introspection); the call is rejected. New with lean
// ("lists" passes).
func TestReviewJoinedFlightStartedBeforeTheChange(t *testing.T) {
	for _, lean := range []bool{true, false} {
		t.Run(map[bool]string{true: "lean", false: "lists"}[lean], func(t *testing.T) {
			var slow atomic.Bool
			entered, release := make(chan struct{}, 1), make(chan struct{})
			contextFunc := func(ctx context.Context, _ *http.Request) context.Context {
				if slow.CompareAndSwap(true, false) {
					entered <- struct{}{}
					<-release
				}
				return ctx
			}
			ls := newLeanServer(t, func(s *server.MCPServer, h *server.Hooks) {
				if !lean {
					server.WithToolFilter(func(_ context.Context, tools []mcp.Tool) []mcp.Tool { return tools })(s)
				}
			}, server.WithHTTPContextFunc(contextFunc))
			id := ls.open(t)
			slow.Store(true)
			first := make(chan *httptest.ResponseRecorder)
			go func() { first <- fixture.Send(ls.guarded, unknownCall, hdr(id)) }()
			<-entered // the tool set's request for the first call's list
			ls.mcp.AddTaskTool(mcp.NewTool("fresh_job", mcp.WithTaskSupport(mcp.TaskSupportOptional)),
				func(context.Context, mcp.CallToolRequest) (*mcp.CreateTaskResult, error) {
					return &mcp.CreateTaskResult{}, nil
				})
			second := make(chan *httptest.ResponseRecorder)
			go func() { second <- fixture.Send(ls.guarded, taskCall("fresh_job"), hdr(id)) }()
			time.Sleep(100 * time.Millisecond) // the second call waits for the first's list
			close(release)
			<-first
			w := <-second
			if rejected(w.Body.String()) {
				t.Errorf("fresh_job, added before the call arrived, rejected: %s", w.Body)
			}
			if alone := fixture.Send(ls.alone, taskCall("fresh_job"), hdr(id)); strings.Contains(alone.Body.String(), "not found") {
				t.Fatalf("setup: mcp-go alone does not run it: %s", alone.Body)
			}
		})
	}
}

// Passes (coverage): task tools added while many callers are new (each
// new caller's lean list is built from the server's base list, read again
// for every version, concurrently): a task tool whose AddTaskTool returned
// before the call was sent is never rejected, from a new session or from
// one whose list is kept; an unknown name always is.
func TestReviewLeanConcurrentTaskTools(t *testing.T) {
	ls := newLeanServer(t, nil)
	if !ls.tools.lean {
		t.Fatal("not lean")
	}
	var added atomic.Int64 // task tools job_0 .. job_{added-1} exist
	stop := make(chan struct{})
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			ls.mcp.AddTaskTool(mcp.NewTool(fmt.Sprintf("job_%d", i), mcp.WithTaskSupport(mcp.TaskSupportOptional)),
				func(context.Context, mcp.CallToolRequest) (*mcp.CreateTaskResult, error) {
					return &mcp.CreateTaskResult{}, nil
				})
			added.Store(int64(i + 1))
			time.Sleep(200 * time.Microsecond)
		}
	}()
	const workers, rounds = 4, 30
	errs := make(chan string, workers*rounds*2)
	done := make(chan struct{})
	for w := range workers {
		go func() {
			defer func() { done <- struct{}{} }()
			kept := ls.open(t)
			for i := range rounds {
				session := kept
				if i%2 == 0 {
					session = ls.open(t) // a new caller: ping and base list
				}
				if n := added.Load(); n > 0 {
					name := fmt.Sprintf("job_%d", (int64(w*rounds+i))%n)
					if b := fixture.Send(ls.guarded, taskCall(name), hdr(session)).Body.String(); rejected(b) {
						errs <- name + " rejected: " + b
					}
				}
				if b := fixture.Send(ls.guarded, unknownCall, hdr(session)).Body.String(); !rejected(b) {
					errs <- "unknown not rejected: " + b
				}
			}
		}()
	}
	for range workers {
		<-done
	}
	close(stop)
	<-writerDone
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// Passes (coverage): with pagination, mcp-go lists a caller page by page;
// the lean list, built from the server's whole list, is the union of
// every page (the guard then lists all, as Discover does reading all
// pages).
func TestReviewLeanPaginated(t *testing.T) {
	ls := newLeanServer(t, func(s *server.MCPServer, _ *server.Hooks) {
		server.WithPaginationLimit(7)(s)
	})
	if !ls.tools.lean {
		t.Fatal("not lean")
	}
	id := ls.open(t)
	if err := ls.mcp.AddSessionTool(id, mcp.NewTool("tool_07x"), ran); err != nil {
		t.Fatal(err)
	}
	var all []string
	cursor := ""
	for page := 0; page < 20; page++ {
		params := `{}`
		if cursor != "" {
			params = `{"cursor":` + fmt.Sprintf("%q", cursor) + `}`
		}
		w := fixture.Send(ls.alone, `{"jsonrpc":"2.0","id":"l","method":"tools/list","params":`+params+`}`, hdr(id))
		msgs := messagesOf(w)
		var reply struct {
			Result struct {
				Tools      []struct{ Name string } `json:"tools"`
				NextCursor string                  `json:"nextCursor"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(msgs[len(msgs)-1]), &reply); err != nil {
			t.Fatal(err)
		}
		for _, tool := range reply.Result.Tools {
			all = append(all, tool.Name)
		}
		if cursor = reply.Result.NextCursor; cursor == "" {
			break
		}
	}
	if got := ls.guardList(t, id); !slices.Equal(got, all) {
		t.Errorf("the guard lists %q; mcp-go's pages %q", got, all)
	}
}

// Passes (coverage): a session that a GET registered (default mode: any
// well-formed id is accepted, and a GET with one registers it) is the
// session mcp-go dispatches that id's POSTs with, session tools included:
// the lean list has them, is reused, follows them, and stops being reused
// when the GET ends (the session is unregistered).
func TestReviewLeanListeningSession(t *testing.T) {
	registered := make(chan string, 8)
	ls := newLeanServer(t, func(_ *server.MCPServer, h *server.Hooks) {
		h.AddOnRegisterSession(func(_ context.Context, cs server.ClientSession) { registered <- cs.SessionID() })
	})
	<-registered // the watcher
	id := "mcp-session-0b1c2d3e-0000-4000-8000-000000000001"
	ctx, cancel := context.WithCancel(context.Background())
	getDone := make(chan struct{})
	go func() {
		defer close(getDone)
		r := httptest.NewRequestWithContext(ctx, http.MethodGet, "/mcp", nil)
		r.Host = "localhost:8080"
		r.RemoteAddr = "127.0.0.1:50000"
		r.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		r.Header.Set("Mcp-Session-Id", id)
		ls.alone.ServeHTTP(httptest.NewRecorder(), r)
	}()
	defer func() { cancel(); <-getDone }()
	if got := <-registered; got != id {
		t.Fatalf("registered %q", got)
	}
	// The server's hook ran; the tool set's (added after it) may not have.
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(time.Millisecond) {
		ls.tools.mu.Lock()
		_, ok := ls.tools.sessions[id]
		ls.tools.mu.Unlock()
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the tool set never saw the session registered")
		}
	}
	if err := ls.mcp.AddSessionTool(id, mcp.NewTool("listener_tool"), ran); err != nil {
		t.Fatal(err)
	}
	ls.learn(t)
	ls.pings.Store(0)
	for range 3 {
		if got, want := ls.guardList(t, id), ls.serverList(t, id); !slices.Equal(got, want) || !slices.Contains(got, "listener_tool") {
			t.Fatalf("the guard lists %q, mcp-go %q", got, want)
		}
	}
	if p := ls.pings.Load(); p != 1 {
		t.Errorf("%d pings for one listening session's three unknown calls, want 1", p)
	}
	if err := ls.mcp.AddSessionTool(id, mcp.NewTool("second_tool"), ran); err != nil {
		t.Fatal(err)
	}
	if b := fixture.Send(ls.guarded, callBody("second_tool"), hdr(id)).Body.String(); !strings.Contains(b, "ran second_tool") {
		t.Fatalf("a session tool added later: %s", b)
	}
	cancel()
	<-getDone
	ls.pings.Store(0)
	ls.guardList(t, id)
	if p := ls.pings.Load(); p != 1 {
		t.Errorf("after the GET ended: %d pings, want 1 (the list is not reused)", p)
	}
}

// Promise: the guard answers only where mcp-go would have looked the tool
// up. mcp-go decodes a tools/call's params into CallToolParams before the
// lookup; a member of the wrong type there (task not an object or its ttl
// not an int64, inputResponses not an object, requestState not a string)
// makes it answer -32600 "unparsable tools/call request" without looking
// the name up. The guard reads name, arguments and _meta only, finds the
// name unknown and answers -32602 with the caller's list. Not new with
// lean (the ping and the list are both accepted for this caller); the
// differential corpus (internal/fixture/differential.go) has no such body.
func TestReviewUnparsableCallParamsAnswered(t *testing.T) {
	ls := newLeanServer(t, nil)
	id := ls.open(t)
	for _, p := range []string{
		`"task":5`, `"task":"x"`, `"task":[]`, `"task":{"ttl":"x"}`, `"task":{"ttl":1.5}`, `"task":{"ttl":1e3}`,
		`"inputResponses":5`, `"inputResponses":[]`, `"requestState":5`, `"requestState":{}`,
	} {
		body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope","arguments":{},` + p + `}}`
		alone := fixture.Send(ls.alone, body, hdr(id))
		if !strings.Contains(alone.Body.String(), `"code":-32600`) {
			t.Fatalf("%s: setup: mcp-go alone looked it up: %s", p, alone.Body)
		}
		guarded := fixture.Send(ls.guarded, body, hdr(id))
		if guarded.Code != alone.Code || guarded.Body.String() != alone.Body.String() {
			t.Errorf("%s: mcp-go refuses the call unparsed (%.90s); the guard answered %.90s", p, alone.Body, guarded.Body)
		}
	}
}

// Passes (coverage): a request hook added to the server's Hooks after
// Tools (the same Hooks, so leanBase sees it) stops the lean lists at
// once: the call is decided by the caller's tools/list, which the hook
// refuses as it refuses the call, and the call passes through.
func TestReviewRequestHookAddedAfterTools(t *testing.T) {
	ls := newLeanServer(t, nil)
	ls.guardList(t, ls.open(t)) // the base list is read and kept
	id := ls.open(t)
	ls.mcp.GetHooks().AddOnRequestInitialization(func(_ context.Context, _ any, message any) error {
		if raw, ok := message.(json.RawMessage); ok && strings.Contains(string(raw), `"tools/`) {
			return fmt.Errorf("tools are closed")
		}
		return nil
	})
	ls.pings.Store(0)
	alone := fixture.Send(ls.alone, unknownCall, hdr(id))
	guarded := fixture.Send(ls.guarded, unknownCall, hdr(id))
	if guarded.Body.String() != alone.Body.String() || !strings.Contains(alone.Body.String(), "tools are closed") {
		t.Errorf("mcp-go alone %s; the guard %s", alone.Body, guarded.Body)
	}
	if p := ls.pings.Load(); p != 0 {
		t.Errorf("%d pings with a request hook", p)
	}
}

// Promise: a clear error or a pass-through, never a panic. Over HTTP
// mcp-go dispatches every tools/list with a session (the caller's, or an
// ephemeral one), so a server's list hook may read it; here an
// OnBeforeListTools hook logs the session id. The lean tool set reads the
// server's base list with HandleMessage in process, without a session, in
// the goroutine that fetches the caller's list: the hook panics there,
// where nothing recovers, and the whole process dies on the first unknown
// call. (The list asked through the handler, "lists", runs the hook with
// the caller's session; a panic there would be recovered by Discovery.)
// The process is a child (the test binary run again), so the crash does
// not take this test binary with it.
func TestReviewLeanBaseListWithoutSession(t *testing.T) {
	for _, lean := range []bool{true, false} {
		t.Run(map[bool]string{true: "lean", false: "lists"}[lean], func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestReviewLeanBaseListChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), "TOOLGUARD_REVIEW_CHILD="+map[bool]string{true: "lean", false: "lists"}[lean])
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "child: the guard answered") {
				t.Errorf("the server process died on an unknown call (%v):\n%.1500s", err, out)
			}
		})
	}
}

func TestReviewLeanBaseListChild(t *testing.T) {
	mode := os.Getenv("TOOLGUARD_REVIEW_CHILD")
	if mode == "" {
		t.Skip("run by TestReviewLeanBaseListWithoutSession")
	}
	var listed atomic.Int64
	ls := newLeanServer(t, func(s *server.MCPServer, h *server.Hooks) {
		h.AddBeforeListTools(func(ctx context.Context, _ any, _ *mcp.ListToolsRequest) {
			// A server's per-session list metric.
			if server.ClientSessionFromContext(ctx).SessionID() != "" {
				listed.Add(1)
			}
		})
		if mode == "lists" {
			server.WithToolFilter(func(_ context.Context, tools []mcp.Tool) []mcp.Tool { return tools })(s)
		}
	})
	id := ls.open(t)
	if got := ls.serverList(t, id); len(got) == 0 {
		t.Fatal("setup: mcp-go lists nothing")
	}
	w := fixture.Send(ls.guarded, unknownCall, hdr(id))
	fmt.Printf("child: the guard answered %d %.80s\n", w.Code, w.Body)
}
