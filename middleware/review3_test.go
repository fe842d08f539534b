package toolguard

// Reviewer's tests (review3) of relayWriter, the writer Guard.Handler
// gives the next handler when the tool set's own requests took messages
// for the caller and the call passes (5ebce96). Tests named
// TestReview3... that fail on the reviewed code demonstrate a broken
// promise, said in their comment; the others cover ground the earlier
// tests did not and pass.

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolguard/toolguard/internal/sse"
)

// callAnswerServer answers tools/list as relayServer does (a fresh
// notification before each list reply, so every call that the guard
// confirms with a list passes with a relayed message) and tools/call with
// answer.
type callAnswerServer struct {
	list   *relayServer
	answer func(w http.ResponseWriter, id json.RawMessage)
}

func newCallAnswerServer(answer func(w http.ResponseWriter, id json.RawMessage)) *callAnswerServer {
	s := &callAnswerServer{list: &relayServer{tools: []string{"a"}}, answer: answer}
	s.list.events = func(int, int) string { return s.list.note() }
	return s
}

func (s *callAnswerServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	json.Unmarshal(b, &m)
	if m.Method == "tools/call" {
		s.answer(w, m.ID)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(b))
	s.list.ServeHTTP(w, r)
}

// postReal sends body to h through a real HTTP server and client, so that
// what reaches the wire (status, headers sent when they were sent) is what
// a client sees.
func postReal(t *testing.T, h http.Handler, body string) (*http.Response, []byte) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	got, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	return res, got
}

func review3Guard(t *testing.T, s http.Handler) http.Handler {
	t.Helper()
	d, err := Discover(s, DiscoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return mustGuard(t, Options{Tools: d}).Handler(s)
}

// Promise: never an altered message. A handler may send informational
// (1xx) responses before its final one (net/http allows any number of
// WriteHeader(1xx) before the final status; httputil.ReverseProxy
// forwards an upstream's 103 Early Hints this way). relayWriter takes the
// first WriteHeader for the final one: it passes the 103 on, then drops
// the handler's WriteHeader(400), and the answer reaches the client as 200.
// FAILS on the reviewed code.
func TestReview3RelayInformationalThenError(t *testing.T) {
	s := newCallAnswerServer(func(w http.ResponseWriter, id json.RawMessage) {
		w.Header().Set("Link", "</style.css>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32600,"message":"refused"}}`, id)
	})
	alone, aloneBody := postReal(t, s, call("1", `"a"`))
	if alone.StatusCode != http.StatusBadRequest {
		t.Fatalf("alone: %d %q", alone.StatusCode, aloneBody)
	}
	res, body := postReal(t, review3Guard(t, s), call("1", `"a"`))
	if s.list.lists.Load() != 1 {
		t.Fatalf("%d lists: the call was not confirmed by a list that relayed a message", s.list.lists.Load())
	}
	if res.StatusCode != http.StatusBadRequest {
		t.Errorf("guarded: status %d %q, the server answered 400 %q", res.StatusCode, body, aloneBody)
	}
}

// Promise: never an altered message. A handler may send its headers before
// its body (Flush, directly or through http.ResponseController, before the
// first Write: a slow tool's answer, a proxy that flushes early). Once the
// JSON Content-Type has gone out with them, relayWriter still holds the
// body and turns it into an event stream: the client reads
// "Content-Type: application/json" over "event: message\ndata: ...", which
// is not JSON.
// FAILS on the reviewed code.
func TestReview3RelayFlushBeforeBody(t *testing.T) {
	s := newCallAnswerServer(func(w http.ResponseWriter, id json.RawMessage) {
		w.Header().Set("Content-Type", "application/json")
		if err := http.NewResponseController(w).Flush(); err != nil {
			panic(err)
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[]}}`, id)
	})
	alone, aloneBody := postReal(t, s, call("1", `"a"`))
	if !json.Valid(aloneBody) {
		t.Fatalf("alone: %s %q", alone.Header.Get("Content-Type"), aloneBody)
	}
	res, body := postReal(t, review3Guard(t, s), call("1", `"a"`))
	ct := res.Header.Get("Content-Type")
	switch {
	case strings.HasPrefix(ct, "application/json"):
		if !json.Valid(body) {
			t.Errorf("guarded: Content-Type %s but the body is not JSON: %q", ct, body)
		}
	case strings.HasPrefix(ct, "text/event-stream"):
		msgs := sse.Messages(body)
		if len(msgs) == 0 || !strings.Contains(string(msgs[len(msgs)-1]), `"result"`) {
			t.Errorf("guarded: event stream without the answer: %q", body)
		}
	default:
		t.Errorf("guarded: Content-Type %q, body %q", ct, body)
	}
}

// Promise: never an altered message. JSON allows a carriage return as
// whitespace between tokens; an event stream ends a line at a lone CR as
// at LF. relayWriter puts a held JSON answer into data lines split at LF
// only, so a lone CR in it ends the data line early: the client's event
// stream parser reads the answer cut at the CR (and the rest as a field
// line it ignores).
// FAILS on the reviewed code.
func TestReview3RelayJSONWithCarriageReturn(t *testing.T) {
	s := newCallAnswerServer(func(w http.ResponseWriter, id json.RawMessage) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, "{\"jsonrpc\":\"2.0\",\r\"id\":%s,\r\"result\":{\"content\":[]}}", id)
	})
	_, aloneBody := postReal(t, s, call("1", `"a"`))
	if !json.Valid(aloneBody) {
		t.Fatalf("alone: %q", aloneBody)
	}
	_, body := postReal(t, review3Guard(t, s), call("1", `"a"`))
	msgs := sse.Messages(body)
	if len(msgs) != 2 {
		t.Fatalf("guarded: %d messages in %q, want the relayed notification and the answer", len(msgs), body)
	}
	if !json.Valid(msgs[1]) || !strings.Contains(string(msgs[1]), `"result"`) {
		t.Errorf("guarded: the answer reached the client as %q (the server sent %q)", msgs[1], aloneBody)
	}
}

// Passing coverage: relayWriter with answers written in unusual ways that
// it does handle: an event stream whose Content-Type has parameters, JSON
// in pieces with Flush calls in between (through ResponseController) and
// a stale Content-Length, an implicit 200 with the headers set late (before
// the first Write), and a 202 with no body. The relayed notification comes
// first and once, the answer whole; a 202 stays a 202 with no body.
func TestReview3RelayWriterShapes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer func(w http.ResponseWriter, id json.RawMessage)
		status int
		want   int // messages: the notification and the answer; 0: no body
	}{
		{"sse-params", func(w http.ResponseWriter, id json.RawMessage) {
			w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
			w.Header().Set("Content-Length", "5")
			w.WriteHeader(200)
			fmt.Fprintf(w, "id: 9\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{}}\n\n", id)
		}, 200, 2},
		{"json-pieces", func(w http.ResponseWriter, id json.RawMessage) {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.Header().Set("Content-Length", "3")
			w.WriteHeader(200)
			rc := http.NewResponseController(w)
			io.WriteString(w, `{"jsonrpc":"2.0",`)
			rc.Flush()
			fmt.Fprintf(w, `"id":%s,`, id)
			rc.Flush()
			io.WriteString(w, `"result":{"content":[]}}`+"\n")
		}, 200, 2},
		{"implicit-200", func(w http.ResponseWriter, id json.RawMessage) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`, id)
		}, 200, 2},
		{"202", func(w http.ResponseWriter, id json.RawMessage) {
			w.WriteHeader(http.StatusAccepted)
		}, 202, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newCallAnswerServer(tc.answer)
			res, body := postReal(t, review3Guard(t, s), call("1", `"a"`))
			if res.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %q", res.StatusCode, tc.status, body)
			}
			if tc.want == 0 {
				if len(body) != 0 {
					t.Errorf("body %q, want none", body)
				}
				return
			}
			msgs := sse.Messages(body)
			if !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") || len(msgs) != tc.want {
				t.Fatalf("%s %q: want %d messages", res.Header.Get("Content-Type"), body, tc.want)
			}
			if !strings.Contains(string(msgs[0]), `"notifications/message"`) || !json.Valid(msgs[1]) || !strings.Contains(string(msgs[1]), `"result"`) {
				t.Errorf("messages %q: want the notification, then the answer", msgs)
			}
		})
	}
}

