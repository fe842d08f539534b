package toolguard

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const knownCall = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_weather","arguments":{"city":"Oslo"}}}`

func call(id, name string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":` + name + `,"arguments":{}}}`
}

func modernCall(id, name string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":` + name +
		`,"arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
}

func modernHeaders(name string) http.Header {
	return http.Header{
		"Mcp-Protocol-Version": {"2026-07-28"},
		"Mcp-Method":           {"tools/call"},
		"Mcp-Name":             {name},
	}
}

var weatherTools = StaticTools("get_weather", "get_forecast", "search_docs")

// recorder is a next handler that keeps what reached it.
type recorder struct {
	called bool
	body   []byte
	err    error
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec.called = true
	rec.body, rec.err = io.ReadAll(r.Body)
	w.WriteHeader(299)
}

func newRequest(method, body string, h http.Header) *http.Request {
	r := httptest.NewRequest(method, "/mcp", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	for k, vs := range h {
		if vs == nil {
			r.Header.Del(k)
			continue
		}
		r.Header[k] = vs
	}
	return r
}

// mustGuard is New(opts) with weatherTools when opts has no tool set, and
// the bare message ("Unknown tool: X"): the tests that use it pin the
// rest of the answer; the default message is pinned by TestMessage* and
// the golden transcripts, which build their guards with New.
func mustGuard(t testing.TB, opts Options) *Guard {
	t.Helper()
	if opts.Tools == nil {
		opts.Tools = weatherTools
	}
	opts.BareMessage = true
	g, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// unsureTools says "cannot tell" from Lookup, or fails List.
type stubTools struct {
	presence Presence
	list     []string
	err      error
}

func (s stubTools) Lookup(*http.Request, string) Presence { return s.presence }
func (s stubTools) List(*http.Request) ([]string, error)  { return s.list, s.err }

func TestPassThrough(t *testing.T) {
	unknown := call("1", `"nope"`)
	tests := []struct {
		name   string
		method string
		body   string
		header http.Header
		opts   Options
	}{
		{"GET", http.MethodGet, unknown, nil, Options{}},
		{"skip", "POST", unknown, nil, Options{Skip: func(*http.Request) bool { return true }}},
		{"text/plain", "POST", unknown, http.Header{"Content-Type": {"text/plain"}}, Options{}},
		{"no content type", "POST", unknown, http.Header{"Content-Type": nil}, Options{}},
		{"application/jsonx", "POST", unknown, http.Header{"Content-Type": {"application/jsonx"}}, Options{}},
		{"malformed parameters", "POST", unknown, http.Header{"Content-Type": {"application/json; charset"}}, Options{}},
		{"gzip", "POST", unknown, http.Header{"Content-Encoding": {"gzip"}}, Options{}},
		{"over limit", "POST", unknown, nil, Options{MaxBodyBytes: 20}},
		{"batch", "POST", "[" + unknown + "]", nil, Options{}},
		{"jsonrpc 1.0", "POST", strings.Replace(unknown, `"2.0"`, `"1.0"`, 1), nil, Options{}},
		{"jsonrpc number", "POST", strings.Replace(unknown, `"2.0"`, `2.0`, 1), nil, Options{}},
		{"notification", "POST", `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"nope"}}`, nil, Options{}},
		{"null id", "POST", call("null", `"nope"`), nil, Options{}},
		{"fractional id", "POST", call("1.5", `"nope"`), nil, Options{}},
		{"huge id", "POST", call("18446744073709551617", `"nope"`), nil, Options{}},
		{"object id", "POST", call("{}", `"nope"`), nil, Options{}},
		{"tools/list", "POST", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, nil, Options{}},
		{"Tools/Call", "POST", strings.Replace(unknown, "tools/call", "Tools/Call", 1), nil, Options{}},
		{"no params", "POST", `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`, nil, Options{}},
		{"params null", "POST", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":null}`, nil, Options{}},
		{"params array", "POST", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":["nope"]}`, nil, Options{}},
		{"no name", "POST", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`, nil, Options{}},
		{"name 123", "POST", call("1", "123"), nil, Options{}},
		{"ambiguous name", "POST", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope","Name":"get_weather"}}`, nil, Options{}},
		{"known tool", "POST", knownCall, nil, Options{}},
		{"unsure", "POST", unknown, nil, Options{Tools: stubTools{presence: Unsure}}},
		{"list fails", "POST", unknown, nil, Options{Tools: stubTools{presence: Absent, err: errors.New("down")}}},
		{"list has it", "POST", unknown, nil, Options{Tools: stubTools{presence: Absent, list: []string{"nope"}}}},
		{"func set fails", "POST", unknown, nil, Options{Tools: ToolsFunc(func(*http.Request) ([]string, error) { return nil, errors.New("x") })}},
		{"no static names", "POST", unknown, nil, Options{Tools: StaticTools()}},
		{"func set lists no names", "POST", unknown, nil, Options{Tools: ToolsFunc(func(*http.Request) ([]string, error) { return nil, nil })}},
		{"accept html only", "POST", unknown, http.Header{"Accept": {"text/html"}}, Options{}},
		{"accept json q=0", "POST", unknown, http.Header{"Accept": {"application/json;q=0"}}, Options{}},
		{"modern: Mcp-Name mismatch", "POST", modernCall("1", `"nope"`), modernHeaders("other"), Options{}},
		{"modern: Mcp-Name missing", "POST", modernCall("1", `"nope"`), http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}}, Options{}},
		{"modern: Mcp-Method missing", "POST", modernCall("1", `"nope"`), http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Name": {"nope"}}, Options{}},
		{"modern: Mcp-Method wrong", "POST", modernCall("1", `"nope"`), http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/list"}, "Mcp-Name": {"nope"}}, Options{}},
		{"modern: Mcp-Name twice", "POST", modernCall("1", `"nope"`), http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {"nope", "nope"}}, Options{AnswerHeaderMismatch: true}},
		{"modern: bad base64", "POST", modernCall("1", `"nope"`), modernHeaders("=?base64?!!!?="), Options{}},
		{"modern: header version only", "POST", call("1", `"nope"`), modernHeaders("nope"), Options{}},
		{"modern: _meta version only", "POST", modernCall("1", `"nope"`), http.Header{"Mcp-Method": {"tools/call"}, "Mcp-Name": {"nope"}}, Options{}},
		{"modern: versions differ", "POST", modernCall("1", `"nope"`), http.Header{"Mcp-Protocol-Version": {"2026-09-01"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {"nope"}}, Options{}},
		{"modern: Last-Event-ID", "POST", modernCall("1", `"nope"`), func() http.Header {
			h := modernHeaders("nope")
			h["Last-Event-Id"] = []string{"1"}
			return h
		}(), Options{}},
		{"unsafe integer id", "POST", call("9007199254740992", `"nope"`), nil, Options{}},
		{"two protocol version headers", "POST", call("1", `"nope"`), http.Header{"Mcp-Protocol-Version": {"2025-11-25", "2025-06-18"}}, Options{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := mustGuard(t, tt.opts)
			rec := &recorder{}
			w := httptest.NewRecorder()
			g.Handler(rec).ServeHTTP(w, newRequest(tt.method, tt.body, tt.header))
			if !rec.called {
				t.Fatalf("next not called; answer %d %s", w.Code, w.Body)
			}
			if rec.err != nil || string(rec.body) != tt.body {
				t.Errorf("next read %q, %v; want %q", rec.body, rec.err, tt.body)
			}
			if w.Code != 299 {
				t.Errorf("status %d", w.Code)
			}
		})
	}
}

