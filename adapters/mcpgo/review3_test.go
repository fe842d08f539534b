package toolguardmcpgo

// Reviewer's tests (review3) of Redeliver (5ebce96): a call that passes
// after the tool set's own request took a session's queued notifications
// gives them back to mcp-go. Tests named TestReview3... that fail on the
// reviewed code demonstrate a broken promise, said in their comment; the
// others cover ground the earlier tests did not and pass.

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolguard/toolguard/internal/fixture"
	toolguard "github.com/toolguard/toolguard/middleware"
)

// noteWith returns the notifications/message in msgs whose params hold
// marker, or "".
func noteWith(msgs []string, marker string) string {
	for _, m := range msgs {
		if strings.Contains(m, `"notifications/message"`) && strings.Contains(m, marker) {
			return m
		}
	}
	return ""
}

// bigParams are the params of a notification a Go server sends: an int64
// beyond 2^53 (an id, a byte count, a nanosecond timestamp) among them.
func bigParams() map[string]any {
	return map[string]any{"seq": "big", "n": int64(9007199254740993)}
}

// Promise: never an altered message. Redeliver decodes each notification
// into mcp.JSONRPCNotification and mcp-go encodes it again: the params go
// through map[string]any, so an integer beyond 2^53 comes back as the
// nearest float64 (9007199254740993 becomes 9007199254740992), and
// mcp-go's NotificationParams decoder always sets Meta, so an empty
// "_meta":{} is added to params that had none. mcp-go alone delivers the
// notification as the server sent it.
// FAILS on the reviewed code.
func TestReview3RedeliveredNotificationAltered(t *testing.T) {
	ls := newLeanServer(t, nil)
	ls.learn(t)
	// mcp-go alone (one delivery in three tries: its own forwarder race,
	// see noForwarders).
	var want string
	for range 3 {
		id := ls.open(t)
		noForwarders(t)
		if err := ls.mcp.SendNotificationToSpecificClient(id, "notifications/message", bigParams()); err != nil {
			t.Fatal(err)
		}
		if want = noteWith(messagesOf(fixture.Send(ls.alone, unknownCall, hdr(id))), `"seq":"big"`); want != "" {
			break
		}
	}
	if want == "" {
		t.Fatal("mcp-go alone did not deliver the notification with the call")
	}
	if !strings.Contains(want, `9007199254740993`) {
		t.Fatalf("mcp-go alone sent %s", want)
	}
	// Through the guard: the session's first call of its own session tool
	// is confirmed by the lean ping, which takes the notification; the call
	// passes and Redeliver gives it back. mcp-go then delivers it with the
	// call, subject to the same forwarder race as alone: one delivery in
	// three tries, and every delivery byte for byte.
	delivered := false
	for range 3 {
		id := ls.open(t)
		noForwarders(t)
		if err := ls.mcp.AddSessionTool(id, mcp.NewTool("mine"), ran); err != nil {
			t.Fatal(err)
		}
		if err := ls.mcp.SendNotificationToSpecificClient(id, "notifications/message", bigParams()); err != nil {
			t.Fatal(err)
		}
		pings := ls.pings.Load()
		w := fixture.Send(ls.guarded, callBody("mine"), hdr(id))
		if !strings.Contains(w.Body.String(), `"ran mine"`) {
			t.Fatalf("known call not run: %d %s", w.Code, w.Body)
		}
		if ls.pings.Load() == pings {
			t.Fatal("the call was not confirmed by the tool set's ping: nothing was redelivered")
		}
		got := noteWith(messagesOf(w), `"seq":"big"`)
		if got == "" {
			continue
		}
		delivered = true
		if got != want {
			t.Errorf("the client got the notification as\n  %s\nmcp-go alone sends\n  %s", got, want)
		}
		break
	}
	if !delivered {
		t.Error("the notification never reached the client in three tries")
	}
}

// Promise: never a lost message (and no data race). A call waits at most
// MaxWait for the tool set's request for its list, even its own (fly runs
// on its own). mcp-go's tools/list POST takes the session's queued
// notification as soon as it starts; when the list takes longer than
// MaxWait (a slow OnBeforeListTools hook, a tool filter that asks an
// authorization service), the call passes (list-failed) and redeliver finds
// nothing yet; the request then finishes and relay appends the notification
// to the call, which was decided long ago: it reaches the client with
// neither this call's reply nor a later one. mcp-go alone delivers it with
// the call. (The append and the guard's earlier read of the call's
// messages are not ordered by the tool set either: only mcp-go's own locks
// on the way happen to order them, so -race does not report it here.)
// FAILS on the reviewed code.
func TestReview3MaxWaitLosesNotification(t *testing.T) {
	const slow = 300 * time.Millisecond
	hooks := &server.Hooks{}
	hooks.AddBeforeListTools(func(context.Context, any, *mcp.ListToolsRequest) { time.Sleep(slow) })
	s := server.NewMCPServer("slow", "1.0.0", server.WithToolCapabilities(true), server.WithHooks(hooks))
	s.AddTool(mcp.NewTool("tool_01"), ran)
	alone := server.NewStreamableHTTPServer(s)
	tools, err := Tools(s, alone, Options{Discover: toolguard.DiscoverOptions{MinInterval: time.Nanosecond, MaxWait: 20 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tools.Close() })
	g, err := toolguard.New(toolguard.Options{Tools: tools})
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
		t.Errorf("the notification reached the client %d times, want once: %q", k, seen)
	}
}

