package toolguard

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolguard/toolguard/internal/mcpwire"
)

// listingServer answers a caller's tools/list with names (read at the
// time of each list, paged by pageSize when it is set) and every
// tools/call for a name it does not have with mcp-go's not-found answer;
// it keeps every request it got, byte for byte.
type listingServer struct {
	mu       sync.Mutex
	names    []string
	pageSize int
	sse      bool
	heard    []string // the bodies it got, in order
}

func (s *listingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.heard = append(s.heard, r.Method+" "+string(body))
	names := append([]string(nil), s.names...)
	s.mu.Unlock()
	m := readMessage(body)
	if !m.strict || m.method.kind != kString {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	id := string(m.id.raw(body))
	var reply string
	switch {
	case strEquals(body, m.method, "tools/list"):
		reply = s.page(id, body, names)
	case strEquals(body, m.method, "tools/call"):
		name := string(decoded(nil, body, m.name))
		for _, n := range names {
			if n == name {
				reply = `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"ok"}]}}`
			}
		}
		if reply == "" {
			reply = errorReply(id, -32602, "tool '"+name+"' not found: tool not found")
		}
	default:
		reply = `{"jsonrpc":"2.0","id":` + id + `,"result":{}}`
	}
	if s.sse {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message\ndata: "+reply+"\n\n")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, reply)
}

// page answers a tools/list: the page its cursor (the index of its first
// name) asks for.
func (s *listingServer) page(id string, body []byte, names []string) string {
	if s.pageSize == 0 {
		return listReply(id, names...)
	}
	start := 0
	if i := bytes.Index(body, []byte(`"cursor":"`)); i >= 0 {
		for _, c := range body[i+len(`"cursor":"`):] {
			if c == '"' {
				break
			}
			start = start*10 + int(c-'0')
		}
	}
	end := min(start+s.pageSize, len(names))
	r := listReply(id, names[start:end]...)
	if end < len(names) {
		r = strings.TrimSuffix(r, "}}") + `,"nextCursor":"` + itoa(end) + `"}}`
	}
	return r
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

func (s *listingServer) set(names ...string) {
	s.mu.Lock()
	s.names = names
	s.mu.Unlock()
}

// serve sends one request through g to s and returns the answer.
func serve(g *Guard, s http.Handler, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	g.Handler(s).ServeHTTP(w, r)
	return w
}

func listCall(id, cursor string) string {
	if cursor == "" {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list","params":{}}`
	}
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list","params":{"cursor":"` + cursor + `"}}`
}

// callUnknown sends the call with id 9 of name through g, with header h, to
// a server that answers "Unknown tool: name", and returns what the client
// gets.
func callUnknown(g *Guard, name string, h http.Header) string {
	notFound := answering(200, "application/json", errorReply("9", -32602, "Unknown tool: "+name))
	return serve(g, notFound, newRequest("POST", call("9", `"`+name+`"`), h)).Body.String()
}

// unknownAnswer is the guard's answer to the call with id 9 of name with
// the data given ("" for none).
func unknownAnswer(name, data string) string {
	if data != "" {
		data = `,"data":{` + data + `}`
	}
	return `{"jsonrpc":"2.0","id":9,"error":{"code":-32602,"message":"Unknown tool: ` + name + `"` + data + `}}`
}

// The server hears exactly the client: every request it gets is one the
// client sent, byte for byte and in order, and no other; the answers the
// client gets to its lists and known calls are the server's own.
func TestServerHearsOnlyTheClient(t *testing.T) {
	for _, sse := range []bool{false, true} {
		srv := &listingServer{names: []string{"get_weather", "search"}, sse: sse}
		g := mustGuard(t, Options{Tools: unsure{}})
		var sent []string
		send := func(body string) *httptest.ResponseRecorder {
			sent = append(sent, "POST "+body)
			return serve(g, srv, newRequest("POST", body, nil))
		}
		alone := httptest.NewRecorder()
		srv.ServeHTTP(alone, newRequest("POST", listCall("1", ""), nil))
		srv.heard = nil
		if w := send(listCall("1", "")); w.Body.String() != alone.Body.String() {
			t.Errorf("sse %v: the list %q, alone %q", sse, w.Body, alone.Body)
		}
		send(call("2", `"get_wether"`))
		send(call("3", `"get_weather"`))
		send(call("4", `"nope"`))
		send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		if strings.Join(srv.heard, "\n") != strings.Join(sent, "\n") {
			t.Errorf("sse %v: the server heard\n%s\nthe client sent\n%s", sse, strings.Join(srv.heard, "\n"), strings.Join(sent, "\n"))
		}
	}
}

// A tool deleted after the caller listed it, without a list_changed:
// the guard cannot tell the server's not-found answer to a call of it from
// the tool's own answer in the same words, and passes it as it is.
func TestDeletedToolStillListedKeepsTheServersAnswer(t *testing.T) {
	srv := &listingServer{names: []string{"echo", "victim"}}
	g := mustGuard(t, Options{Tools: unsure{}})
	serve(g, srv, newRequest("POST", listCall("1", ""), nil))
	srv.set("echo")
	alone := httptest.NewRecorder()
	srv.ServeHTTP(alone, newRequest("POST", call("9", `"victim"`), nil))
	if w := serve(g, srv, newRequest("POST", call("9", `"victim"`), nil)); w.Body.String() != alone.Body.String() {
		t.Errorf("answer %s, the server's %s", w.Body, alone.Body)
	}
}

// A tool added and then listed by the caller is in the next answer.
func TestToolAddedAndListedAppears(t *testing.T) {
	srv := &listingServer{names: []string{"echo"}}
	g := mustGuard(t, Options{Tools: unsure{}})
	serve(g, srv, newRequest("POST", listCall("1", ""), nil))
	srv.set("echo", "get_weather")
	serve(g, srv, newRequest("POST", listCall("2", ""), nil))
	w := serve(g, srv, newRequest("POST", call("9", `"get_wether"`), nil))
	if want := unknownAnswer("get_wether", `"availableTools":["echo","get_weather"],"suggestions":["get_weather"]`); w.Body.String() != want {
		t.Errorf("answer %s, want %s", w.Body, want)
	}
}

// A list read for one caller is never shown to another: other
// credentials, another session, no credentials, another protocol version,
// other declared capabilities.
func TestListIsNeverShownToAnotherCaller(t *testing.T) {
	lister := http.Header{"Authorization": {"Bearer a"}, "Mcp-Session-Id": {"s-1"}}
	for name, h := range map[string]http.Header{
		"other credentials": {"Authorization": {"Bearer b"}, "Mcp-Session-Id": {"s-1"}},
		"no credentials":    {"Mcp-Session-Id": {"s-1"}},
		"another session":   {"Authorization": {"Bearer a"}, "Mcp-Session-Id": {"s-2"}},
		"another version":   {"Authorization": {"Bearer a"}, "Mcp-Session-Id": {"s-1"}, "Mcp-Protocol-Version": {"2025-06-18"}},
	} {
		srv := &listingServer{names: []string{"get_weather"}}
		g := mustGuard(t, Options{Tools: unsure{}})
		serve(g, srv, newRequest("POST", listCall("1", ""), lister))
		if w := serve(g, srv, newRequest("POST", call("9", `"get_wether"`), lister)); !strings.Contains(w.Body.String(), "availableTools") {
			t.Fatalf("setup: the lister's own call got %s", w.Body)
		}
		if w := serve(g, srv, newRequest("POST", call("9", `"get_wether"`), h)); w.Body.String() != unknownAnswer("get_wether", "") {
			t.Errorf("%s: answer %s, want one without data", name, w.Body)
		}
	}
	// 2026-07-28: the caller is its _meta too.
	srv := &listingServer{names: []string{"delete_repository"}}
	g := mustGuard(t, Options{Tools: unsure{}})
	withElicitation := `{"jsonrpc":"2.0","id":"l","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}}`
	serve(g, srv, newRequest("POST", withElicitation, http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/list"}}))
	w := serve(g, srv, newRequest("POST", modernCall("9", `"delete_repositry"`), modernHeaders("delete_repositry")))
	if w.Body.String() != unknownAnswer("delete_repositry", "") {
		t.Errorf("a call declaring other capabilities got %s", w.Body)
	}
	seeList(t, g, modernHeaders("x"), "get_weather") // the call's own _meta
	w = serve(g, srv, newRequest("POST", modernCall("9", `"get_wether"`), modernHeaders("get_wether")))
	if !strings.Contains(w.Body.String(), `"availableTools":["get_weather"]`) {
		t.Errorf("a call declaring the lister's capabilities got %s", w.Body)
	}
}

// A list over several pages is kept whole once its last page came; a page
// asked with a cursor no page gave is not part of a list the guard can
// trust, and nothing is kept.
func TestPagedListIsKeptWhole(t *testing.T) {
	srv := &listingServer{names: []string{"a", "b", "c", "d", "e"}, pageSize: 2}
	g := mustGuard(t, Options{Tools: unsure{}})
	for i, cursor := range []string{"", "2", "4"} {
		serve(g, srv, newRequest("POST", listCall(itoa(i+1), cursor), nil))
	}
	w := serve(g, srv, newRequest("POST", call("9", `"nothing_like"`), nil))
	if want := unknownAnswer("nothing_like", `"availableTools":["a","b","c","d","e"]`); w.Body.String() != want {
		t.Errorf("answer %s, want %s", w.Body, want)
	}

	g = mustGuard(t, Options{Tools: unsure{}})
	serve(g, srv, newRequest("POST", listCall("1", ""), nil))
	serve(g, srv, newRequest("POST", listCall("2", "4"), nil)) // skips a page
	if w := serve(g, srv, newRequest("POST", call("9", `"nothing_like"`), nil)); w.Body.String() != unknownAnswer("nothing_like", "") {
		t.Errorf("a list with a page skipped: %s", w.Body)
	}
}

// The caller's list is dropped when the server announces a change in the
// session's event stream (GET) or in a call's own stream, when the
// session is deleted, and when the caller initializes again.
func TestListIsDroppedWhenItMayHaveChanged(t *testing.T) {
	session := http.Header{"Mcp-Session-Id": {"s-1"}}
	changed := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n"
	// An answer that is an event stream the guard cannot read may carry a
	// list_changed.
	encoded := func(r *http.Request) func(g *Guard) {
		return func(g *Guard) {
			serve(g, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.Header().Set("Content-Encoding", "gzip")
				io.WriteString(w, "\x1f\x8b")
			}), r)
		}
	}
	for name, drop := range map[string]func(g *Guard){
		"list_changed on the GET stream": func(g *Guard) {
			serve(g, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(200)
				io.WriteString(w, ": ping\n\n"+changed[:20])
				w.(http.Flusher).Flush()
				io.WriteString(w, changed[20:])
			}), newRequest("GET", "", session))
		},
		"list_changed before a call's answer": func(g *Guard) {
			serve(g, answering(200, "text/event-stream", changed+"event: message\ndata: "+`{"jsonrpc":"2.0","id":3,"result":{}}`+"\n\n"),
				newRequest("POST", call("3", `"other"`), session))
		},
		"an encoded event stream (unread) on the GET stream": encoded(newRequest("GET", "", session)),
		"an encoded event stream answering a call":           encoded(newRequest("POST", call("3", `"other"`), session)),
		"an encoded event stream answering a ping":           encoded(newRequest("POST", `{"jsonrpc":"2.0","id":5,"method":"ping"}`, session)),
		"an encoded event stream answering a tools/list":     encoded(newRequest("POST", listCall("2", ""), session)),
		"DELETE": func(g *Guard) {
			serve(g, answering(200, "", ""), newRequest("DELETE", "", session))
		},
		"initialize": func(g *Guard) {
			serve(g, answering(200, "application/json", `{"jsonrpc":"2.0","id":0,"result":{}}`),
				newRequest("POST", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`, session))
		},
		"an initialize outside the strict subset": func(g *Guard) {
			serve(g, answering(200, "application/json", `{"jsonrpc":"2.0","id":0,"result":{}}`),
				newRequest("POST", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"clientInfo":{"name":"c\ud83d"}}}`, session))
		},
	} {
		srv := &listingServer{names: []string{"get_weather"}}
		g := mustGuard(t, Options{Tools: unsure{}})
		serve(g, srv, newRequest("POST", listCall("1", ""), session))
		drop(g)
		if w := serve(g, srv, newRequest("POST", call("9", `"get_wether"`), session)); w.Body.String() != unknownAnswer("get_wether", "") {
			t.Errorf("after %s: %s, want no data", name, w.Body)
		}
	}
	// Another session's change drops nothing.
	srv := &listingServer{names: []string{"get_weather"}}
	g := mustGuard(t, Options{Tools: unsure{}})
	serve(g, srv, newRequest("POST", listCall("1", ""), session))
	serve(g, answering(200, "", ""), newRequest("DELETE", "", http.Header{"Mcp-Session-Id": {"s-2"}}))
	if w := serve(g, srv, newRequest("POST", call("9", `"get_wether"`), session)); !strings.Contains(w.Body.String(), "availableTools") {
		t.Errorf("another session's DELETE dropped the list: %s", w.Body)
	}
}

// A list is kept for ListTTL, or the ttlMs its server stated when
// shorter.
func TestListExpires(t *testing.T) {
	now := time.Unix(1000, 0)
	clock := func() time.Time { return now }
	for _, tc := range []struct {
		name  string
		reply string
		kept  time.Duration
	}{
		{"ListTTL", listReply(`"l"`, "get_weather"), time.Minute},
		{"ttlMs", strings.TrimSuffix(listReply(`"l"`, "get_weather"), "}}") + `,"ttlMs":5000}}`, 5 * time.Second},
	} {
		g := mustGuard(t, Options{Tools: unsure{}, ListTTL: time.Minute})
		g.seen.now = clock
		serve(g, answering(200, "application/json", tc.reply), newRequest("POST", listCall(`"l"`, ""), nil))
		notFound := answering(200, "application/json", errorReply("9", -32602, "Unknown tool: get_wether"))
		now = now.Add(tc.kept - time.Millisecond)
		if w := serve(g, notFound, newRequest("POST", call("9", `"get_wether"`), nil)); !strings.Contains(w.Body.String(), "availableTools") {
			t.Errorf("%s: dropped before it expired: %s", tc.name, w.Body)
		}
		now = now.Add(time.Millisecond)
		if w := serve(g, notFound, newRequest("POST", call("9", `"get_wether"`), nil)); w.Body.String() != unknownAnswer("get_wether", "") {
			t.Errorf("%s: kept after it expired: %s", tc.name, w.Body)
		}
	}
}

// A listed tool's own error is never translated, however it reads: the
// list is read for that check even where answers show none of it.
func TestListedToolsOwnErrorIsNeverTranslated(t *testing.T) {
	own := isErrorReply("9", "Error: Tool search not found: the index is missing")
	for _, opts := range []Options{{}, {HideToolList: true, HideSuggestions: true}} {
		opts.Tools = unsure{}
		g := mustGuard(t, opts)
		// Before any list, the text reads as the server's not-found answer.
		if w := serve(g, answering(200, "application/json", own), newRequest("POST", call("9", `"search"`), nil)); !strings.Contains(w.Body.String(), `"code":-32602`) {
			t.Errorf("%+v: before any list: %s", opts, w.Body)
		}
		serve(g, answering(200, "application/json", listReply(`"l"`, "search")), newRequest("POST", listCall(`"l"`, ""), nil))
		if w := serve(g, answering(200, "application/json", own), newRequest("POST", call("9", `"search"`), nil)); w.Body.String() != own {
			t.Errorf("%+v: a listed tool's own error was changed: %s", opts, w.Body)
		}
	}
}

// Only a whole answer to the caller's own list, with status 200, is kept:
// an error, an answer to another id, a cut answer or one with more after
// the reply keeps nothing.
func TestOnlyAWholeListAnswerIsKept(t *testing.T) {
	for name, next := range map[string]http.Handler{
		"an error reply":    answering(200, "application/json", errorReply(`"l"`, -32603, "boom")),
		"another id":        answering(200, "application/json", listReply(`"m"`, "get_weather")),
		"a 500":             answering(500, "application/json", listReply(`"l"`, "get_weather")),
		"a cut answer":      answering(200, "application/json", listReply(`"l"`, "get_weather")[:40]),
		"a plain-text body": answering(200, "text/plain", listReply(`"l"`, "get_weather")),
		"a JSON answer shorter than its Content-Length": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", itoa(len(listReply(`"l"`, "get_weather"))+10))
			io.WriteString(w, listReply(`"l"`, "get_weather"))
		}),
		"a reply clients read apart (a key in another case)": answering(200, "application/json",
			`{"jsonrpc":"2.0","id":"l","result":{"tools":[{"name":"get_weather","Name":"get_forecast"}]}}`),
		"an event stream with an unread message before the reply": answering(200, "text/event-stream", unreadEvent+
			"data: "+listReply(`"l"`, "get_weather")+"\n\n"),
		"a reply and more after it": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, listReply(`"l"`, "get_weather"))
			io.WriteString(w, ` {}`)
		}),
	} {
		g := mustGuard(t, Options{Tools: unsure{}})
		serve(g, next, newRequest("POST", listCall(`"l"`, ""), nil))
		if got := callUnknown(g, "get_wether", nil); got != unknownAnswer("get_wether", "") {
			t.Errorf("after %s: %s", name, got)
		}
	}
}