// rejection runs one request through a guard and returns the answer.
func rejection(t *testing.T, g *Guard, body string, h http.Header) (*httptest.ResponseRecorder, map[string]any) {
	t.Helper()
	rec := &recorder{}
	w := httptest.NewRecorder()
	g.Handler(rec).ServeHTTP(w, newRequest("POST", body, h))
	if rec.called {
		t.Fatal("request passed through")
	}
	payload := w.Body.Bytes()
	if w.Header().Get("Content-Type") == "text/event-stream" {
		s, ok := strings.CutPrefix(string(payload), "event: message\ndata: ")
		if !ok || !strings.HasSuffix(s, "\n\n") || strings.Count(s, "\n") != 2 {
			t.Fatalf("not one SSE event: %q", payload)
		}
		payload = []byte(strings.TrimSuffix(s, "\n\n"))
	}
	var msg map[string]any
	if err := json.Unmarshal(payload, &msg); err != nil {
		t.Fatalf("answer %q: %v", payload, err)
	}
	return w, msg
}

func errField(msg map[string]any) map[string]any {
	e, _ := msg["error"].(map[string]any)
	return e
}

func TestRejection(t *testing.T) {
	g := mustGuard(t, Options{})

	t.Run("wire bytes", func(t *testing.T) {
		w, _ := rejection(t, g, call("1", `"get_wether"`), nil)
		want := `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: get_wether","data":{"availableTools":["get_forecast","get_weather","search_docs"],"suggestions":["get_weather"]}}}`
		if w.Code != 200 || w.Body.String() != want || w.Header().Get("Content-Type") != "application/json" {
			t.Errorf("got %d %s %q\nwant 200 application/json %q", w.Code, w.Header().Get("Content-Type"), w.Body, want)
		}
		if w.Header().Get("Content-Length") != fmt.Sprint(len(want)) {
			t.Errorf("Content-Length %q", w.Header().Get("Content-Length"))
		}
	})

	for _, id := range []string{`"abc"`, `"a\"b\u00e9"`, `""`, `0`, `-7`, `9007199254740991`, `-9007199254740991`} {
		t.Run("id "+id, func(t *testing.T) {
			w, _ := rejection(t, g, call(id, `"nope"`), nil)
			if want := `{"jsonrpc":"2.0","id":` + id + `,"error":`; !strings.HasPrefix(w.Body.String(), want) {
				t.Errorf("answer %s does not start %s", w.Body, want)
			}
		})
	}

	t.Run("safe integer id", func(t *testing.T) {
		g := mustGuard(t, Options{})
		for _, id := range []string{"9007199254740991", "-9007199254740991", "12"} {
			rejection(t, g, call(id, `"nope"`), nil)
		}
	})

	// go-sdk (400) and the TypeScript SDKs (406) refuse a POST whose Accept
	// does not take both JSON and an event stream, before any lookup; the
	// TypeScript SDKs look for both names, in this letter case.
	for _, accept := range []string{"text/event-stream", "*/*", "application/json", "application/*;q=0.5, text/event-stream",
		"Application/JSON, Text/Event-Stream", "application/json;q=0, text/event-stream", "application/jsonx"} {
		t.Run("to the server for Accept "+accept, func(t *testing.T) {
			rec := &recorder{}
			w := httptest.NewRecorder()
			g.Handler(rec).ServeHTTP(w, newRequest("POST", call("2", `"nope"`), http.Header{"Accept": {accept}}))
			if !rec.called {
				t.Errorf("answered before the server: %d %s", w.Code, w.Body)
			}
		})
	}
	for _, accept := range []string{"application/json, text/event-stream", "text/event-stream;q=0.9, application/json", "application/json;q=0.5, text/event-stream"} {
		t.Run("JSON for Accept "+accept, func(t *testing.T) {
			w, _ := rejection(t, g, call("2", `"nope"`), http.Header{"Accept": {accept}})
			if ct := w.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %s", ct)
			}
		})
	}
	t.Run("JSON for Accept in two headers", func(t *testing.T) {
		w, _ := rejection(t, g, call("2", `"nope"`), http.Header{"Accept": {"application/json", "text/event-stream"}})
		if ct := w.Header().Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type %s", ct)
		}
	})

	t.Run("modern request gets 400", func(t *testing.T) {
		w, msg := rejection(t, g, modernCall(`"m"`, `"nope"`), modernHeaders("nope"))
		if w.Code != 400 || errField(msg)["code"] != -32602.0 || msg["id"] != "m" {
			t.Errorf("got %d %v", w.Code, msg)
		}
	})
	// An Mcp-Name in the sentinel form is the server's to judge: go-sdk
	// v1.8 compares it undecoded and refuses it (-32020), mcp-go and the
	// TypeScript SDK v2 decode it. Answering mismatches, the guard decodes
	// it as the spec asks: a match is no mismatch.
	t.Run("Mcp-Name in the sentinel form goes to the server", func(t *testing.T) {
		name := "wetter ☀ \"x\""
		enc := "=?base64?" + base64.StdEncoding.EncodeToString([]byte(name)) + "?="
		for _, o := range []Options{{}, {AnswerHeaderMismatch: true}} {
			rec := &recorder{}
			w := httptest.NewRecorder()
			mustGuard(t, o).Handler(rec).ServeHTTP(w, newRequest("POST", modernCall("3", `"wetter ☀ \"x\""`), modernHeaders(enc)))
			if !rec.called {
				t.Errorf("%+v: answered before the server: %d %s", o, w.Code, w.Body)
			}
		}
	})
	t.Run("header mismatch answered when asked", func(t *testing.T) {
		g := mustGuard(t, Options{AnswerHeaderMismatch: true})
		w, msg := rejection(t, g, modernCall("4", `"get_weather"`), modernHeaders("other"))
		if w.Code != 400 || errField(msg)["code"] != -32020.0 {
			t.Errorf("got %d %v", w.Code, msg)
		}
	})

	t.Run("list capped", func(t *testing.T) {
		var names []string
		for i := range 150 {
			names = append(names, fmt.Sprintf("tool_%03d", i))
		}
		g := mustGuard(t, Options{Tools: StaticTools(names...), ToolListLimit: 10})
		_, msg := rejection(t, g, call("1", `"nope"`), nil)
		data := errField(msg)["data"].(map[string]any)
		list := data["availableTools"].([]any)
		if len(list) != 10 || list[0] != "tool_000" || list[9] != "tool_009" || data["availableToolsTruncated"] != true {
			t.Errorf("data %v", data)
		}
	})
	t.Run("default cap 100", func(t *testing.T) {
		var names []string
		for i := range 150 {
			names = append(names, fmt.Sprintf("t%03d", i))
		}
		g := mustGuard(t, Options{Tools: StaticTools(names...)})
		_, msg := rejection(t, g, call("1", `"nope"`), nil)
		if n := len(errField(msg)["data"].(map[string]any)["availableTools"].([]any)); n != 100 {
			t.Errorf("listed %d", n)
		}
	})
	t.Run("list hidden", func(t *testing.T) {
		g := mustGuard(t, Options{HideToolList: true})
		_, msg := rejection(t, g, call("1", `"get_wether"`), nil)
		data := errField(msg)["data"].(map[string]any)
		if _, ok := data["availableTools"]; ok || len(data["suggestions"].([]any)) != 1 {
			t.Errorf("data %v", data)
		}
	})
	t.Run("nothing disclosed", func(t *testing.T) {
		g := mustGuard(t, Options{HideToolList: true, HideSuggestions: true})
		w, msg := rejection(t, g, call("1", `"get_wether"`), nil)
		if _, ok := errField(msg)["data"]; ok || strings.Contains(w.Body.String(), "get_weather") {
			t.Errorf("answer %s", w.Body)
		}
	})
	t.Run("hostile name", func(t *testing.T) {
		name := strings.Repeat("\"\\\n\x01</script>\u2028", 1<<20/16)
		quoted, _ := json.Marshal(name)
		var got *Rejection
		g := mustGuard(t, Options{OnReject: func(_ *http.Request, rej *Rejection) { got = rej }})
		w, msg := rejection(t, g, call("1", string(quoted)), nil)
		m := errField(msg)["message"].(string)
		if !strings.HasPrefix(m, "Unknown tool: \"\\\n\x01</script>") || len(m) > 200 || !strings.HasSuffix(m, "…") {
			t.Errorf("message %q", m)
		}
		if w.Body.Len() > 1000 {
			t.Errorf("answer is %d bytes", w.Body.Len())
		}
		if got == nil || got.Name != name || got.Code != CodeInvalidParams {
			t.Error("observer not told the whole name")
		}
	})
}

