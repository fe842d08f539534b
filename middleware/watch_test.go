package toolguard

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolguard/toolguard/internal/fixture"
	"github.com/toolguard/toolguard/internal/mcpwire"
)

// unsure is a tool set that leaves every call to the server. Its names
// are what the server lists: guarded and listedGuard have the caller list
// them first, as real clients do. Its List is never asked: after the
// server the list is the one the caller was given.
type unsure struct {
	names []string
}

func (u unsure) Lookup(*http.Request, string) Presence { return Unsure }
func (u unsure) List(*http.Request) ([]string, error) {
	panic("toolguard: the list was asked of a tool set that leaves every call to the server")
}

// listReply is the server's answer to the tools/list with the id.
func listReply(id string, names ...string) string {
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0","id":` + id + `,"result":{"tools":[`)
	for i, n := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"name":"` + n + `","inputSchema":{"type":"object"}}`)
	}
	b.WriteString("]}}")
	return b.String()
}

// listRequest is the caller's own tools/list with the headers of its
// call h (Mcp-Method tools/list, no Mcp-Name), carrying the _meta of
// modernCall when h is a 2026-07-28 call's.
func listRequest(h http.Header) *http.Request {
	lh := http.Header{}
	for k, vs := range h {
		lh[k] = vs
	}
	body := `{"jsonrpc":"2.0","id":"l-1","method":"tools/list","params":{}}`
	if h.Get("Mcp-Protocol-Version") == "2026-07-28" {
		lh["Mcp-Method"] = []string{"tools/list"}
		body = `{"jsonrpc":"2.0","id":"l-1","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	}
	delete(lh, "Mcp-Name")
	return newRequest("POST", body, lh)
}

// seeList has the caller whose calls carry the headers h list its tools
// through g, from a server listing names.
func seeList(t testing.TB, g *Guard, h http.Header, names ...string) {
	t.Helper()
	w := httptest.NewRecorder()
	g.Handler(answering(200, "application/json", listReply(`"l-1"`, names...))).ServeHTTP(w, listRequest(h))
	if w.Code != 200 {
		t.Fatalf("tools/list: %d %s", w.Code, w.Body)
	}
}

// listedGuard is a guard whose caller (default headers) has listed names.
func listedGuard(t testing.TB, opts Options, names ...string) *Guard {
	t.Helper()
	if opts.Tools == nil {
		opts.Tools = unsure{}
	}
	g := mustGuard(t, opts)
	seeList(t, g, nil, names...)
	return g
}

// answering is a server handler that writes a fixed answer.
func answering(status int, ct, body string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if ct != "" {
			w.Header().Set("Content-Type", ct)
		}
		w.Header().Set("X-Server", "yes")
		w.WriteHeader(status)
		io.WriteString(w, body)
	})
}

func guarded(t *testing.T, tools ToolSet, next http.Handler, body string, h http.Header) *httptest.ResponseRecorder {
	t.Helper()
	g := mustGuard(t, Options{Tools: tools})
	if u, ok := tools.(unsure); ok && u.names != nil {
		seeList(t, g, h, u.names...)
	}
	w := httptest.NewRecorder()
	g.Handler(next).ServeHTTP(w, newRequest("POST", body, h))
	return w
}

// The server's own not-found answer is replaced, with the server's status
// and headers; the list is the one the server gave the caller.
func TestServersNotFoundAnswerIsTranslated(t *testing.T) {
	for _, status := range []int{200, 400} {
		next := answering(status, "application/json", errorReply("5", -32602, "tool 'get_wether' not found: tool not found"))
		w := guarded(t, unsure{names: []string{"get_weather", "b"}}, next, call("5", `"get_wether"`), nil)
		want := `{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"Unknown tool: get_wether","data":{"availableTools":["b","get_weather"],"suggestions":["get_weather"]}}}`
		if w.Code != status || w.Body.String() != want || w.Header().Get("Content-Type") != "application/json" || w.Header().Get("X-Server") != "yes" {
			t.Errorf("status %d: got %d %v %s", status, w.Code, w.Header(), w.Body)
		}
	}
}

