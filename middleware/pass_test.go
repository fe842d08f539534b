package toolguard

import (
	"bytes"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func modernWith(h http.Header, k string, v ...string) http.Header {
	h[k] = v
	return h
}

func modernCallMeta(meta string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope","arguments":{},"_meta":` + meta + `}}`
}

// Every reason to pass through, each with a request that gets it: the
// reason reported is asserted, and the request reaches the next handler
// byte for byte.
func TestPassReasons(t *testing.T) {
	unknown := call("1", `"nope"`)
	down := errors.New("upstream down")
	tests := []struct {
		name   string
		want   Reason
		method string
		body   string
		header http.Header
		opts   Options
	}{
		{"GET", ReasonNotPost, "GET", unknown, nil, Options{}},
		{"skip", ReasonSkipped, "POST", unknown, nil, Options{Skip: func(*http.Request) bool { return true }}},
		{"text/plain", ReasonContentType, "POST", unknown, http.Header{"Content-Type": {"text/plain"}}, Options{}},
		{"two content types", ReasonContentType, "POST", unknown, http.Header{"Content-Type": {"application/json", "application/json"}}, Options{}},
		{"gzip", ReasonContentEncoding, "POST", unknown, http.Header{"Content-Encoding": {"gzip"}}, Options{}},
		{"over limit", ReasonTooLarge, "POST", unknown, nil, Options{MaxBodyBytes: 20}},
		{"batch", ReasonNotStrict, "POST", "[" + unknown + "]", nil, Options{}},
		{"Name and name", ReasonNotStrict, "POST", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope","Name":"x"}}`, nil, Options{}},
		{"notification", ReasonNotRequest, "POST", `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"nope"}}`, nil, Options{}},
		{"null id", ReasonNotRequest, "POST", call("null", `"nope"`), nil, Options{}},
		{"tools/list", ReasonNotToolsCall, "POST", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, nil, Options{}},
		{"name 123", ReasonNotToolsCall, "POST", call("1", "123"), nil, Options{}},
		{"unsafe id", ReasonUnsafeID, "POST", call("9007199254740992", `"nope"`), nil, Options{}},
		{"two version headers", ReasonProtocolVersion, "POST", unknown, http.Header{"Mcp-Protocol-Version": {"2025-11-25", "2025-06-18"}}, Options{}},
		{"unreleased header version", ReasonProtocolVersion, "POST", unknown, http.Header{"Mcp-Protocol-Version": {"2025-11-25x"}}, Options{}},
		{"empty header version", ReasonProtocolVersion, "POST", unknown, http.Header{"Mcp-Protocol-Version": {""}}, Options{}},
		{"_meta version not a date", ReasonProtocolVersion, "POST", modernCallMeta(`{"io.modelcontextprotocol/protocolVersion":"2026-07-28x","io.modelcontextprotocol/clientCapabilities":{}}`), modernHeaders("nope"), Options{}},
		{"_meta version without header", ReasonProtocolVersion, "POST", modernCallMeta(`{"io.modelcontextprotocol/protocolVersion":"2025-11-25"}`), nil, Options{}},
		{"_meta version and header differ", ReasonProtocolVersion, "POST", modernCallMeta(`{"io.modelcontextprotocol/protocolVersion":"2025-11-25"}`), http.Header{"Mcp-Protocol-Version": {"2025-06-18"}}, Options{}},
		{"_meta version a number", ReasonProtocolVersion, "POST", modernCallMeta(`{"io.modelcontextprotocol/protocolVersion":20260728}`), modernHeaders("nope"), Options{}},
		{"2026 header, no _meta version", ReasonProtocolVersion, "POST", unknown, modernHeaders("nope"), Options{}},
		{"Last-Event-ID, 2025", ReasonLastEventID, "POST", unknown, http.Header{"Last-Event-Id": {"7"}}, Options{}},
		{"Last-Event-ID, 2026", ReasonLastEventID, "POST", modernCall("1", `"nope"`), modernWith(modernHeaders("nope"), "Last-Event-Id", "7"), Options{}},
		{"Mcp-Name mismatch", ReasonHeaderMismatch, "POST", modernCall("1", `"nope"`), modernHeaders("other"), Options{}},
		{"Mcp-Name in the sentinel form", ReasonHeaderMismatch, "POST", modernCall("1", `"nope"`), modernHeaders("=?base64?bm9wZQ==?="), Options{}},
		{"Mcp-Name twice, answering mismatches", ReasonHeaderMismatch, "POST", modernCall("1", `"nope"`), modernWith(modernHeaders("nope"), "Mcp-Name", "nope", "nope"), Options{AnswerHeaderMismatch: true}},
		{"accept html", ReasonAccept, "POST", unknown, http.Header{"Accept": {"text/html"}}, Options{}},
		{"accept json q=0", ReasonAccept, "POST", unknown, http.Header{"Accept": {"application/json;q=0"}}, Options{}},
		{"no Accept", ReasonAccept, "POST", unknown, http.Header{"Accept": nil}, Options{}},
		{"known", ReasonKnown, "POST", knownCall, nil, Options{}},
		{"unsure", ReasonToServer, "POST", unknown, nil, Options{Tools: stubTools{presence: Unsure}}},
		{"no clientCapabilities", ReasonClientMeta, "POST", modernCallMeta(`{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`), modernHeaders("nope"), Options{}},
		{"clientCapabilities null", ReasonClientMeta, "POST", modernCallMeta(`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":null}`), modernHeaders("nope"), Options{}},
		{"clientCapabilities wrong type inside", ReasonClientMeta, "POST", modernCallMeta(`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":true}}`), modernHeaders("nope"), Options{}},
		{"clientCapabilities twice", ReasonClientMeta, "POST", modernCallMeta(`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":5,"io.modelcontextprotocol/clientCapabilities":{}}`), modernHeaders("nope"), Options{}},
		{"clientInfo not strings", ReasonClientMeta, "POST", modernCallMeta(`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":5}}`), modernHeaders("nope"), Options{}},
		{"list fails", ReasonListFailed, "POST", unknown, nil, Options{Tools: stubTools{presence: Absent, err: down}}},
		{"listed", ReasonListed, "POST", unknown, nil, Options{Tools: stubTools{presence: Absent, list: []string{"nope"}}}},
	}
	covered := map[Reason]bool{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []Pass
			opts := tt.opts
			opts.OnPass = func(r *http.Request, p Pass) { got = append(got, p) }
			g := mustGuard(t, opts)
			rec := &recorder{}
			w := httptest.NewRecorder()
			g.Handler(rec).ServeHTTP(w, newRequest(tt.method, tt.body, tt.header))
			if !rec.called || string(rec.body) != tt.body {
				t.Fatalf("not passed through byte for byte: answer %d %s", w.Code, w.Body)
			}
			if len(got) != 1 || got[0].Reason != tt.want {
				t.Fatalf("reported %+v, want one %v", got, tt.want)
			}
			if tt.want.toolsCall() != (got[0].Tool != "") {
				t.Errorf("tool %q reported with %v", got[0].Tool, tt.want)
			}
			if (tt.want == ReasonListFailed) != (got[0].Err != nil) {
				t.Errorf("error %v reported with %v", got[0].Err, tt.want)
			}
		})
		covered[tt.want] = true
	}
	for r := Reason(1); r < reasonEnd; r++ {
		if !covered[r] {
			t.Errorf("reason %v has no case", r)
		}
	}
}