func TestSuggestions(t *testing.T) {
	names := []string{"get_weather", "get_forecast", "search_docs", "searchDocs2", "delete_all", "a"}
	tests := []struct {
		name string
		want []string
	}{
		{"GetWeather", []string{"get_weather"}},
		{"get-weather", []string{"get_weather"}},
		{"get_wether", []string{"get_weather"}},
		{"search_doc", []string{"search_docs", "searchDocs2"}},
		{"send_email", nil},
		{"b", []string{"a"}},
		{strings.Repeat("x", 100), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := suggest(tt.name, names); !slices.Equal(got, tt.want) {
				t.Errorf("suggest(%q) = %q, want %q", tt.name, got, tt.want)
			}
		})
	}
}

func TestNewValidates(t *testing.T) {
	if g, err := New(Options{}); err != nil || g == nil {
		t.Errorf("New without Tools (the server decides every call) = %v", err)
	}
	refusesNegative(t, func(o Options) error { _, err := New(o); return err }, Options{Tools: weatherTools},
		"MaxBodyBytes", "ToolListLimit", "ListTTL")
}

// refusesNegative checks that construct, given opts with one of fields
// set to -1 (each in turn), fails with an error that names the field:
// "toolguard: <type of opts>.<field> must not be negative".
func refusesNegative[O any](t *testing.T, construct func(O) error, opts O, fields ...string) {
	t.Helper()
	for _, f := range fields {
		o := opts
		reflect.ValueOf(&o).Elem().FieldByName(f).SetInt(-1)
		want := "toolguard: " + reflect.TypeOf(o).Name() + "." + f + " must not be negative"
		if err := construct(o); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s -1: %v, want %q", f, err, want)
		}
	}
}

