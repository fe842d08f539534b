package toolguard

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The caller is keyed by the request as it reached the guard, before the
// server's handler runs: an auth middleware behind the guard that strips
// the bearer token once it has checked it does not make two callers one.
func TestCallerIsKeyedAsItCameNotAsTheHandlerLeftIt(t *testing.T) {
	perUser := map[string][]string{"Bearer alice": {"alice_secret_tool"}, "Bearer bob": {"bob_tool"}}
	srv := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user := r.Header.Get("Authorization")
		r.Header.Del("Authorization") // validated; not forwarded further
		body, _ := io.ReadAll(r.Body)
		m := readMessage(body)
		id := string(m.id.raw(body))
		w.Header().Set("Content-Type", "application/json")
		if strEquals(body, m.method, "tools/list") {
			io.WriteString(w, listReply(id, perUser[user]...))
			return
		}
		name := string(decoded(nil, body, m.name))
		io.WriteString(w, errorReply(id, -32602, "tool '"+name+"' not found: tool not found"))
	})
	g := mustGuard(t, Options{Tools: unsure{}})
	alice := http.Header{"Authorization": {"Bearer alice"}}
	bob := http.Header{"Authorization": {"Bearer bob"}}
	serve(g, srv, newRequest("POST", listCall("1", ""), alice))
	w := serve(g, srv, newRequest("POST", call("9", `"nope"`), bob))
	if strings.Contains(w.Body.String(), "alice_secret_tool") {
		t.Errorf("bob, who never listed, was shown alice's list: %s", w.Body)
	}
}

// A list_changed in the answer to a watched call drops the list, whether
// the event stream is streamed or held whole (a stated Content-Length),
// before the not-found event that follows it is translated.
func TestListChangedInAHeldEventStreamDropsTheList(t *testing.T) {
	for _, withLength := range []bool{false, true} {
		g := listedGuard(t, Options{}, "old_tool", "other")
		stream := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n" +
			"event: message\ndata: " + errorReply("5", -32602, "tool 'nope' not found: tool not found") + "\n\n"
		next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "text/event-stream")
			if withLength {
				w.Header().Set("Content-Length", itoa(len(stream)))
			}
			io.WriteString(w, stream)
		})
		w := serve(g, next, newRequest("POST", call("5", `"nope"`), nil))
		if strings.Contains(w.Body.String(), "old_tool") {
			t.Errorf("Content-Length %v: the list the server said had changed was shown: %q", withLength, w.Body)
		}
	}
}

// A tools/list whose params hold "cursor" and "Cursor" is read as a
// case-sensitive server reads it (go-sdk, JSON.parse, json.loads), or not
// at all: page 2 is never kept as the whole list, so a tool of page 1 is
// never taken for absent.
func TestListCursorIsReadAsServersReadIt(t *testing.T) {
	names := []string{"a_runner", "b", "c", "d"}
	srv := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var msg struct {
			ID     json.RawMessage            `json:"id"`
			Method string                     `json:"method"`
			Params map[string]json.RawMessage `json:"params"` // map keys: exact, as JSON.parse reads them
		}
		json.Unmarshal(body, &msg)
		id := string(msg.ID)
		w.Header().Set("Content-Type", "application/json")
		if msg.Method == "tools/list" {
			if string(msg.Params["cursor"]) == `"2"` {
				io.WriteString(w, listReply(id, names[2:]...))
				return
			}
			r := listReply(id, names[:2]...)
			io.WriteString(w, strings.TrimSuffix(r, "}}")+`,"nextCursor":"2"}}`)
			return
		}
		// a_runner runs another tool by name; that one is missing.
		io.WriteString(w, isErrorReply(id, "Tool not found"))
	})
	g := mustGuard(t, Options{Tools: unsure{}})
	serve(g, srv, newRequest("POST", listCall("1", ""), nil))
	serve(g, srv, newRequest("POST", `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"2","Cursor":""}}`, nil))
	w := serve(g, srv, newRequest("POST", call("9", `"a_runner"`), nil))
	if want := isErrorReply("9", "Tool not found"); w.Body.String() != want {
		t.Errorf("the listed tool's own error became %s", w.Body)
	}
}