// A rejection is not a pass: OnPass is not told.
func TestRejectionIsNotAPass(t *testing.T) {
	var passes int
	g := mustGuard(t, Options{OnPass: func(*http.Request, Pass) { passes++ }})
	w, _ := rejection(t, g, modernCall("1", `"nope"`), modernHeaders("nope"))
	if w.Code != 400 || passes != 0 {
		t.Errorf("status %d, %d passes", w.Code, passes)
	}
}

// A guard without a tool set in front of the wrong upstream: the server's
// own answer (404) goes out, and the log says the server decided.
func TestLoggerSaysWhy(t *testing.T) {
	upstream := http.NotFoundHandler()
	var out bytes.Buffer
	g, err := New(Options{Logger: slog.New(slog.NewTextHandler(&out, nil))})
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	g.Handler(upstream).ServeHTTP(w, newRequest("POST", call("1", `"nope"`), nil))
	if w.Code != 404 {
		t.Fatalf("status %d", w.Code)
	}
	line := out.String()
	for _, want := range []string{"level=INFO", `msg="toolguard: passed through"`, "reason=to-server", "tool=nope"} {
		if !strings.Contains(line, want) {
			t.Errorf("log %q lacks %q", line, want)
		}
	}
	// Other traffic is logged at Debug only.
	out.Reset()
	g.Handler(upstream).ServeHTTP(httptest.NewRecorder(), newRequest("GET", "", nil))
	if out.Len() != 0 {
		t.Errorf("GET logged at Info: %q", out.String())
	}
}

func TestReasonNames(t *testing.T) {
	seen := map[string]bool{}
	for r := Reason(1); r < reasonEnd; r++ {
		n := r.String()
		if n == "" || n == "unknown" || seen[n] {
			t.Errorf("reason %d named %q", int(r), n)
		}
		seen[n] = true
	}
	if Reason(0).String() != "unknown" || reasonEnd.String() != "unknown" {
		t.Error("out of range reasons have names")
	}
}