func TestCheckLeavesCallerRequest(t *testing.T) {
	g := mustGuard(t, Options{})
	r := newRequest("POST", knownCall, nil)
	orig := r.Body
	pass, rej := g.Check(r)
	if rej != nil || pass == r || r.Body != orig {
		t.Fatalf("Check changed the caller's request or rejected: %v", rej)
	}
	b, err := io.ReadAll(pass.Body)
	if err != nil || string(b) != knownCall {
		t.Errorf("read %q, %v", b, err)
	}
}

// Handler hands next the request itself, with the replayed body while
// next runs, and the original body back afterwards; a body next put in
// place stays, as it would without the guard.
func TestHandlerSwapsBodyBack(t *testing.T) {
	g := mustGuard(t, Options{})
	for _, replace := range []bool{false, true} {
		r := newRequest("POST", knownCall, nil)
		orig := r.Body
		var seen *http.Request
		var got []byte
		mine := io.NopCloser(strings.NewReader("x"))
		g.Handler(http.HandlerFunc(func(w http.ResponseWriter, nr *http.Request) {
			seen = nr
			if nr.Body == orig {
				t.Error("next got the original body, already read by the guard")
			}
			got, _ = io.ReadAll(nr.Body)
			if replace {
				nr.Body = mine
			}
		})).ServeHTTP(httptest.NewRecorder(), r)
		if seen != r || string(got) != knownCall {
			t.Fatalf("next got %p (want %p) reading %q", seen, r, got)
		}
		if want := orig; replace && r.Body != mine || !replace && r.Body != want {
			t.Errorf("replace=%v: body after next is %T", replace, r.Body)
		}
	}
	// A request the guard does not read reaches next untouched.
	r := newRequest("GET", "", nil)
	orig := r.Body
	g.Handler(http.HandlerFunc(func(w http.ResponseWriter, nr *http.Request) {
		if nr != r || nr.Body != orig {
			t.Error("an unread request was changed")
		}
	})).ServeHTTP(httptest.NewRecorder(), r)
}