// In a watched call's event stream, a list_changed that comes after the
// replaced not-found event still drops the list.
func TestListChangedAfterTheAnswerInAStreamDropsTheList(t *testing.T) {
	stream := "event: message\ndata: " + errorReply("5", -32602, "tool 'nope' not found: tool not found") + "\n\n" +
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n"
	for _, size := range []int{7, len(stream)} {
		g := listedGuard(t, Options{}, "old_tool", "other")
		serve(g, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "text/event-stream")
			for i := 0; i < len(stream); i += size {
				io.WriteString(w, stream[i:min(i+size, len(stream))])
			}
		}), newRequest("POST", call("5", `"nope"`), nil))
		notFound := answering(200, "application/json", errorReply("6", -32602, "tool 'nope' not found: tool not found"))
		if w := serve(g, notFound, newRequest("POST", call("6", `"nope"`), nil)); strings.Contains(w.Body.String(), "old_tool") {
			t.Errorf("writes of %d: the list was kept after list_changed: %s", size, w.Body)
		}
	}
}

// A tools/list with "cursor": null asks for the first page, as servers
// read it: its answer is kept.
func TestListWithANullCursorIsAFirstPage(t *testing.T) {
	g := mustGuard(t, Options{Tools: unsure{}})
	serve(g, answering(200, "application/json", listReply(`"l"`, "get_weather")),
		newRequest("POST", `{"jsonrpc":"2.0","id":"l","method":"tools/list","params":{"cursor":null}}`, nil))
	if got := callUnknown(g, "get_wether", nil); !strings.Contains(got, "availableTools") {
		t.Errorf("the list asked with cursor null was not kept: %s", got)
	}
}

// No server reads a cursor before it looks the tool up: a tools/call
// whose params hold one is read like any other.
func TestCursorInACallsParamsChangesNothing(t *testing.T) {
	g := listedGuard(t, Options{}, "get_weather")
	notFound := answering(200, "application/json", errorReply("9", -32602, "Unknown tool: get_wether"))
	body := `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"get_wether","arguments":{},"cursor":null}}`
	if w := serve(g, notFound, newRequest("POST", body, nil)); !strings.Contains(w.Body.String(), "availableTools") {
		t.Errorf("not translated: %s", w.Body)
	}
}

// Two first pages of one caller at once: the one answered is kept, even
// when the other then fails.
func TestTwoListsOfOneCallerKeepTheAnsweredOne(t *testing.T) {
	g := mustGuard(t, Options{Tools: unsure{}})
	firstIn, release := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		serve(g, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			close(firstIn)
			<-release
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, listReply(`"a"`, "get_weather"))
		}), newRequest("POST", listCall(`"a"`, ""), nil))
	}()
	<-firstIn
	serve(g, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		close(release)
		wg.Wait() // the first is answered while this one waits
		w.WriteHeader(503)
	}), newRequest("POST", listCall(`"b"`, ""), nil))
	if got := callUnknown(g, "get_wether", nil); !strings.Contains(got, "availableTools") {
		t.Errorf("the answered list was not kept: %s", got)
	}
}

// Two paged lists of one caller, their pages interleaved, the second's
// first page answered late: a list is kept.
func TestTwoPagedListsOfOneCallerKeepAWholeOne(t *testing.T) {
	g := mustGuard(t, Options{Tools: unsure{}})
	srv := &listingServer{names: []string{"a", "b", "c"}, pageSize: 2}
	serve(g, srv, newRequest("POST", listCall(`"a1"`, ""), nil)) // A page 1
	bIn, release := make(chan struct{}), make(chan struct{})
	done := make(chan struct{})
	go func() { // B page 1, held by the server
		defer close(done)
		serve(g, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			close(bIn)
			<-release
			srv.ServeHTTP(w, r)
		}), newRequest("POST", listCall(`"b1"`, ""), nil))
	}()
	<-bIn
	serve(g, srv, newRequest("POST", listCall(`"a2"`, "2"), nil)) // A page 2
	close(release)
	<-done
	serve(g, srv, newRequest("POST", listCall(`"b2"`, "2"), nil)) // B page 2
	if got := callUnknown(g, "d", nil); !strings.Contains(got, "availableTools") {
		t.Errorf("neither whole list was kept: %s", got)
	}
}