// A list is kept before the client can read its answer whole: a client
// that reads a streamed reply event, or a JSON answer of a stated length,
// and calls before the server's handler has returned gets the list in the
// answer to that call.
func TestListIsKeptBeforeTheClientCanReadIt(t *testing.T) {
	srv := &listingServer{names: []string{"get_weather"}}
	reply := listReply(`"l"`, "get_weather")
	for name, write := range map[string]func(w http.ResponseWriter){
		"an event stream": func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: message\ndata: "+reply+"\n\n")
			w.(http.Flusher).Flush()
		},
		"JSON of a stated length": func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", itoa(len(reply)))
			io.WriteString(w, reply)
		},
		"JSON of no stated length, decoded as it comes": func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, reply[:20])
			io.WriteString(w, reply[20:]+"\n")
		},
	} {
		g := mustGuard(t, Options{Tools: unsure{}})
		var next string
		serve(g, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			write(w)
			// The client has it all: its next call comes before the
			// handler returns.
			next = serve(g, srv, newRequest("POST", call("9", `"get_wether"`), nil)).Body.String()
		}), newRequest("POST", listCall(`"l"`, ""), nil))
		if want := unknownAnswer("get_wether", `"availableTools":["get_weather"],"suggestions":["get_weather"]`); next != want {
			t.Errorf("%s: the call made as the list arrived got %s, want %s", name, next, want)
		}
	}
}

