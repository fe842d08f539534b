package toolguard

// Reviewer's tests (review2) of the messages the guard relays from the
// server (f82ec60). Tests named TestReview2... that fail on the reviewed
// code demonstrate a broken promise, said in their comment; the others
// cover ground the earlier tests did not and pass.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolguard/toolguard/internal/sse"
)

// relayServer answers tools/list with an event stream in which each list
// request's events come first (what events returns for the n-th list
// request, 1-based, and the page), and tools/call with a JSON result.
type relayServer struct {
	tools    []string
	pages    int // the list in this many pages (1 if zero)
	delay    time.Duration
	events   func(n, page int) string
	lists    atomic.Int32
	mu       sync.Mutex
	relayed  []string // the notification ids written, in order
	notifSeq atomic.Int32
}

// note returns a notification event with a fresh sequence number, and
// records it.
func (s *relayServer) note() string {
	n := s.notifSeq.Add(1)
	s.mu.Lock()
	s.relayed = append(s.relayed, strconv.Itoa(int(n)))
	s.mu.Unlock()
	return fmt.Sprintf("event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"seq\":%d}}\n\n", n)
}

func (s *relayServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Cursor string `json:"cursor"`
		} `json:"params"`
	}
	if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	switch m.Method {
	case "tools/call":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[]}}`, m.ID)
		return
	case "tools/list":
	default:
		w.WriteHeader(299)
		return
	}
	n := int(s.lists.Add(1))
	time.Sleep(s.delay)
	pages := max(s.pages, 1)
	page, _ := strconv.Atoi(m.Params.Cursor)
	per := (len(s.tools) + pages - 1) / pages
	start, end := page*per, min((page+1)*per, len(s.tools))
	var list []map[string]any
	for _, name := range s.tools[start:end] {
		list = append(list, map[string]any{"name": name, "inputSchema": map[string]any{"type": "object"}})
	}
	res := map[string]any{"tools": list}
	if page+1 < pages {
		res["nextCursor"] = strconv.Itoa(page + 1)
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": res})
	w.Header().Set("Content-Type", "text/event-stream")
	if s.events != nil {
		fmt.Fprint(w, s.events(n, page))
	}
	fmt.Fprintf(w, "event: message\ndata: %s\n\n", b)
}

func relayGuard(t *testing.T, s *relayServer, opts DiscoverOptions) http.Handler {
	t.Helper()
	d, err := Discover(s, opts)
	if err != nil {
		t.Fatal(err)
	}
	return mustGuard(t, Options{Tools: d}).Handler(s)
}

// Promise: never an altered message. An SSE event's data may span several
// data: lines (the client joins them with a newline); a JSON-RPC message
// pretty-printed over two lines is a valid event. The guard relays the
// joined data after a single "data: " prefix, so the second line reaches
// the client as a field of its own (ignored by an SSE parser) and the
// message the client reads is cut after its first line: not JSON any more.
// FAILS on the reviewed code.
func TestReview2RelayedMultiLineEventAltered(t *testing.T) {
	s := &relayServer{tools: []string{"a"}, events: func(int, int) string {
		return "event: message\ndata: {\"jsonrpc\":\"2.0\",\ndata:  \"method\":\"notifications/message\",\"params\":{}}\n\n"
	}}
	h := relayGuard(t, s, DiscoverOptions{})
	w := serve(h, call("1", `"nope"`), nil)
	msgs := sse.Messages(w.Body.Bytes())
	if len(msgs) != 2 {
		t.Fatalf("answer %q: %d messages, want the notification and the error", w.Body, len(msgs))
	}
	var n struct {
		Method string `json:"method"`
	}
	if err := json.Unmarshal(msgs[0], &n); err != nil || n.Method != "notifications/message" {
		t.Errorf("relayed message %q (%v): the server sent a whole notifications/message\nanswer %q", msgs[0], err, w.Body)
	}
}

// Promise: never a lost message. The guard's own tools/list takes what the
// server sends the caller on it (the relay exists for that), but only a
// rejection carries it: when the fresh list has the name after all (a
// caller's first call of a tool, before any list of the caller is known),
// the call passes and the notification the server sent on the guard's
// list is dropped. The same happens with the mcp-go tool set
// (adapters/mcpgo TestReview2KnownCallLosesQueuedNotification).
// FAILS on the reviewed code.
func TestReview2ListedCallLosesRelayedMessage(t *testing.T) {
	s := &relayServer{tools: []string{"a"}}
	s.events = func(int, int) string { return s.note() }
	h := relayGuard(t, s, DiscoverOptions{})
	w := serve(h, call("1", `"a"`), nil)
	if s.lists.Load() != 1 {
		t.Fatalf("%d lists, want the one that confirms the call", s.lists.Load())
	}
	if !strings.Contains(w.Body.String(), `"result"`) {
		t.Fatalf("known call not passed: %d %s", w.Code, w.Body)
	}
	if !strings.Contains(w.Body.String(), `"notifications/message"`) {
		t.Errorf("the notification the server sent the caller on the guard's list is lost; the caller got %q", w.Body)
	}
}

// Passing coverage: a list in pages, each page's stream with its own
// notification: the answer carries both, in the order the server sent
// them, once each, before the error; Content-Length is the body's.
func TestReview2RelayedPagesInOrder(t *testing.T) {
	s := &relayServer{tools: []string{"a", "b", "c", "d"}, pages: 2}
	s.events = func(int, int) string { return s.note() + s.note() }
	h := relayGuard(t, s, DiscoverOptions{})
	w := serve(h, call("1", `"nope"`), nil)
	msgs := sse.Messages(w.Body.Bytes())
	var seqs []string
	for _, m := range msgs[:len(msgs)-1] {
		var n struct {
			Params struct{ Seq int } `json:"params"`
		}
		if err := json.Unmarshal(m, &n); err != nil {
			t.Fatalf("relayed %q: %v", m, err)
		}
		seqs = append(seqs, strconv.Itoa(n.Params.Seq))
	}
	if strings.Join(seqs, ",") != strings.Join(s.relayed, ",") || len(seqs) != 4 {
		t.Errorf("relayed %v, the server sent %v", seqs, s.relayed)
	}
	if !bytes.Contains(msgs[len(msgs)-1], []byte(`"availableTools":["a","b","c","d"]`)) {
		t.Errorf("last message %s, want the error with every page's names", msgs[len(msgs)-1])
	}
	if w.Header().Get("Content-Length") != strconv.Itoa(w.Body.Len()) {
		t.Errorf("Content-Length %s for %d bytes", w.Header().Get("Content-Length"), w.Body.Len())
	}
}

// Passing coverage: a server-to-client request (sampling, with an id of
// its own, even one equal to the call's id) and a response on the guard's
// list stream are relayed byte for byte; only the reply to the guard's own
// request is held back.
func TestReview2RelayedRequestsAndResponsesIntact(t *testing.T) {
	sampling := `{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}`
	response := `{"jsonrpc":"2.0","id":"toolguard-list-0","result":{}}`
	s := &relayServer{tools: []string{"a"}, events: func(int, int) string {
		return "event: message\ndata: " + sampling + "\n\nevent: message\ndata: " + response + "\n\n"
	}}
	h := relayGuard(t, s, DiscoverOptions{})
	w := serve(h, call("1", `"nope"`), nil)
	msgs := sse.Messages(w.Body.Bytes())
	if len(msgs) != 3 || string(msgs[0]) != sampling || string(msgs[1]) != response {
		t.Errorf("answer %q, want the request and the response as sent, then the error", w.Body)
	}
}

// Passing coverage: calls that share one list request (they arrive while
// it runs) do not each get its messages: every notification the server
// sent reaches exactly one answer, never two, and a later call whose list
// is another request does not get the earlier ones.
func TestReview2SharedFetchRelaysOnce(t *testing.T) {
	s := &relayServer{tools: []string{"a"}, delay: 20 * time.Millisecond}
	s.events = func(int, int) string { return s.note() }
	h := relayGuard(t, s, DiscoverOptions{MinInterval: time.Nanosecond})
	const n = 8
	answers := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i] = serve(h, call(strconv.Itoa(i), `"nope"`), nil).Body.String()
		}()
	}
	wg.Wait()
	answers = append(answers, serve(h, call("99", `"nope"`), nil).Body.String())
	got := map[int]int{}
	for _, a := range answers {
		if !strings.Contains(a, `"code":-32602`) {
			t.Fatalf("answer %q", a)
		}
		for _, m := range sse.Messages([]byte(a)) {
			var msg struct {
				Method string
				Params struct{ Seq int }
			}
			if json.Unmarshal(m, &msg) == nil && msg.Method == "notifications/message" {
				got[msg.Params.Seq]++
			}
		}
	}
	if len(got) != int(s.notifSeq.Load()) {
		t.Errorf("%d of %d notifications relayed: %v", len(got), s.notifSeq.Load(), got)
	}
	for seq, k := range got {
		if k != 1 {
			t.Errorf("notification %d relayed %d times", seq, k)
		}
	}
	t.Logf("%d calls, %d list requests", len(answers), s.lists.Load())
}