// Every other answer reaches the caller byte for byte, with its status,
// Content-Type and Content-Length.
func TestPassingAnswersAreUntouched(t *testing.T) {
	actionable := isErrorReply("5", `Tool "delete_repository" requires client support for form elicitation.`)
	for _, tc := range []struct {
		name, ct, body string
		status         int
	}{
		{"result", "application/json", `{"jsonrpc":"2.0","id":5,"result":{"content":[]}}`, 200},
		{"actionable isError", "application/json", actionable, 200},
		{"other error", "application/json", errorReply("5", -32602, "invalid arguments"), 200},
		{"not-found for another id", "application/json", errorReply("6", -32602, "Unknown tool: nope"), 200},
		{"refusal", "text/plain; charset=utf-8", "Forbidden: invalid Host header\n", 403},
		{"no content type", "", "", 202},
		{"big result", "application/json", `{"jsonrpc":"2.0","id":5,"result":{"x":"` + strings.Repeat("y", 1<<20) + `"}}`, 200},
		{"stream", "text/event-stream", "event: message\ndata: " + actionable + "\n\n", 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			alone := httptest.NewRecorder()
			answering(tc.status, tc.ct, tc.body).ServeHTTP(alone, newRequest("POST", call("5", `"nope"`), nil))
			w := guarded(t, unsure{names: []string{"a"}}, answering(tc.status, tc.ct, tc.body), call("5", `"nope"`), nil)
			if w.Code != alone.Code || !bytes.Equal(w.Body.Bytes(), alone.Body.Bytes()) {
				t.Errorf("got %d %.200q, alone %d %.200q", w.Code, w.Body, alone.Code, alone.Body)
			}
			if g, a := w.Header().Get("Content-Type"), alone.Header().Get("Content-Type"); g != a {
				t.Errorf("Content-Type %q, alone %q", g, a)
			}
		})
	}
}

// In an event stream, the events before the answer go out as they are
// written (and flushed); only the not-found event is replaced, keeping its
// id for resumption.
func TestEventStreamFlowsAndOnlyTheAnswerIsReplaced(t *testing.T) {
	g := listedGuard(t, Options{}, "a")
	w := httptest.NewRecorder()
	progress := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n"
	var seenBeforeAnswer string
	next := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/event-stream")
		rw.WriteHeader(200)
		io.WriteString(rw, progress)
		rw.(http.Flusher).Flush()
		seenBeforeAnswer = w.Body.String()
		io.WriteString(rw, "id: ev-2\r\nevent: message\r\ndata: "+isErrorReply("5", "MCP error -32602: Tool nope not found")+"\r\n\r\n")
	})
	g.Handler(next).ServeHTTP(w, newRequest("POST", call("5", `"nope"`), nil))
	if seenBeforeAnswer != progress || !w.Flushed {
		t.Errorf("before the answer the client had %q (flushed %v)", seenBeforeAnswer, w.Flushed)
	}
	want := progress + "id: ev-2\nevent: message\ndata: " +
		`{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"Unknown tool: nope","data":{"availableTools":["a"]}}}` + "\n\n"
	if w.Body.String() != want {
		t.Errorf("stream %q\nwant %q", w.Body, want)
	}
}

// A call before the caller listed anything: the answer goes out without
// data, ListErr says why, and the Logger warns.
func TestAnswerWithoutListWhenNoneWasSeen(t *testing.T) {
	var out bytes.Buffer
	var got *Rejection
	g := mustGuard(t, Options{
		Tools:    unsure{},
		Logger:   slog.New(slog.NewTextHandler(&out, nil)),
		OnReject: func(_ *http.Request, rej *Rejection) { got = rej },
	})
	w := httptest.NewRecorder()
	g.Handler(answering(200, "application/json", errorReply("1", -32602, "Unknown tool: nope"))).ServeHTTP(w, newRequest("POST", call("1", `"nope"`), nil))
	if want := `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: nope"}}`; w.Body.String() != want {
		t.Errorf("answer %s, want %s", w.Body, want)
	}
	if got == nil || !got.Translated || !errors.Is(got.ListErr, ErrNoList) {
		t.Errorf("OnReject got %+v", got)
	}
	if !strings.Contains(out.String(), "level=WARN") {
		t.Errorf("log %q", out.String())
	}
}

// failingList is a tool set that knows no name (Absent, so the guard
// may answer before the server) but whose list fails with err, or panics
// with p.
type failingList struct {
	err error
	p   any
}

func (failingList) Lookup(*http.Request, string) Presence { return Absent }
func (f failingList) List(*http.Request) ([]string, error) {
	if f.p != nil {
		panic(f.p)
	}
	return nil, f.err
}