// Misuse is reported plainly, never as a nil dereference or a silent pass.
func TestMisuseIsReportedPlainly(t *testing.T) {
	var nilFunc ToolsFunc
	if _, err := New(Options{Tools: nilFunc}); err == nil || !strings.Contains(err.Error(), "Options.Tools holds a nil value") {
		t.Errorf("New with a nil ToolsFunc: %v", err)
	}
	for name, use := range map[string]func(){
		"Handler": func() { new(Guard).Handler(http.NotFoundHandler()) },
		"Check":   func() { new(Guard).Check(newRequest("POST", knownCall, nil)) },
		"Watch":   func() { new(Guard).Watch(httptest.NewRecorder(), newRequest("GET", "", nil)) },
	} {
		func() {
			defer func() {
				if p := recover(); p == nil || !strings.Contains(fmt.Sprint(p), "without New") {
					t.Errorf("zero Guard %s: panic %v, want one that says it was not made with New", name, p)
				}
			}()
			use()
		}()
	}
	func() {
		defer func() {
			if p := recover(); p == nil || !strings.Contains(fmt.Sprint(p), "next is nil") {
				t.Errorf("Handler(nil): panic %v, want one when it is built", p)
			}
		}()
		mustGuard(t, Options{Tools: StaticTools("a")}).Handler(nil)
	}()
	w := httptest.NewRecorder()
	if err := new(Rejection).Write(w); err == nil || w.Body.Len() != 0 || w.Code != 200 || len(w.Header()) != 0 {
		t.Errorf("zero Rejection.Write: %v, wrote %d %v %q", err, w.Code, w.Header(), w.Body)
	}
	var nilRej *Rejection
	if err := nilRej.Write(w); err == nil {
		t.Error("nil Rejection.Write: no error")
	}
}