// unreadEvent is an event whose message is outside the strict subset (a
// lone surrogate): which message it is cannot be told.
const unreadEvent = "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"data\":\"\\udc00\"}}\n\n"

// In an event stream answering a list, a list_changed notification drops
// the lists kept before it, not the one the stream gives after it; after
// an unread message the reply is not kept, and the list kept before is not
// shown (the caller asked for another).
func TestListChangedCountsWhereItIsInTheStream(t *testing.T) {
	changed := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n"
	unreadChanged := "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\",\"params\":{\"x\":\"\\udc00\"}}\n\n"
	event := "event: message\ndata: " + listReply(`"l"`, "get_weather") + "\n\n"
	for _, tc := range []struct {
		stream       string
		listedBefore bool
		shown        string // the availableTools shown after it, "" for none
	}{
		{changed + event, false, `["get_weather"]`},
		{event + changed, false, ""},
		{unreadEvent + event, true, ""}, // the list kept before is gone: the client may read a reply the guard did not
		{unreadEvent + changed + event, true, ""},
		{unreadEvent + event + changed, true, ""},
		{unreadChanged + event, true, ""}, // read as the list_changed it is, and the end of the reading
	} {
		g := mustGuard(t, Options{Tools: unsure{}})
		if tc.listedBefore {
			serve(g, answering(200, "application/json", listReply(`"k"`, "get_weather", "get_weather_old")), newRequest("POST", listCall(`"k"`, ""), nil))
		}
		serve(g, answering(200, "text/event-stream", tc.stream), newRequest("POST", listCall(`"l"`, ""), nil))
		notFound := answering(200, "application/json", errorReply("9", -32602, "Unknown tool: get_wether"))
		body := serve(g, notFound, newRequest("POST", call("9", `"get_wether"`), nil)).Body.String()
		if shown := strings.Contains(body, `"availableTools"`); shown != (tc.shown != "") || shown && !strings.Contains(body, `"availableTools":`+tc.shown) {
			t.Errorf("%q: the answer is %s, want the list %s", tc.stream, body, tc.shown)
		}
	}
}