// Before the server, a tool set's list that fails leaves the call to the
// server, whose not-found answer is translated; one that panics panics
// on up, as the tool set's Lookup does, with nothing written.
func TestFailingListBeforeTheServerLeavesTheCallToIt(t *testing.T) {
	server := answering(200, "application/json", errorReply("1", -32602, "Unknown tool: nope"))
	var passed []Pass
	g := mustGuard(t, Options{Tools: failingList{err: errors.New("down")}, OnPass: func(_ *http.Request, p Pass) { passed = append(passed, p) }})
	w := httptest.NewRecorder()
	g.Handler(server).ServeHTTP(w, newRequest("POST", call("1", `"nope"`), nil))
	if len(passed) != 1 || passed[0].Reason != ReasonListFailed || passed[0].Err == nil {
		t.Errorf("passed %+v", passed)
	}
	if want := `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: nope"}}`; w.Body.String() != want {
		t.Errorf("answer %s", w.Body)
	}
	panicking := mustGuard(t, Options{Tools: failingList{p: "boom"}})
	w = httptest.NewRecorder()
	defer func() {
		if p := recover(); p != "boom" || w.Body.Len() != 0 {
			t.Errorf("recovered %v after writing %q, want the tool set's panic and nothing written", p, w.Body)
		}
	}()
	panicking.Handler(server).ServeHTTP(w, newRequest("POST", call("1", `"nope"`), nil))
}

// A call the guard cannot read with certainty is never translated: the
// server may have read another name.
func TestAmbiguousCallIsNeverTranslated(t *testing.T) {
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope","name":"other"}}`
	answer := errorReply("1", -32602, "Unknown tool: nope")
	w := guarded(t, unsure{names: []string{"a"}}, answering(200, "application/json", answer), body, nil)
	if w.Body.String() != answer {
		t.Errorf("answer %s", w.Body)
	}
}

// Check and Watch give framework adapters the same answer as Handler.
func TestCheckAndWatchTranslateAsHandler(t *testing.T) {
	g := listedGuard(t, Options{}, "a")
	next := answering(200, "application/json", errorReply("1", -32602, "Unknown tool: nope"))
	viaHandler := httptest.NewRecorder()
	g.Handler(next).ServeHTTP(viaHandler, newRequest("POST", call("1", `"nope"`), nil))

	r, rej := g.Check(newRequest("POST", call("1", `"nope"`), nil))
	if rej != nil {
		t.Fatal("rejected before the server")
	}
	viaCheck := httptest.NewRecorder()
	w, finish := g.Watch(viaCheck, r)
	next.ServeHTTP(w, r)
	finish()
	if viaCheck.Code != viaHandler.Code || viaCheck.Body.String() != viaHandler.Body.String() || !strings.Contains(viaCheck.Body.String(), "availableTools") {
		t.Errorf("Check+Watch %d %s, Handler %d %s", viaCheck.Code, viaCheck.Body, viaHandler.Code, viaHandler.Body)
	}
	// Any other request's answer is watched for a changed list, but a
	// DELETE's and a skipped request's, served with the writer itself.
	plain := httptest.NewRecorder()
	if w, _ := g.Watch(plain, newRequest("GET", "", nil)); w == plain {
		t.Error("Watch did not watch a GET stream")
	}
	if r, _ := g.Check(newRequest("DELETE", "", nil)); r == nil {
		t.Fatal("a DELETE was rejected")
	} else if w, _ := g.Watch(plain, r); w != plain {
		t.Error("Watch wrapped a DELETE")
	}
	asked := 0
	skip := mustGuard(t, Options{Skip: func(*http.Request) bool { asked++; return asked == 1 }})
	if r, _ := skip.Check(newRequest("POST", knownCall, nil)); r == nil {
		t.Fatal("a skipped request was rejected")
	} else if w, _ := skip.Watch(plain, r); w != plain {
		t.Error("Watch wrapped a skipped request")
	}
	if asked != 1 {
		t.Errorf("Skip was asked %d times for one request (Watch must not ask again: the body is read by then)", asked)
	}
}

// Check and Watch give next the writer Handler gives it: the caller's own
// for a DELETE, an initialize and a skipped POST, a watching one for any
// other request (a GET stream, which Skip is not asked about, included).
func TestWatchGivesTheWriterHandlerGives(t *testing.T) {
	skipAll := func(*http.Request) bool { return true }
	initialize := strings.TrimSuffix(initializeLine, "\n")
	for _, c := range []struct {
		name, method, body string
		skip               func(*http.Request) bool
		own                bool // next gets the caller's writer
	}{
		{"initialize", "POST", initialize, nil, true},
		{"DELETE", "DELETE", "", nil, true},
		{"skipped POST", "POST", call("1", `"nope"`), skipAll, true},
		{"GET, Skip not asked", "GET", "", skipAll, false},
		{"ping", "POST", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, nil, false},
		{"tools/list", "POST", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, nil, false},
		{"call the server decides", "POST", call("1", `"nope"`), nil, false},
		{"not strict", "POST", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, nil, false},
	} {
		g := mustGuard(t, Options{Tools: unsure{}, Skip: c.skip})
		var viaHandler, viaWatch bool
		rec := httptest.NewRecorder()
		g.Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { viaHandler = w == rec })).
			ServeHTTP(rec, newRequest(c.method, c.body, nil))
		r, rej := g.Check(newRequest(c.method, c.body, nil))
		if rej != nil {
			t.Fatalf("%s: rejected", c.name)
		}
		w, finish := g.Watch(rec, r)
		viaWatch = w == rec
		finish()
		if viaHandler != c.own || viaWatch != c.own {
			t.Errorf("%s: the caller's own writer via Handler %v, via Check and Watch %v; want %v", c.name, viaHandler, viaWatch, c.own)
		}
	}
}