// A call's answer that is an event stream of a stated length is held to
// be replaced; once it grows past the longest not-found answer it passes,
// and its events are still read for a changed list, as a client reads
// them.
func TestListChangedInALongHeldEventStreamDropsTheList(t *testing.T) {
	session := http.Header{"Mcp-Session-Id": {"s-1"}}
	stream := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n" +
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"" +
		strings.Repeat("x", 20000) + "\"}]}}\n\n"
	for _, size := range []int{100, 9000, len(stream)} {
		srv := &listingServer{names: []string{"get_weather"}}
		g := mustGuard(t, Options{Tools: unsure{}})
		serve(g, srv, newRequest("POST", listCall("1", ""), session))
		w := serve(g, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("Content-Length", strconv.Itoa(len(stream)))
			for i := 0; i < len(stream); i += size {
				io.WriteString(w, stream[i:min(i+size, len(stream))])
			}
		}), newRequest("POST", call("3", `"other"`), session))
		if w.Body.String() != stream {
			t.Fatalf("writes of %d: the answer was changed", size)
		}
		if got := serve(g, srv, newRequest("POST", call("9", `"get_wether"`), session)).Body.String(); strings.Contains(got, "availableTools") {
			t.Errorf("writes of %d: the list was kept: %s", size, got)
		}
	}
}

// A list that a list_changed on another stream of the session drops while
// a call is under way is not shown in the call's answer, whatever the
// call's stream carried before (a server request naming the tool made the
// call look the list up early and keep it).
func TestAListDroppedWhileACallIsUnderWayIsNotShown(t *testing.T) {
	for _, mention := range []bool{false, true} {
		session := http.Header{"Mcp-Session-Id": {"s-1"}}
		g := mustGuard(t, Options{Tools: unsure{}})
		seeList(t, g, session, "a")
		next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "text/event-stream")
			if mention {
				io.WriteString(w, `data: {"jsonrpc":"2.0","id":"s","method":"elicitation/create","params":{"message":"run x?"}}`+"\n\n")
			}
			get := newRequest("GET", "", session)
			g.Handler(answering(200, "text/event-stream", "data: "+string(listChangedStandIn)+"\n\n")).ServeHTTP(httptest.NewRecorder(), get)
			io.WriteString(w, `data: {"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: x"}}`+"\n\n")
		})
		w := httptest.NewRecorder()
		g.Handler(next).ServeHTTP(w, newRequest("POST", call("1", `"x"`), session))
		if !strings.Contains(w.Body.String(), "Unknown tool: x") || strings.Contains(w.Body.String(), "availableTools") {
			t.Errorf("mention %v: %q, want the answer without the dropped list", mention, w.Body)
		}
	}
}

// An answer that replaces the server's not-found answer shows the list its
// decision read: the caller's list kept between the server's answer and
// the handler's return (the tool just added) never makes the guard answer
// "unknown" with the name in availableTools.
func TestTheTranslationShowsTheListTheDecisionRead(t *testing.T) {
	for _, c := range []struct{ before, msg string }{
		{"", "tool 'x' not found: tool not found"},
		{"a", "Tool not found"},
	} {
		g := mustGuard(t, Options{Tools: unsure{}})
		if c.before != "" {
			seeList(t, g, nil, c.before)
		}
		next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, errorReply("1", -32602, c.msg))
			seeList(t, g, nil, "a", "x") // the caller's tools/list, answered meanwhile
		})
		w := serve(g, next, newRequest("POST", call("1", `"x"`), nil))
		if strings.Contains(w.Body.String(), `"x"]`) {
			t.Errorf("%q after a list of %q: %s", c.msg, c.before, w.Body)
		}
	}
}