// gzipped is a minimal compression middleware of the usual kind
// (gziphandler, chi's Compress): for a request that accepts gzip it sets
// Content-Encoding and compresses whatever the handler writes.
func gzipped(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			next.ServeHTTP(w, r)
			return
		}
		gz := gzip.NewWriter(w)
		defer gz.Close()
		next.ServeHTTP(&gzipWriter{ResponseWriter: w, gz: gz}, r)
	})
}

type gzipWriter struct {
	http.ResponseWriter
	gz      *gzip.Writer
	started bool
}

func (g *gzipWriter) WriteHeader(code int) {
	if !g.started {
		g.started = true
		g.Header().Set("Content-Encoding", "gzip")
		g.Header().Del("Content-Length")
	}
	g.ResponseWriter.WriteHeader(code)
}

func (g *gzipWriter) Write(p []byte) (int, error) {
	if !g.started {
		g.WriteHeader(http.StatusOK)
	}
	return g.gz.Write(p)
}

// Promise: never an altered message. A compression middleware between the
// guard and the server (the guard wraps the whole stack) answers a caller
// that accepts gzip (every Go and TypeScript HTTP client does by default)
// with Content-Encoding: gzip. relayWriter takes the compressed bytes for
// the JSON answer, puts them into "data:" lines of an event stream and
// sends that under the same Content-Encoding: the client cannot decode
// the answer at all. (The guard's own list request drops Accept-Encoding,
// so the list it relays from is plain.)
// FAILS on the reviewed code.
func TestReview3RelayCompressedAnswer(t *testing.T) {
	s := newCallAnswerServer(func(w http.ResponseWriter, id json.RawMessage) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[]}}`, id)
	})
	h := gzipped(s)
	post := func(h http.Handler) (string, []byte, error) {
		srv := httptest.NewServer(h)
		defer srv.Close()
		req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(call("1", `"a"`)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		res, err := srv.Client().Do(req) // the transport asks for gzip and decodes it
		if err != nil {
			return "", nil, err
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		return res.Header.Get("Content-Type"), b, err
	}
	_, alone, err := post(h)
	if err != nil || !json.Valid(alone) {
		t.Fatalf("alone: %q %v", alone, err)
	}
	d, err := Discover(h, DiscoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ct, body, err := post(mustGuard(t, Options{Tools: d}).Handler(h))
	if s.list.lists.Load() != 1 {
		t.Fatalf("%d lists: the call was not confirmed by a list that relayed a message", s.list.lists.Load())
	}
	if err != nil {
		t.Fatalf("guarded: the client cannot read the answer: %v (Content-Type %s, %q)", err, ct, body)
	}
	// An encoded answer has no place for the relayed messages (RULES §3):
	// it must reach the client as the server wrote it.
	if string(body) == string(alone) {
		return
	}
	msgs := sse.Messages(body)
	if len(msgs) == 0 || !json.Valid(msgs[len(msgs)-1]) || !strings.Contains(string(msgs[len(msgs)-1]), `"result"`) {
		t.Errorf("guarded: %s %q, the server answered %q", ct, body, alone)
	}
}

// Passing coverage: the new strict-subset rules hold for spellings a
// decoder unescapes or folds: a progressToken key or a top-level key
// written with \u escapes is read as the key it decodes to (JSON.parse
// does so, and the TypeScript SDKs then refuse the call), the safe-integer
// bound is exact on both sides and both signs, and the keys a decoder
// might fold onto progressToken are left to the server.
func TestReview3StrictSubsetSpellings(t *testing.T) {
	const pre = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{},"_meta":{`
	for _, tc := range []struct {
		body   string
		strict bool
	}{
		{pre + `"progress\u0054oken":true}}}`, false},
		{pre + `"\u0070rogressToken":1.5}}}`, false},
		{pre + `"progressToken":9007199254740991}}}`, true},
		{pre + `"progressToken":-9007199254740991}}}`, true},
		{pre + `"progressToken":9007199254740992}}}`, false},
		{pre + `"progressToken":-9007199254740992}}}`, false},
		{pre + `"progressToken":"t"}}}`, true},
		{pre + `"progressToken":-0}}}`, true},
		{pre + `"PROGRESSTOKEN":true}}}`, false},
		{pre + `"progreßToken":true}}}`, true}, // not a fold of progressToken: any value
		{pre + `"progressToken":"a","progressToken":"b"}}}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"},"\u0069d":2}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"},"ID":2}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"},"\u005f":2}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","requestState":"\u0000"}}`, true},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","request\u0053tate":1}}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","Task":null}}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","inputResponses":{}}}`, false},
	} {
		if got := readMessage([]byte(tc.body)).strict; got != tc.strict {
			t.Errorf("%s: strict %v, want %v", tc.body, got, tc.strict)
		}
	}
}