// Any answer of a session may carry a list_changed: mcp-go sends a
// notification it queued on the session's next answer, whatever the
// request (a known call, a ping, resources/list, a body the guard does not
// read). Each such answer is watched, passes byte for byte as it is
// written (the writer beneath sees each write at once), and drops the
// session's lists; a JSON answer is not read.
func TestAnyAnswerOfTheSessionCanDropTheList(t *testing.T) {
	session := http.Header{"Mcp-Session-Id": {"s-1"}}
	changed := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n"
	for name, r := range map[string]func() *http.Request{
		"a known call": func() *http.Request { return newRequest("POST", knownCall, session) },
		"a ping":       func() *http.Request { return newRequest("POST", `{"jsonrpc":"2.0","id":5,"method":"ping"}`, session) },
		"a body the guard does not read": func() *http.Request {
			r := newRequest("POST", `{"jsonrpc":"2.0","id":5,"method":"ping"}`, session)
			r.Header.Set("Content-Type", "text/plain")
			return r
		},
	} {
		for _, sse := range []bool{true, false} {
			srv := &listingServer{names: []string{"get_weather"}}
			g := mustGuard(t, Options{Tools: StaticTools("get_weather")})
			serve(g, srv, newRequest("POST", listCall("1", ""), session))
			ct, body := "application/json", `{"jsonrpc":"2.0","id":5,"result":{"method":"notifications/tools/list_changed"}}`
			if sse {
				ct, body = "text/event-stream", changed+"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}\n\n"
			}
			w := &clientWriter{ResponseRecorder: httptest.NewRecorder(), check: func([][]byte) {}}
			g.Handler(http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
				rw.Header().Set("Content-Type", ct)
				io.WriteString(rw, body[:10])
				if w.Body.Len() != 10 {
					t.Errorf("%s: the answer waited", name)
				}
				io.WriteString(rw, body[10:])
			})).ServeHTTP(w, r())
			if w.Body.String() != body {
				t.Errorf("%s: the client got %q", name, w.Body)
			}
			got := serve(g, srv, newRequest("POST", call("9", `"get_wether"`), session)).Body.String()
			if kept := strings.Contains(got, "availableTools"); kept == sse {
				t.Errorf("%s, event stream %v: list kept %v", name, sse, kept)
			}
		}
	}
}

type hijackRecorder struct {
	*httptest.ResponseRecorder
	hijacked bool
}

func (h *hijackRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h.hijacked = true
	return nil, nil, nil
}

// A watched call can still hijack the connection, as without the guard.
func TestWatchedCallCanHijack(t *testing.T) {
	g := mustGuard(t, Options{Tools: unsure{}})
	w := &hijackRecorder{ResponseRecorder: httptest.NewRecorder()}
	g.Handler(http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
		if _, _, err := http.NewResponseController(rw).Hijack(); err != nil {
			t.Error(err)
		}
	})).ServeHTTP(w, newRequest("POST", call("1", `"nope"`), nil))
	if !w.hijacked {
		t.Error("not hijacked")
	}
}

// A server whose handler panics after writing its not-found answer: what
// it wrote goes out as it is (as without the guard), never translated, and
// the panic reaches net/http.
func TestPanickingHandlerIsNotTranslated(t *testing.T) {
	g := listedGuard(t, Options{}, "a")
	answer := errorReply("1", -32602, "Unknown tool: nope")
	w := httptest.NewRecorder()
	func() {
		defer func() {
			if p := recover(); p != http.ErrAbortHandler {
				t.Errorf("panic %v reached the caller, want http.ErrAbortHandler", p)
			}
		}()
		g.Handler(http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
			rw.Header().Set("Content-Type", "application/json")
			io.WriteString(rw, answer)
			panic(http.ErrAbortHandler)
		})).ServeHTTP(w, newRequest("POST", call("1", `"nope"`), nil))
	}()
	if w.Body.String() != answer {
		t.Errorf("wrote %q, want the server's bytes %q", w.Body, answer)
	}
}