// Over HTTP as over stdio: once the caller asks for its list anew, the one
// kept before is not shown, nor read for a name, whether or not the guard
// can read the new reply (here a tool with "name" twice).
func TestAListAskedAnewOverHTTPIsNeverAnsweredFromTheOneBefore(t *testing.T) {
	g := listedGuard(t, Options{}, "a")
	unread := `{"jsonrpc":"2.0","id":"l-2","result":{"tools":[{"name":"a","inputSchema":{"type":"object"}},{"name":"x","name":"b","inputSchema":{"type":"object"}}]}}`
	serve(g, answering(200, "application/json", unread), listRequest(nil))
	own := `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"Unknown tool: b"}]}}`
	if got := serve(g, answering(200, "application/json", own), newRequest("POST", call("3", `"b"`), nil)).Body.String(); got != own {
		t.Errorf("b got %s, want its own result", got)
	}
	notFound := errorReply("4", -32602, "Unknown tool: nope")
	if got := serve(g, answering(200, "application/json", notFound), newRequest("POST", call("4", `"nope"`), nil)).Body.String(); strings.Contains(got, "availableTools") {
		t.Errorf("an unknown tool's answer shows the list from before: %s", got)
	}
}

// The same over HTTP.
func TestAnUnreadReplyToALaterListRetiresTheListKeptOverHTTP(t *testing.T) {
	g := listedGuard(t, Options{}, "a")
	read := `{"jsonrpc":"2.0","id":"l-1","result":{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}}`
	unread := `{"jsonrpc":"2.0","id":"l-1","result":{"tools":[{"name":"a","inputSchema":{"type":"object"}},{"name":"x","name":"b","inputSchema":{"type":"object"}}]}}`
	inA, inB := make(chan struct{}), make(chan struct{})
	goA, goB := make(chan struct{}), make(chan struct{})
	held := func(in, release chan struct{}, body string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			close(in)
			<-release
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, body)
		})
	}
	var wg sync.WaitGroup
	wg.Add(2)
	doneA := make(chan struct{})
	go func() { defer wg.Done(); serve(g, held(inA, goA, read), listRequest(nil)); close(doneA) }()
	<-inA
	go func() { defer wg.Done(); serve(g, held(inB, goB, unread), listRequest(nil)) }()
	<-inB
	close(goA)
	<-doneA
	close(goB)
	wg.Wait()
	own := `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"Unknown tool: b"}]}}`
	if got := serve(g, answering(200, "application/json", own), newRequest("POST", call("3", `"b"`), nil)).Body.String(); got != own {
		t.Errorf("b got %s, want its own result", got)
	}
}

// A tools/list the guard does not read (a batch, which 2025-03-26 allows
// and the TypeScript SDK v1 server takes; one outside the strict subset;
// an id of 1.0) may get the client a list: the one kept before is not
// shown, nor read for a name.
func TestAListRequestTheGuardCannotReadRetiresTheListKept(t *testing.T) {
	for _, body := range []string{
		`[{"jsonrpc":"2.0","id":"l-2","method":"tools/list","params":{}}]`,
		`{"jsonrpc":"2.0","id":"l-2","method":"tools/list","params":{},"x":1}`,
		`{"jsonrpc":"2.0","id":1.0,"method":"tools/list","params":{}}`,
	} {
		g := listedGuard(t, Options{}, "a")
		serve(g, answering(200, "application/json", `[{"jsonrpc":"2.0","id":"l-2","result":{"tools":[{"name":"a","inputSchema":{"type":"object"}},{"name":"b","inputSchema":{"type":"object"}}]}}]`), newRequest("POST", body, nil))
		own := `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"Unknown tool: b"}]}}`
		if got := serve(g, answering(200, "application/json", own), newRequest("POST", call("3", `"b"`), nil)).Body.String(); got != own {
			t.Errorf("after %s: b got %s, want its own result", body, got)
		}
	}
}