// The caller's key reads a request's _meta without what describes the
// request itself (its progressToken, trace context, task and log level),
// however the keys are spelled: a tools/list and a tools/call of one
// caller differ in nothing else.
func TestCallerMetaDropsWhatDescribesTheRequest(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`, ""},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"a":1}}}`, `{"a":1}`},
		{`{"jsonrpc":"2.0","id":"}{","method":"tools/call","params":{"name":"x","arguments":{"_meta":{"no":1},"s":"\"]"},"_meta":{"k":[1,{"x":"y"}], "progressToken":"p-1"}}}`,
			`{"k":[1,{"x":"y"}]}`},
		{`{ "jsonrpc":"2.0","id":1,"method":"tools/call","params" : { "name":"x", "\u005fmeta" : { "progressToken" : 5 , "io.modelcontextprotocol/protocolVersion" : "2026-07-28" } } }`,
			`{"io.modelcontextprotocol/protocolVersion" : "2026-07-28"}`},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"progressToken":7}}}`, ""},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{ }}}`, ""},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"traceparent":"00-1-2-01","tracestate":"a=b","baggage":"u=1","t":1}}}`, `{"t":1}`},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol\/related-task":{"taskId":"x"},"progress\u0054oken":2,"io.modelcontextprotocol/logLevel":"info"}}}`, ""},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"Traceparent":"x","traceparent2":"y"}}}`, `{"Traceparent":"x","traceparent2":"y"}`},
	} {
		b := []byte(tc.body)
		m := readMessage(b)
		if !m.strict {
			t.Fatalf("not strict: %s", tc.body)
		}
		var got []byte
		if m.meta.kind != absent {
			got = callerMeta(m.meta.raw(b))
		}
		if string(got) != tc.want {
			t.Errorf("callerMeta of %s = %s, want %s", tc.body, got, tc.want)
		}
	}
}

// Pass.Method names the JSON-RPC method of a body the guard read, so that
// a caller's hook can count tools/list apart from other requests; it is
// empty where the body was not read as one JSON object.
func TestPassNamesTheMethod(t *testing.T) {
	for _, tt := range []struct{ method, body, want string }{
		{"POST", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "tools/list"},
		{"POST", `{"jsonrpc":"2.0","id":1,"method":"tools\/list"}`, "tools/list"},
		{"POST", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "notifications/initialized"},
		{"POST", knownCall, "tools/call"},
		{"POST", `{"jsonrpc":"2.0","id":1,"method":7}`, ""},
		{"POST", "[" + call("1", `"nope"`) + "]", ""},
		{"GET", call("1", `"nope"`), ""},
	} {
		var got []Pass
		g := mustGuard(t, Options{OnPass: func(r *http.Request, p Pass) { got = append(got, p) }})
		g.Handler(&recorder{}).ServeHTTP(httptest.NewRecorder(), newRequest(tt.method, tt.body, nil))
		if len(got) != 1 || got[0].Method != tt.want {
			t.Errorf("%s %s: reported %+v, want method %q", tt.method, tt.body, got, tt.want)
		}
	}
}

// The Logger logs every answer the guard writes, at Info: one before the
// server and one that replaces the server's not-found answer with the
// caller's list, each naming the tool and whether it was translated.
func TestLoggerLogsEveryAnswer(t *testing.T) {
	var out bytes.Buffer
	g := mustGuard(t, Options{Logger: slog.New(slog.NewTextHandler(&out, nil))})
	rejection(t, g, call("1", `"nope"`), nil)
	if l := out.String(); !strings.Contains(l, `level=INFO msg="toolguard: answered an unknown tool" tool=nope translated=false`) {
		t.Errorf("before the server: log %q", l)
	}
	out.Reset()
	g = mustGuard(t, Options{Tools: unsure{}, Logger: slog.New(slog.NewTextHandler(&out, nil))})
	list := `{"jsonrpc":"2.0","id":"l","result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}}`
	g.Handler(answering(200, "application/json", list)).ServeHTTP(httptest.NewRecorder(), newRequest("POST", `{"jsonrpc":"2.0","id":"l","method":"tools/list"}`, nil))
	out.Reset()
	w := httptest.NewRecorder()
	g.Handler(answering(200, "application/json", errorReply("1", -32602, "Unknown tool: nope"))).ServeHTTP(w, newRequest("POST", call("1", `"nope"`), nil))
	if l := out.String(); !strings.Contains(w.Body.String(), `"availableTools":["echo"]`) ||
		!strings.Contains(l, `level=INFO msg="toolguard: answered an unknown tool" tool=nope translated=true`) {
		t.Errorf("after the server: %s; log %q", w.Body, l)
	}
	// A -32020 for a header that does not match is no unknown tool.
	out.Reset()
	g = mustGuard(t, Options{AnswerHeaderMismatch: true, Logger: slog.New(slog.NewTextHandler(&out, nil))})
	rejection(t, g, modernCall("1", `"get_weather"`), modernHeaders("other"))
	if l := out.String(); !strings.Contains(l, `msg="toolguard: answered a header mismatch" tool=get_weather translated=false header=Mcp-Name`) {
		t.Errorf("header mismatch: log %q", l)
	}
}