// An event stream is read as a client reads it, streamed or held whole (a
// stated Content-Length): a byte order mark may start it, which a client
// drops before it reads the first event, so a not-found answer there is
// translated and the mark goes on; an event of another type than message
// is not a message to the client, and passes as it is.
func TestEventStreamAnswerIsReadAsAClientReadsIt(t *testing.T) {
	g := listedGuard(t, Options{}, "a")
	data := "data: " + isErrorReply("5", "MCP error -32602: Tool nope not found") + "\n\n"
	note := "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n"
	for _, length := range []bool{false, true} {
		for _, tc := range []struct {
			stream, kept string // kept: what the client gets as the server wrote it, before the answer
			translated   bool
		}{
			{"\xef\xbb\xbf" + data, "\xef\xbb\xbf", true},
			{"\xef\xbb\xbfevent: message\n" + data, "\xef\xbb\xbfevent: message\n", true},
			// A BOM past the start is a line of its own, ignored.
			{note + "\xef\xbb\xbf\n" + data, note + "\xef\xbb\xbf\n", true},
			{"event: endpoint\n" + data, "", false},
			{"\xef\xbb\xbfevent: endpoint\n" + data, "", false},
		} {
			next := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
				rw.Header().Set("Content-Type", "text/event-stream")
				if length {
					rw.Header().Set("Content-Length", strconv.Itoa(len(tc.stream)))
				}
				io.WriteString(rw, tc.stream)
			})
			w := httptest.NewRecorder()
			g.Handler(next).ServeHTTP(w, newRequest("POST", call("5", `"nope"`), nil))
			got := w.Body.String()
			if !tc.translated {
				if got != tc.stream {
					t.Errorf("length %v: %q reached the client as %q", length, tc.stream, got)
				}
				continue
			}
			want := mcpwire.EventMessages([]byte(tc.stream))
			msgs := mcpwire.EventMessages(w.Body.Bytes())
			if !strings.HasPrefix(got, tc.kept) || len(msgs) != len(want) ||
				!strings.Contains(string(msgs[len(msgs)-1]), `"code":-32602,"message":"Unknown tool: nope"`) ||
				length && w.Header().Get("Content-Length") != strconv.Itoa(len(got)) {
				t.Errorf("length %v: %q reached the client as %q (%v)", length, tc.stream, got, w.Header())
			}
		}
	}
}

// An event longer than the bound is never read as the answer, however its
// writes are cut: written whole or not, it passes as the server wrote it.
func TestEventOverTheBoundIsNotReadHoweverItIsCut(t *testing.T) {
	g := listedGuard(t, Options{}, "a")
	comment := ":" + strings.Repeat("x", maxNotFoundBytes("nope")) + "\n"
	stream := comment + "data: " + isErrorReply("5", "MCP error -32602: Tool nope not found") + "\n\n"
	for _, cut := range []int{len(stream), len(comment), 1, len(comment) + 3} {
		next := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			rw.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(rw, stream[:cut])
			io.WriteString(rw, stream[cut:])
		})
		w := httptest.NewRecorder()
		g.Handler(next).ServeHTTP(w, newRequest("POST", call("5", `"nope"`), nil))
		if w.Body.String() != stream {
			t.Errorf("cut at %d: the client read %.120q…", cut, w.Body.String()[len(comment):])
		}
	}
}

// Once a write to the client fails, the stream's answer writes nothing
// more: no event after the failure, no bytes joined from two events, and
// every later Write gets the error.
func TestEventStreamWritesNothingAfterAWriteFails(t *testing.T) {
	g := listedGuard(t, Options{}, "a")
	fail := errors.New("client gone")
	for _, writes := range [][]string{
		{"data: 1\n\ndata: 2\n\ndata: 3", "\n\n"},
		{"data: a", strings.Repeat("y", maxNotFoundBytes("nope")+10), "zz\n\n"},
	} {
		bw := &failingWriter{h: http.Header{}, fail: fail}
		var errs []error
		next := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			rw.Header().Set("Content-Type", "text/event-stream")
			for _, p := range writes {
				_, err := io.WriteString(rw, p)
				errs = append(errs, err)
			}
		})
		g.Handler(next).ServeHTTP(bw, newRequest("POST", call("5", `"nope"`), nil))
		if bw.writes != 1 {
			t.Errorf("%q: %d writes reached the client's writer after the first failed", writes, bw.writes-1)
		}
		for i, err := range errs[1:] {
			if !errors.Is(err, fail) {
				t.Errorf("%q: write %d after the failure returned %v", writes, i+2, err)
			}
		}
	}
}