// A streamed list is read the same however its writes are cut, down to a
// byte a write, whatever its lines end with (LF, CRLF or CR): events end
// at their blank lines and nowhere else, and the list is kept before the
// client can read the reply (a CR that is the blank line ends it).
func TestStreamedListIsKeptHoweverItsWritesAreCut(t *testing.T) {
	for _, eol := range []string{"\n", "\r\n", "\r"} {
		// An event of another type first (not a message, whatever its
		// data), the reply on two data lines, and a comment after it: a
		// CR that ends the reply's event is known to be no CRLF only at
		// the byte after it.
		reply := listReply(`"l"`, "get_weather")
		cut := strings.Index(reply, `"result":`)
		stream := ": ping" + eol + eol +
			"event: note" + eol + "data: " + listReply(`"l"`, "decoy") + eol + eol +
			"event: message" + eol + "data: " + reply[:cut] + eol + "data: " + reply[cut:] + eol + eol +
			": ping" + eol + eol
		for _, size := range []int{1, 2, 3, 7, len(stream)} {
			g := mustGuard(t, Options{Tools: unsure{}})
			next := ""
			// The client's next call, made as soon as it can read the reply.
			w := &clientWriter{ResponseRecorder: httptest.NewRecorder(), check: func(events [][]byte) {
				if next == "" && len(events) == 1 { // the note is no message
					next = serve(g, &listingServer{}, newRequest("POST", call("9", `"get_wether"`), nil)).Body.String()
				}
			}}
			g.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				for i := 0; i < len(stream); i += size {
					io.WriteString(w, stream[i:min(i+size, len(stream))])
				}
			})).ServeHTTP(w, newRequest("POST", listCall(`"l"`, ""), nil))
			if want := unknownAnswer("get_wether", `"availableTools":["get_weather"],"suggestions":["get_weather"]`); next != want {
				t.Errorf("%q in writes of %d: the call made as the reply could be read got %s, want %s", eol, size, next, want)
			}
		}
	}
}