// Reason.Watched tells which passes may still be translated: the
// server's own not-found answer to a call passed for a watched reason is
// replaced, and never for another reason.
func TestReasonWatchedMeansTranslatable(t *testing.T) {
	notFound := answering(200, "application/json", errorReply("1", -32602, "Unknown tool: nope"))
	for _, tc := range []struct {
		tools  ToolSet
		header http.Header
		body   string
		want   Reason
	}{
		{StaticTools("nope"), nil, call("1", `"nope"`), ReasonKnown},
		{unsure{names: []string{"a"}}, nil, call("1", `"nope"`), ReasonToServer},
		{StaticTools("a"), http.Header{"Last-Event-Id": {"7"}}, call("1", `"nope"`), ReasonLastEventID},
		{StaticTools("a"), nil, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope","name":"x"}}`, ReasonNotStrict},
	} {
		var passed []Pass
		translated := false
		g := mustGuard(t, Options{
			Tools:    tc.tools,
			OnPass:   func(_ *http.Request, p Pass) { passed = append(passed, p) },
			OnReject: func(_ *http.Request, rej *Rejection) { translated = rej.Translated },
		})
		hdr := http.Header{"Accept": {"application/json, text/event-stream"}}
		for k, v := range tc.header {
			hdr[k] = v
		}
		g.Handler(notFound).ServeHTTP(httptest.NewRecorder(), newRequest("POST", tc.body, hdr))
		if len(passed) != 1 || passed[0].Reason != tc.want {
			t.Errorf("%s: passed %+v", tc.want, passed)
			continue
		}
		if tc.want.Watched() != translated {
			t.Errorf("%s: Watched() %v, but the not-found answer translated: %v", tc.want, tc.want.Watched(), translated)
		}
	}
	if Reason(0).Watched() || reasonEnd.Watched() {
		t.Error("a reason out of the list is watched")
	}
}

// Answers drawn from one kept list share its rendered tool list: an
// answer whose code a hook changed, one written as an event, and a plain
// one each come out whole, with the list as the server gave it.
func TestAnswersOfOneKeptListEachComeOutWhole(t *testing.T) {
	n := 0
	g := listedGuard(t, Options{OnReject: func(_ *http.Request, rej *Rejection) {
		if n++; n == 1 {
			rej.Code = -32601
		}
	}}, "alpha", "beta")
	notFound := errorReply("7", -32602, "tool 'alpah' not found: tool not found")
	for i, c := range []struct{ ct, body, code string }{
		{"application/json", notFound, "-32601"},
		{"text/event-stream", "event: message\ndata: " + notFound + "\n\n", "-32602"},
		{"application/json", notFound, "-32602"},
	} {
		w := serve(g, answering(200, c.ct, c.body), newRequest("POST", call("7", `"alpah"`), nil))
		msg := strings.TrimSuffix(strings.TrimPrefix(w.Body.String(), "event: message\ndata: "), "\n\n")
		want := `{"jsonrpc":"2.0","id":7,"error":{"code":` + c.code + `,"message":"Unknown tool: alpah","data":{"availableTools":["alpha","beta"],"suggestions":["alpha"]}}}`
		if msg != want || w.Header().Get("Content-Type") != c.ct {
			t.Errorf("answer %d (%s): %q\nwant %s", i, w.Header().Get("Content-Type"), w.Body, want)
		}
	}
}

// The message quotes the name the request gave, whatever a hook makes of
// Name (say, to bound a metric's values): the answer does not contradict
// its own suggestions.
func TestHookRenamingNameLeavesTheMessage(t *testing.T) {
	g := mustGuard(t, Options{Tools: StaticTools("echo"), OnReject: func(_ *http.Request, rej *Rejection) { rej.Name = "other" }})
	w := serve(g, answering(200, "application/json", "{}"), newRequest("POST", call("1", `"ecoh"`), nil))
	want := `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: ecoh","data":{"availableTools":["echo"],"suggestions":["echo"]}}}`
	if w.Body.String() != want {
		t.Errorf("answer %s\nwant %s", w.Body, want)
	}
}

// A translated answer honours a hook's Code, and its Status where the
// answer is written whole (a JSON answer, an event stream of a stated
// length); one event of a stream the server has begun keeps the stream's
// status, which has gone out.
func TestTranslatedAnswerHonoursTheHooksCodeAndStatus(t *testing.T) {
	reply := errorReply("1", -32602, "Unknown tool: nope")
	event := "event: message\ndata: " + reply + "\n\n"
	for _, c := range []struct {
		name   string
		server http.Handler
		status int
	}{
		{"JSON", answering(200, "application/json", reply), http.StatusTeapot},
		{"event stream of a stated length", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("Content-Length", strconv.Itoa(len(event)))
			io.WriteString(w, event)
		}), http.StatusTeapot},
		{"event stream", answering(200, "text/event-stream", event), 200},
	} {
		g := listedGuard(t, Options{OnReject: func(_ *http.Request, rej *Rejection) {
			rej.Code, rej.Status = -32601, http.StatusTeapot
		}}, "echo")
		w := serve(g, c.server, newRequest("POST", call("1", `"nope"`), nil))
		if w.Code != c.status || !strings.Contains(w.Body.String(), `"code":-32601`) {
			t.Errorf("%s: status %d, body %s; want %d and the hook's code", c.name, w.Code, w.Body, c.status)
		}
	}
}

// A hook may change the answer's Code and Status before it is written,
// and Write honours both: the bytes carry the new code, and nothing else
// of the answer changes.
func TestRejectionWriteHonoursCodeAndStatus(t *testing.T) {
	g := mustGuard(t, Options{Tools: StaticTools("echo"), OnReject: func(_ *http.Request, rej *Rejection) {
		rej.Code, rej.Status = -32601, http.StatusTeapot
	}})
	w, _ := rejection(t, g, call("1", `"ecoh"`), nil)
	want := `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Unknown tool: ecoh","data":{"availableTools":["echo"],"suggestions":["echo"]}}}`
	if w.Code != http.StatusTeapot || w.Body.String() != want {
		t.Errorf("status %d, body %s\nwant %s", w.Code, w.Body, want)
	}
}