// failingWriter is a client's writer whose every Write fails.
type failingWriter struct {
	h      http.Header
	fail   error
	writes int
}

func (f *failingWriter) Header() http.Header { return f.h }
func (f *failingWriter) WriteHeader(int)     {}
func (f *failingWriter) Write([]byte) (int, error) {
	f.writes++
	return 0, f.fail
}

// A long event (longer than any not-found answer) goes on as it comes,
// and the watch resumes after it: the not-found answer that follows is
// translated however the stream is cut into writes, and every other byte
// reaches the client as the server wrote it. Lines end in LF, CRLF or CR.
func TestLongEventDoesNotEndTheWatch(t *testing.T) {
	g := listedGuard(t, Options{}, "a")
	for _, eol := range []string{"\n", "\r\n", "\r"} {
		note := func(text string) string {
			return "event: message" + eol + `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + text + `"}}` + eol + eol
		}
		small, long := note("hi"), note(strings.Repeat("x", maxNotFoundBytes("nope")+100))
		answer := "event: message" + eol + "data: " + isErrorReply("5", "MCP error -32602: Tool nope not found") + eol + eol
		tail := note("after")
		stream := small + long + answer + tail
		serveCut := func(cuts ...int) string {
			next := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
				rw.Header().Set("Content-Type", "text/event-stream")
				rw.WriteHeader(200)
				last := 0
				for _, c := range append(cuts, len(stream)) {
					io.WriteString(rw, stream[last:c])
					rw.(http.Flusher).Flush()
					last = c
				}
			})
			w := httptest.NewRecorder()
			g.Handler(next).ServeHTTP(w, newRequest("POST", call("5", `"nope"`), nil))
			return w.Body.String()
		}
		whole := serveCut()
		translated := `"error":{"code":-32602,"message":"Unknown tool: nope","data":{"availableTools":["a"]}}`
		if !strings.HasPrefix(whole, small+long) || !strings.HasSuffix(whole, tail) || !strings.Contains(whole, translated) {
			t.Fatalf("eol %q, one write: %q", eol, whole)
		}
		// Cuts near every line end (where a CR may wait for its LF), near
		// the size bound, and every 101 bytes; then pairs of cuts.
		var cuts []int
		for i := 1; i < len(stream); i++ {
			off := i - len(small) - maxNotFoundBytes("nope")
			near := i%101 == 0 || off > -4 && off < 4
			for d := -3; d <= 3 && !near; d++ {
				near = i+d >= 0 && i+d < len(stream) && (stream[i+d] == '\r' || stream[i+d] == '\n')
			}
			if near {
				cuts = append(cuts, i)
			}
		}
		for n, k := range cuts {
			if got := serveCut(k); got != whole {
				t.Fatalf("eol %q, cut at %d of %d: %q\nwant %q", eol, k, len(stream), got, whole)
			}
			for _, j := range []int{k + 1, k + 2, cuts[(n*7919)%len(cuts)]} {
				if j > k && j < len(stream) {
					if got := serveCut(k, j); got != whole {
						t.Fatalf("eol %q, cut at %d and %d: %q\nwant %q", eol, k, j, got, whole)
					}
				}
			}
		}
	}
}