// clientWriter is what the client gets: at each write that reaches it,
// check is told of the messages the client can dispatch by then.
type clientWriter struct {
	*httptest.ResponseRecorder
	check func(events [][]byte)
}

func (cw *clientWriter) Write(p []byte) (int, error) {
	n, err := cw.ResponseRecorder.Write(p)
	cw.check(mcpwire.EventMessages(cw.Body.Bytes()))
	return n, err
}

// On the session's own stream (GET), a list_changed drops the session's
// lists before the bytes that let the client dispatch it go on, whatever
// its lines end with (a CR that is the blank line ends it, as a client
// reads it), however the writes are cut, and after an event too long to
// be read.
func TestListChangedOnTheSessionStreamDropsTheListBeforeTheClientReadsIt(t *testing.T) {
	session := http.Header{"Mcp-Session-Id": {"s-1"}}
	kept := func(g *Guard) int {
		g.seen.mu.Lock()
		defer g.seen.mu.Unlock()
		return g.seen.shownLists()
	}
	for _, eol := range []string{"\n", "\r\n", "\r"} {
		long := "data: " + `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` +
			strings.Repeat("x", maxNotificationBytes) + `"}}` + eol + eol
		changed := "event: message" + eol + `data: {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` + eol + eol
		stream := ": ping" + eol + eol + long + changed + ": ping" + eol + eol
		for _, size := range []int{1, 2, 3, 7, 4096, len(stream)} {
			g := mustGuard(t, Options{Tools: unsure{}})
			serve(g, &listingServer{names: []string{"get_weather"}}, newRequest("POST", listCall("1", ""), session))
			if kept(g) != 1 {
				t.Fatal("the list was not kept")
			}
			dispatched := false
			w := &clientWriter{ResponseRecorder: httptest.NewRecorder(), check: func(events [][]byte) {
				for _, ev := range events {
					if isListChanged(ev) && !dispatched {
						dispatched = true
						if kept(g) != 0 {
							t.Errorf("%q in writes of %d: the client can read list_changed and the list is kept", eol, size)
						}
					}
				}
			}}
			g.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				for i := 0; i < len(stream); i += size {
					io.WriteString(w, stream[i:min(i+size, len(stream))])
				}
			})).ServeHTTP(w, newRequest("GET", "", session))
			if !dispatched || w.Body.String() != stream {
				t.Errorf("%q in writes of %d: dispatched %v, the client got %q", eol, size, dispatched, w.Body)
			}
		}
	}
}