// Passing coverage: Redeliver leaves alone what it cannot give back and
// never blocks: a session whose queue is full (mcp-go's buffer holds 100)
// gets the notifications that fit, a session mcp-go no longer knows and a
// caller without a session get nothing, and the calls pass and run.
func TestReview3RedeliverFullQueueAndUnknownSessions(t *testing.T) {
	ls := newLeanServer(t, nil)
	ls.learn(t)
	id := ls.open(t)
	noForwarders(t)
	msgs := [][]byte{
		[]byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"seq":1}}`),
		[]byte(`{"jsonrpc":"2.0","id":5,"method":"roots/list"}`),
		[]byte(`{"jsonrpc":"2.0","id":5,"result":{}}`),
		[]byte(`not json`),
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		r, _ := http.NewRequest("POST", "/", nil)
		r.Header = hdr(id)
		for range 150 { // past the queue's 100
			ls.tools.Redeliver(r, msgs)
		}
		r.Header = hdr("no-such-session")
		ls.tools.Redeliver(r, msgs)
		r.Header = hdr("")
		ls.tools.Redeliver(r, msgs)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Redeliver blocked")
	}
	w := fixture.Send(ls.guarded, callBody("tool_01"), hdr(id))
	got := messagesOf(w)
	if !strings.Contains(w.Body.String(), `"ran tool_01"`) {
		t.Fatalf("known call not run: %d %s", w.Code, w.Body)
	}
	// mcp-go's own forwarder race may drop one or two as the call ends
	// (see noForwarders).
	if k := countNote(got, "1"); k < 95 || k > 100 {
		t.Errorf("%d notifications delivered, want the 100 the queue holds", k)
	}
	for _, m := range got {
		if strings.Contains(m, `"roots/list"`) || strings.Contains(m, `"id":5`) {
			t.Errorf("a request or response was put on the notification queue: %s", m)
		}
	}
}

// Promise: never a lost message. The tool set keeps at most maxCallers
// (10,000) registered sessions; mcp-go unregisters a streamable HTTP
// session only on DELETE (or with WithSessionIdleTTL, off by default), so
// a long-running server whose clients go away without DELETE reaches that
// count and keeps it. From then on every new session is unknown to
// Redeliver, which drops what the tool set's request took from it; and as
// the guard leaves redelivery to a Redeliverer, Guard.Handler does not
// deliver it either. Here: 10,000 sessions registered (as mcp-go registers
// them at initialize), then a new session's first call of its session tool,
// confirmed by the lean ping, which takes the session's queued
// notification. mcp-go alone delivers it with the call.
// FAILS on the reviewed code.
func TestReview3RedeliverLostPastMaxCallers(t *testing.T) {
	ls := newLeanServer(t, nil)
	ls.learn(t)
	for i := range maxCallers {
		s := &slowSession{id: "gone-" + strconv.Itoa(i), ch: make(chan mcp.JSONRPCNotification, 1), gate: &gate{}}
		if err := ls.mcp.RegisterSession(context.Background(), s); err != nil {
			t.Fatal(err)
		}
	}
	// mcp-go itself drops a queued notification now and then (see
	// noForwarders): never twice, and once in one of three tries.
	var seen []string
	for range 3 {
		id := ls.open(t)
		noForwarders(t)
		if err := ls.mcp.AddSessionTool(id, mcp.NewTool("mine"), ran); err != nil {
			t.Fatal(err)
		}
		if err := ls.mcp.SendNotificationToSpecificClient(id, "notifications/message", map[string]any{"seq": 1}); err != nil {
			t.Fatal(err)
		}
		pings := ls.pings.Load()
		w := fixture.Send(ls.guarded, callBody("mine"), hdr(id))
		if !strings.Contains(w.Body.String(), `"ran mine"`) {
			t.Fatalf("known call not run: %d %s", w.Code, w.Body)
		}
		if ls.pings.Load() == pings {
			t.Fatal("the call was not confirmed by the tool set's ping")
		}
		seen = messagesOf(w)
		noForwarders(t)
		seen = append(seen, messagesOf(fixture.Send(ls.guarded, callBody("tool_01"), hdr(id)))...)
		switch countNote(seen, "1") {
		case 1:
			return
		case 0:
			continue
		default:
			t.Fatalf("the session's queued notification reached the client more than once: %q", seen)
		}
	}
	t.Errorf("the session's queued notification never reached the client in three tries: %q", seen)
}

// Promise: never a wrong rejection. mcp-go finds a session tool for a call
// by its key in the session's tool map and lists it by its Tool.Name; a
// server that sets a session's tools with SetSessionTools may use other
// keys (here "alias" for the tool named "weather"). Lookup reads the keys
// only from a list the caller already has (current); a session's first
// call has none, so Lookup says Absent and the name is then searched in
// the list, which holds "weather": the guard answers -32602 for "alias",
// which mcp-go runs. (TestReviewLeanListsSessionToolKeysNotNames says "no
// call is decided wrongly"; that holds from the session's second call on.)
// FAILS on the reviewed code (both ways of getting the list).
func TestReview3SessionToolKeyFirstCallRejected(t *testing.T) {
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
			ls.learn(t)
			if alone := fixture.Send(ls.alone, callBody("alias"), hdr(ls.open(t))); !strings.Contains(alone.Body.String(), `"ran alias"`) {
				t.Fatalf("mcp-go alone does not run the session tool by its key: %d %s", alone.Code, alone.Body)
			}
			w := fixture.Send(ls.guarded, callBody("alias"), hdr(ls.open(t)))
			if !strings.Contains(w.Body.String(), `"ran alias"`) {
				t.Errorf("the session's first call of its tool by key: %d %s, mcp-go runs it", w.Code, w.Body)
			}
		})
	}
}

// Passing coverage: Discover (which is no Redeliverer) in front of mcp-go:
// the session's queued notifications, taken by the Discovery's tools/list,
// reach the client once, with the answer to the call that passes (mcp-go's
// JSON answer made an event stream by Guard.Handler), and not again with
// the session's next POST.
func TestReview3DiscoverRelaysOnceThroughMCPGo(t *testing.T) {
	ls := newLeanServer(t, nil)
	d, err := toolguard.Discover(ls.alone, toolguard.DiscoverOptions{MinInterval: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	g, err := toolguard.New(toolguard.Options{Tools: d})
	if err != nil {
		t.Fatal(err)
	}
	guarded := g.Handler(ls.alone)
	// mcp-go itself drops a queued notification now and then (see
	// noForwarders): never twice, and both once in one of three tries.
	var all []string
	for range 3 {
		id := ls.open(t)
		noForwarders(t)
		if err := ls.mcp.AddSessionTool(id, mcp.NewTool("mine"), ran); err != nil {
			t.Fatal(err)
		}
		if err := ls.mcp.SendNotificationToSpecificClient(id, "notifications/message", map[string]any{"seq": 1}); err != nil {
			t.Fatal(err)
		}
		lists := ls.lists.Load()
		w := fixture.Send(guarded, callBody("mine"), hdr(id))
		if !strings.Contains(w.Body.String(), `"ran mine"`) || ls.lists.Load() == lists {
			t.Fatalf("known call (confirmed by a list: %v): %d %s", ls.lists.Load() != lists, w.Code, w.Body)
		}
		first := messagesOf(w)
		noForwarders(t)
		all = append(first, messagesOf(fixture.Send(guarded, callBody("tool_01"), hdr(id)))...)
		changed := 0
		for _, m := range all {
			if strings.Contains(m, `"notifications/tools/list_changed"`) {
				changed++
			}
		}
		if countNote(all, "1") > 1 || changed > 1 {
			t.Fatalf("notification delivered %d times, list_changed %d times: %q", countNote(all, "1"), changed, all)
		}
		if countNote(all, "1") == 1 && changed == 1 {
			return
		}
	}
	t.Errorf("the notifications were not both delivered in three tries: %q", all)
}

// aloneDelivers fails t unless mcp-go alone delivers a session's queued
// notification with an unknown call in one of three tries (its own
// forwarder race, see noForwarders).
func aloneDelivers(t *testing.T, s *server.MCPServer, alone http.Handler, open func() string) {
	t.Helper()
	for range 3 {
		id := open()
		noForwarders(t)
		if err := s.SendNotificationToSpecificClient(id, "notifications/message", map[string]any{"seq": 1}); err != nil {
			t.Fatal(err)
		}
		if countNote(messagesOf(fixture.Send(alone, unknownCall, hdr(id))), "1") == 1 {
			return
		}
	}
	t.Fatal("mcp-go alone did not deliver the notification with the call")
}