// The header goes out as it was when the handler wrote its status, as
// net/http sends it, although the guard holds a JSON answer until the
// handler returns: what the handler sets later is sent only as a declared
// trailer (httputil.ReverseProxy relays an upstream's trailers so).
func TestHeldAnswerKeepsTheHeaderOfItsStatus(t *testing.T) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Trailer", "X-Checksum")
		w.WriteHeader(200)
		w.Header().Set("X-Late", "ignored by net/http")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`)
		w.Header().Set("X-Checksum", "abc")
	}))
	defer upstream.Close()
	u, _ := url.Parse(upstream.URL)
	proxy := httputil.NewSingleHostReverseProxy(u)
	g := listedGuard(t, Options{}, "a")
	for _, h := range []http.Handler{upstream.Config.Handler, proxy} {
		res, body, _ := overHTTP(t, h)
		gres, gbody, _ := overHTTP(t, g.Handler(h))
		if !reflect.DeepEqual(res.Header, gres.Header) || !reflect.DeepEqual(res.Trailer, gres.Trailer) || body != gbody {
			t.Errorf("alone: %v, trailer %v, %s\nguarded: %v, trailer %v, %s", res.Header, res.Trailer, body, gres.Header, gres.Trailer, gbody)
		}
	}
}

// A handler that flushes before it writes (to send its header early)
// gets the answer net/http would give, and net/http logs nothing. (A held
// JSON answer's framing may differ: a Content-Length instead of chunks.)
func TestFlushBeforeTheFirstWrite(t *testing.T) {
	g := listedGuard(t, Options{}, "a")
	for _, ct := range []string{"text/event-stream", "application/json", ""} {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if ct != "" {
				w.Header().Set("Content-Type", ct)
			}
			w.(http.Flusher).Flush()
			io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n")
		})
		res, body, _ := overHTTP(t, h)
		gres, gbody, glog := overHTTP(t, g.Handler(h))
		res.Header.Del("Content-Length")
		gres.Header.Del("Content-Length")
		if res.StatusCode != gres.StatusCode || !reflect.DeepEqual(res.Header, gres.Header) || body != gbody || glog != "" {
			t.Errorf("Content-Type %q: alone %d %v %q\nguarded %d %v %q, server log %q", ct, res.StatusCode, res.Header, body, gres.StatusCode, gres.Header, gbody, glog)
		}
	}
}

// Declared trailers reach the client as they do without the guard, however
// the handler holds the header map and whatever the answer's length.
func TestHeldAnswerKeepsItsTrailers(t *testing.T) {
	long := `{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 10000) + `"}]}}`
	for name, h := range map[string]http.HandlerFunc{
		"the map asked for after the status, a long answer": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Trailer", "X-Sum")
			w.WriteHeader(200)
			h := w.Header()
			io.WriteString(w, long)
			h.Set("X-Sum", "abc")
		},
		"the map asked for before the status, asked again after": func(w http.ResponseWriter, r *http.Request) {
			h := w.Header()
			h.Set("Content-Type", "application/json")
			h.Set("Trailer", "X-Sum")
			w.WriteHeader(200)
			_ = w.Header().Get("Content-Type")
			io.WriteString(w, `{"jsonrpc":"2.0","id":5,"result":{"content":[]}}`)
			h.Set("X-Sum", "abc")
		},
		"a value written in place once the long answer has gone out": func(w http.ResponseWriter, r *http.Request) {
			h := w.Header()
			h.Set("Content-Type", "application/json")
			h.Set("Trailer", "X-Sum")
			w.WriteHeader(200)
			h.Set("X-Sum", "pending") // after the status: the header is put back as it was for the write
			v := h["X-Sum"]
			io.WriteString(w, long)
			v[0] = "abc"
		},
		"an empty answer": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Trailer", "X-Sum")
			w.WriteHeader(200)
			w.Header().Set("X-Sum", "abc")
		},
	} {
		g := listedGuard(t, Options{}, "a")
		for i, hh := range []http.Handler{h, g.Handler(h)} {
			res, _, _ := overHTTP(t, hh)
			if res.Trailer.Get("X-Sum") != "abc" || res.Header.Get("X-Sum") != "" {
				t.Errorf("%s (guarded: %v): trailer %q, header %q", name, i == 1, res.Trailer.Get("X-Sum"), res.Header.Get("X-Sum"))
			}
		}
	}
}