// An event too long to read (over 4 KiB on the session's stream, over the
// longest not-found answer in a call's stream) passes unread; when its
// bytes could spell list_changed (here cut across two writes inside the
// word), the session's lists are dropped, as a client reads it whole. A
// long event that could not spell it keeps them.
func TestListChangedTooLongToReadDropsTheList(t *testing.T) {
	session := http.Header{"Mcp-Session-Id": {"s-1"}}
	pad := strings.Repeat("t", 9000)
	for _, tc := range []struct {
		event string
		drop  bool
	}{
		{`{"jsonrpc":"2.0","params":{"_meta":{"t":"` + pad + `"}},"method":"notifications/tools/list_changed"}`, true},
		{`{"jsonrpc":"2.0","params":{"_meta":{"t":"` + pad + `"}},"method":"notifications/tools/list\u005fchanged"}`, true},
		{`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + pad + `\u003c\u0026"}}`, false},
	} {
		stream := "event: message\ndata: " + tc.event + "\n\n"
		cut := len(stream) - 14 // inside the last word
		for name, r := range map[string]*http.Request{
			"the session's stream": newRequest("GET", "", session),
			"a call's stream":      newRequest("POST", call("3", `"other"`), session),
		} {
			srv := &listingServer{names: []string{"get_weather"}}
			g := mustGuard(t, Options{Tools: unsure{}})
			serve(g, srv, newRequest("POST", listCall("1", ""), session))
			w := serve(g, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, stream[:cut])
				io.WriteString(w, stream[cut:]+"event: message\ndata: "+`{"jsonrpc":"2.0","id":3,"result":{}}`+"\n\n")
			}), r)
			if !strings.HasPrefix(w.Body.String(), stream) {
				t.Fatalf("%s: the event was changed", name)
			}
			got := serve(g, srv, newRequest("POST", call("9", `"get_wether"`), session)).Body.String()
			if kept := strings.Contains(got, "availableTools"); kept == tc.drop {
				t.Errorf("%s, …%s: list kept %v, want %v", name, tc.event[len(tc.event)-40:], kept, !tc.drop)
			}
		}
	}
}

// A list is kept in strings of its own: the buffer its answer was read in
// goes to the next answer, which does not change the list.
func TestKeptListOutlivesTheBufferItWasReadIn(t *testing.T) {
	g := mustGuard(t, Options{Tools: unsure{}})
	alice := http.Header{"Authorization": {"Bearer alice"}}
	bob := http.Header{"Authorization": {"Bearer bob"}}
	serve(g, answering(200, "application/json", listReply(`"l"`, "aaaa", "bbbb")), newRequest("POST", listCall(`"l"`, ""), alice))
	for range 10 {
		serve(g, answering(200, "application/json", listReply(`"l"`, "xxxx", "yyyy")), newRequest("POST", listCall(`"l"`, ""), bob))
	}
	notFound := answering(200, "application/json", errorReply("9", -32602, "Unknown tool: cccc"))
	if w, want := serve(g, notFound, newRequest("POST", call("9", `"cccc"`), alice)), unknownAnswer("cccc", `"availableTools":["aaaa","bbbb"]`); w.Body.String() != want {
		t.Errorf("alice got %s, want %s", w.Body, want)
	}
}

// The event reader reads an event where it lies when it ends in the write
// it came in, and keeps only what has not ended: an event begun, or the
// start of a byte order mark.
func TestEventReaderKeepsOnlyWhatHasNotEnded(t *testing.T) {
	var e eventReader
	var got []string
	read := func(_ int, data []byte) {
		if data != nil {
			got = append(got, string(data))
		}
	}
	steps := []struct{ write, kept string }{
		{"\xef\xbb", "\xef\xbb"},
		{"\xbfdata: a\n\ndata: b\n\n", ""},
		{"data: c\n\ndata: d", "data: d"},
		{"\n", "data: d\n"},
		{"\ndata: e\n\n", ""},
	}
	for i, s := range steps {
		e.write([]byte(s.write), 1<<10, read)
		if string(e.buf) != s.kept {
			t.Errorf("after write %d the reader keeps %q, want %q", i, e.buf, s.kept)
		}
	}
	if want := []string{"a", "b", "c", "d", "e"}; !slices.Equal(got, want) {
		t.Errorf("read %q, want %q", got, want)
	}
	var whole eventReader
	whole.write([]byte("data: a\n\ndata: b\n\n"), 1<<10, read)
	if cap(whole.buf) != 0 {
		t.Errorf("events that ended in their write were copied (%d bytes of room)", cap(whole.buf))
	}
}