// Promise (documented): "The ResponseWriter is never wrapped, so
// streaming, flushing and hijacking behave as without it" (package doc,
// Handler's doc). When the tool set's requests took messages for the
// caller and the call passes, Handler hands next a relayWriter: it is no
// http.Hijacker (or http.CloseNotifier) for a handler that asserts the
// interface, and a Flush of a JSON answer sends nothing until the handler
// returns. Either the docs or the writer must change.
// FAILS on the reviewed code.
func TestReview3HandlerWriterIsWrapped(t *testing.T) {
	var hijacker, flushedEarly atomic.Bool
	var s *callAnswerServer
	s = newCallAnswerServer(func(w http.ResponseWriter, id json.RawMessage) {
		_, ok := w.(http.Hijacker)
		hijacker.Store(ok)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0",`)
		w.(http.Flusher).Flush()
		// What a client would have read by now is what reached the
		// server's writer: a recorder between the guard and the wire tells.
		flushedEarly.Store(probe.Len() > 0)
		fmt.Fprintf(w, `"id":%s,"result":{}}`, id)
	})
	probe.Reset()
	h := review3Guard(t, s)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&probeWriter{ResponseWriter: w}, r)
	}))
	defer srv.Close()
	req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(call("1", `"a"`)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(res.Body) // the answer ends when the handler has returned
	res.Body.Close()
	if s.list.lists.Load() != 1 {
		t.Fatalf("%d lists: the call was not confirmed by a list that relayed a message", s.list.lists.Load())
	}
	if !hijacker.Load() {
		t.Error("the handler's ResponseWriter is no http.Hijacker behind the guard")
	}
	if !flushedEarly.Load() {
		t.Error("a Flush of the handler's JSON answer sent nothing before the handler returned")
	}
}

// probe records what reaches the writer the guard was given.
var probe bytes.Buffer

type probeWriter struct{ http.ResponseWriter }

func (p *probeWriter) Write(b []byte) (int, error) { probe.Write(b); return p.ResponseWriter.Write(b) }
func (p *probeWriter) Flush()                      { p.ResponseWriter.(http.Flusher).Flush() }
func (p *probeWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return p.ResponseWriter.(http.Hijacker).Hijack()
}