// overHTTP serves h on a loopback server and posts a call to it as a
// client does: the answer (its body read whole, so its trailers are in,
// and without Date), the body, and what the server logged.
func overHTTP(t *testing.T, h http.Handler) (res *http.Response, body, logged string) {
	t.Helper()
	var logs fixture.SyncBuffer
	s := httptest.NewUnstartedServer(h)
	s.Config.ErrorLog = log.New(&logs, "", 0)
	s.Start()
	defer s.Close()
	req, _ := http.NewRequest("POST", s.URL, strings.NewReader(call("1", `"zzz"`)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	res.Header.Del("Date")
	return res, string(b), logs.String()
}

// A watched call's JSON answer goes on once it is one whole value that is
// not the not-found answer, without waiting for the handler to end: behind
// a reverse proxy, an upstream that writes its answer and ends seconds
// later (a chunked answer, read to its end) would otherwise delay it by
// those seconds.
func TestWholeJSONAnswerGoesOnBeforeTheHandlerEnds(t *testing.T) {
	answer := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}]}}`
	release := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, answer[:20])
		w.(http.Flusher).Flush()
		io.WriteString(w, answer[20:])
		w.(http.Flusher).Flush()
		<-release
	}))
	defer up.Close()
	target, _ := url.Parse(up.URL)
	front := httptest.NewServer(mustGuard(t, Options{}).Handler(httputil.NewSingleHostReverseProxy(target)))
	defer front.Close()
	defer close(release) // before the servers close: they wait for their handlers
	got := make(chan string, 1)
	go func() { // the status, the header and the answer, with the handler still running
		res, err := http.Post(front.URL, "application/json", strings.NewReader(call("1", `"zzz"`)))
		if err != nil {
			got <- err.Error()
			return
		}
		defer res.Body.Close()
		b := make([]byte, len(answer))
		n, _ := io.ReadFull(res.Body, b)
		got <- string(b[:n])
	}()
	select {
	case b := <-got:
		if b != answer {
			t.Errorf("got %q, want %q", b, answer)
		}
	case <-time.After(20 * time.Second): // a bound on the wait, not a pace: the answer is due at once
		t.Fatal("the answer was held until the handler ended")
	}
}

// Watch is for once a request: a second call, with the writer the first
// returned or with the one below it, passes w through, and the answer is
// translated once, by the first call's finish.
func TestWatchTwicePassesThrough(t *testing.T) {
	for _, same := range []bool{true, false} {
		told := 0
		g := mustGuard(t, Options{Tools: unsure{}, OnReject: func(*http.Request, *Rejection) { told++ }})
		pass, rej := g.Check(newRequest("POST", call("1", `"nope"`), nil))
		if rej != nil {
			t.Fatal(rej)
		}
		rec := httptest.NewRecorder()
		w1, finish1 := g.Watch(rec, pass)
		under := http.ResponseWriter(rec)
		if same {
			under = w1
		}
		w2, finish2 := g.Watch(under, pass)
		if w2 != under {
			t.Errorf("same %v: the second Watch gave another writer", same)
		}
		answering(200, "application/json", errorReply("1", -32602, "Unknown tool: nope")).ServeHTTP(w1, pass)
		finish2()
		finish1()
		if n := strings.Count(rec.Body.String(), `"jsonrpc"`); told != 1 || n != 1 {
			t.Errorf("same %v: OnReject told %d times, %d answers: %s", same, told, n, rec.Body)
		}
	}
}

// flushFailing is a ResponseWriter whose flush fails, as a connection's
// does once the client is gone or the write deadline has passed.
type flushFailing struct{ *httptest.ResponseRecorder }

func (f flushFailing) FlushError() error { return errors.New("i/o timeout") }

// A flush through the guard's writers says what the writer beneath says,
// as http.ResponseController reports it without the guard; a held JSON
// answer's flush is deferred, and says nothing.
func TestFlushErrorsReachTheHandler(t *testing.T) {
	g := mustGuard(t, Options{Tools: unsure{}})
	for _, c := range []struct {
		name, body, ct string
		fails          bool
	}{
		{"a watched call, event stream", call("1", `"nope"`), "text/event-stream", true},
		{"a watched call, JSON held", call("1", `"nope"`), "application/json", false},
		{"a tools/list", `{"jsonrpc":"2.0","id":"l","method":"tools/list"}`, "text/event-stream", true},
		{"a session's other request", `{"jsonrpc":"2.0","id":2,"method":"ping"}`, "text/event-stream", true},
	} {
		var got error
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", c.ct)
			w.WriteHeader(200)
			got = http.NewResponseController(w).Flush()
		})
		r := newRequest("POST", c.body, http.Header{"Mcp-Session-Id": {"s1"}})
		g.Handler(h).ServeHTTP(flushFailing{httptest.NewRecorder()}, r)
		if (got != nil) != c.fails {
			t.Errorf("%s: Flush said %v", c.name, got)
		}
	}
}

// The watch of a call's event stream ends at the call's answer: a second
// message with the call's id after it (which clients drop) is not
// translated, nor reported as answered, whether the stream is written as
// it comes or held with a stated length.
func TestTheWatchEndsAtTheCallsAnswer(t *testing.T) {
	ok := `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`
	notFound := `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: x"}}`
	progress := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`
	stream := "data: " + progress + "\n\ndata: " + ok + "\n\ndata: " + notFound + "\n\n"
	for _, length := range []bool{false, true} {
		rejected := 0
		g := listedGuard(t, Options{OnReject: func(*http.Request, *Rejection) { rejected++ }}, "a")
		w := serve(g, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "text/event-stream")
			if length {
				w.Header().Set("Content-Length", strconv.Itoa(len(stream)))
			}
			io.WriteString(w, stream)
		}), newRequest("POST", call("1", `"x"`), nil))
		if w.Body.String() != stream || rejected != 0 {
			t.Errorf("stated length %v: %q, %d answers reported; want the stream as it was", length, w.Body, rejected)
		}
	}
}