// A list whose session ends while the server answers it (the session is
// deleted or initialized again) is not kept: it answers a request of the
// session before. A list_changed meanwhile, escaped or not, drops the
// pages read so far, so a list is never joined across it.
func TestListAskedBeforeItsSessionEndsIsNotKept(t *testing.T) {
	session := http.Header{"Mcp-Session-Id": {"s-1"}}
	for name, drop := range map[string]func(g *Guard){
		"DELETE": func(g *Guard) {
			serve(g, answering(200, "application/json", ""), newRequest("DELETE", "", session))
		},
		"initialize": func(g *Guard) {
			serve(g, answering(200, "application/json", `{"jsonrpc":"2.0","id":0,"result":{}}`),
				newRequest("POST", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`, session))
		},
		"an initialize outside the strict subset": func(g *Guard) {
			serve(g, answering(200, "application/json", `{"jsonrpc":"2.0","id":0,"result":{}}`),
				newRequest("POST", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"clientInfo":{"name":"c\ud83d"}}}`, session))
		},
	} {
		g := mustGuard(t, Options{Tools: unsure{}})
		serve(g, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			drop(g) // while the server makes its answer
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, listReply(`"l"`, "get_weather"))
		}), newRequest("POST", listCall(`"l"`, ""), session))
		if got := callUnknown(g, "get_wether", session); strings.Contains(got, "availableTools") {
			t.Errorf("%s during the list: the list was kept (%s)", name, got)
		}
	}
	for _, method := range []string{"notifications/tools/list_changed", `notifications\/tools\/list_changed`, `notifications/tools/list\u005fchanged`} {
		g := mustGuard(t, Options{Tools: unsure{}})
		srv := &listingServer{names: []string{"a", "b", "c"}, pageSize: 2}
		serve(g, srv, newRequest("POST", listCall(`"l"`, ""), session))
		g.Handler(answering(200, "text/event-stream", "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\""+method+"\"}\n\n")).
			ServeHTTP(httptest.NewRecorder(), newRequest("GET", "", session))
		serve(g, srv, newRequest("POST", listCall(`"m"`, "2"), session))
		if got := callUnknown(g, "d", session); strings.Contains(got, "availableTools") {
			t.Errorf("%s between pages: a list was kept (%s)", method, got)
		}
	}
}

// A tools/list whose cursor is spelled two ways is read one way by the
// TypeScript SDKs and another by encoding/json: its answer is kept as no
// page.
func TestListWithAnAmbiguousCursorIsNotKept(t *testing.T) {
	g := mustGuard(t, Options{Tools: unsure{}})
	serve(g, answering(200, "application/json", listReply(`"l"`, "get_weather")),
		newRequest("POST", `{"jsonrpc":"2.0","id":"l","method":"tools/list","params":{"Cursor":"x"}}`, nil))
	if got := callUnknown(g, "get_wether", nil); strings.Contains(got, "availableTools") {
		t.Errorf("the list was kept: %s", got)
	}
}

// Over HTTP too: after a list_changed the list is not shown, and a call of
// a name it showed keeps the server's answer, however it reads.
func TestListGoneStillGuardsTheNamesItShowedOverHTTP(t *testing.T) {
	session := http.Header{"Mcp-Session-Id": {"s-1"}}
	g := mustGuard(t, Options{Tools: unsure{}})
	serve(g, &listingServer{names: []string{"get_weather"}}, newRequest("POST", listCall("1", ""), session))
	serve(g, answering(200, "text/event-stream", "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n"), newRequest("GET", "", session))
	own := isErrorReply("9", "Unknown tool: get_weather")
	if got := serve(g, answering(200, "application/json", own), newRequest("POST", call("9", `"get_weather"`), session)).Body.String(); got != own {
		t.Errorf("the tool's own answer was replaced: %s", got)
	}
	if got := serve(g, answering(200, "application/json", isErrorReply("9", "Unknown tool: nope")), newRequest("POST", call("9", `"nope"`), session)).Body.String(); got != unknownAnswer("nope", "") {
		t.Errorf("an unlisted name: %s", got)
	}
}

// Without a session, one caller's initialize (or a body that may be read
// as one) says nothing of what another caller was shown: the other's list
// is still shown, and a tool it showed keeps its own not-found words.
func TestAnotherCallersInitializeLeavesTheList(t *testing.T) {
	alice := http.Header{"Authorization": {"Bearer alice"}}
	bob := http.Header{"Authorization": {"Bearer bob"}}
	for name, body := range map[string]string{
		"initialize":                     `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`,
		"a body that may be read as one": `["\u0065"]`,
		"one outside the strict subset":  `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"clientInfo":{"name":"c\ud83d"}}}`,
	} {
		g := mustGuard(t, Options{Tools: unsure{}})
		serve(g, &listingServer{names: []string{"fail", "get_weather"}}, newRequest("POST", listCall("1", ""), alice))
		serve(g, answering(200, "application/json", `{"jsonrpc":"2.0","id":0,"result":{}}`), newRequest("POST", body, bob))
		own := isErrorReply("9", "Unknown tool: fail")
		if got := serve(g, answering(200, "application/json", own), newRequest("POST", call("9", `"fail"`), alice)).Body.String(); got != own {
			t.Errorf("after another caller's %s, a listed tool's own answer was replaced: %s", name, got)
		}
		if got := callUnknown(g, "get_wether", alice); !strings.Contains(got, `"availableTools":["fail","get_weather"]`) {
			t.Errorf("after another caller's %s, the list is not shown: %s", name, got)
		}
	}
}

// Without a session, the caller's own initialize (which carries no
// Mcp-Protocol-Version, as the requests after it do) ends the showing of
// its list, not the names it showed: a tool it showed keeps its own
// not-found words, and a name the old list lacks (a tool added since) is
// no longer shown absent.
func TestOwnInitializeWithoutASessionKeepsTheNamesGuarding(t *testing.T) {
	for _, version := range []string{"2025-06-18", "2025-11-25", ""} {
		after := http.Header{"Authorization": {"Bearer alice"}, "Mcp-Protocol-Version": {version}}
		if version == "" {
			after["Mcp-Protocol-Version"] = nil
		}
		g := mustGuard(t, Options{Tools: unsure{}})
		serve(g, &listingServer{names: []string{"fail"}}, newRequest("POST", listCall("1", ""), after))
		serve(g, answering(200, "application/json", `{"jsonrpc":"2.0","id":0,"result":{}}`),
			newRequest("POST", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`, http.Header{"Authorization": {"Bearer alice"}}))
		own := isErrorReply("9", "Unknown tool: fail")
		if got := serve(g, answering(200, "application/json", own), newRequest("POST", call("9", `"fail"`), after)).Body.String(); got != own {
			t.Errorf("version %q: a listed tool's own answer was replaced: %s", version, got)
		}
		fresh := errorReply("9", -32603, "Method fresh not found") // read only against a list that lacks it
		if got := serve(g, answering(200, "application/json", fresh), newRequest("POST", call("9", `"fresh"`), after)).Body.String(); got != fresh {
			t.Errorf("version %q: after its initialize, a tool added since was answered against the old list: %s", version, got)
		}
		if got := callUnknown(g, "nope", after); got != unknownAnswer("nope", "") {
			t.Errorf("version %q: after its initialize, the caller's list is still shown: %s", version, got)
		}
	}
}

// What a request's _meta says of the request itself (a trace context, as
// the TypeScript SDK v2 sends it, changes with every request) does not make
// another caller: the call finds the list its caller was given, and a
// tool the list showed keeps its own not-found words.
func TestCallsOwnTraceContextFindsTheCallersList(t *testing.T) {
	withMeta := func(body, meta string) string {
		return strings.Replace(body, `"params":{`, `"params":{"_meta":`+meta+`,`, 1)
	}
	g := mustGuard(t, Options{Tools: unsure{}})
	serve(g, &listingServer{names: []string{"fail"}},
		newRequest("POST", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01","progressToken":1}}}`, nil))
	own := isErrorReply("9", "Unknown tool: fail")
	for _, meta := range []string{
		`{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-b7ad6b7169203331-01","tracestate":"congo=t61rcWkgMzE"}`,
		`{"baggage":"userId=alice","io.modelcontextprotocol\/related-task":{"taskId":"t-1"}}`,
		`{"io.modelcontextprotocol/logLevel":"debug"}`,
		`{}`,
	} {
		if got := serve(g, answering(200, "application/json", own), newRequest("POST", withMeta(call("9", `"fail"`), meta), nil)).Body.String(); got != own {
			t.Errorf("a call with _meta %s: the listed tool's own answer was replaced: %s", meta, got)
		}
		notFound := answering(200, "application/json", errorReply("9", -32602, "Unknown tool: nope"))
		if got := serve(g, notFound, newRequest("POST", withMeta(call("9", `"nope"`), meta), nil)).Body.String(); !strings.Contains(got, `"availableTools":["fail"]`) {
			t.Errorf("a call with _meta %s does not find its caller's list: %s", meta, got)
		}
	}
}

// A tools/list answer is read by the header net/http sends, the one set
// when the handler wrote its status (or flushed): what it sets later does
// not make a text/plain answer a list the guard keeps, nor a JSON answer
// one it does not.
func TestAListIsReadByTheHeaderAsSent(t *testing.T) {
	for _, c := range []struct {
		at, later string
		flush     bool
		kept      bool
	}{
		{"text/plain", "application/json", false, false},
		{"text/plain", "application/json", true, false},
		{"application/json", "text/plain", false, true},
	} {
		g := mustGuard(t, Options{Tools: unsure{}})
		serve(g, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", c.at)
			if c.flush {
				w.(http.Flusher).Flush()
			} else {
				w.WriteHeader(200)
			}
			w.Header().Set("Content-Type", c.later)
			io.WriteString(w, listReply(`"l-1"`, "secret_tool"))
		}), listRequest(nil))
		w := serve(g, answering(200, "application/json", errorReply("7", -32602, "Unknown tool: nope")), newRequest("POST", call("7", `"nope"`), nil))
		if kept := strings.Contains(w.Body.String(), "secret_tool"); kept != c.kept {
			t.Errorf("%s, then %s (flush %v): list kept %v, want %v", c.at, c.later, c.flush, kept, c.kept)
		}
	}
}
