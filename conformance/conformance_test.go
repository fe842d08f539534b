package conformance

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

type zooCase struct {
	name     string
	server   http.Handler
	opts     Options
	verdict  Verdict
	category Category
	stage    string
	status   int
	media    string
	era      string
	code     *int
	tools    int
}

func intp(i int) *int { return &i }

// zoo is the fixture zoo: one local server per answer the checker must tell
// apart. It is shared by the Go API test and the CLI test.
func zoo() []zooCase {
	tools := []string{"echo", "add"}
	calls := func(h func(http.ResponseWriter, string)) http.Handler {
		return &fake{tools: tools, on: map[string]func(http.ResponseWriter, string){"tools/call": h}}
	}
	var lifted atomic.Int32
	return []zooCase{
		{name: "verified json", server: &fake{tools: tools},
			verdict: Verified, stage: "tools/call", status: 200, media: MediaJSON, era: Era2025, code: intp(-32602), tools: 2},
		{name: "verified sse after notifications", server: calls(func(w http.ResponseWriter, id string) {
			writeSSE(w,
				"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}\n\n",
				": a comment\n\n",
				"data: {\"jsonrpc\":\"2.0\",\"id\":999,\"result\":{}}\n\n",
				"event: message\nid: 7\ndata: {\"jsonrpc\":\"2.0\",\"id\":"+id+",\n"+
					"data: \"error\":{\"code\":-32601,\"message\":\"no such tool\"}}\n\n")
		}), verdict: Verified, stage: "tools/call", status: 200, media: MediaEventStream, era: Era2025, code: intp(-32601), tools: 2},
		{name: "result_is_error", server: calls(answer(200, "application/json",
			`{"jsonrpc":"2.0","id":{{id}},"result":{"content":[{"type":"text","text":"MCP error -32602: Tool x not found"}],"isError":true}}`)),
			verdict: ObservedRisk, category: ResultIsError, stage: "tools/call", status: 200, media: MediaJSON, era: Era2025, tools: 2},
		{name: "result_is_error over sse", server: calls(func(w http.ResponseWriter, id string) {
			writeSSE(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":"+id+",\"result\":{\"content\":[],\"isError\":true}}\n\n")
		}), verdict: ObservedRisk, category: ResultIsError, stage: "tools/call", status: 200, media: MediaEventStream, era: Era2025, tools: 2},
		{name: "result_ok", server: calls(answer(200, "application/json",
			`{"jsonrpc":"2.0","id":{{id}},"result":{"content":[{"type":"text","text":"Unknown tool: x"}]}}`)),
			verdict: ObservedRisk, category: ResultOK, stage: "tools/call", status: 200, media: MediaJSON, era: Era2025, tools: 2},
		{name: "jsonrpc_malformed with code", server: calls(answer(200, "application/json",
			`{"jsonrpc":"2.0","id":{{id}},"error":{"code":-32000}}`)),
			verdict: ObservedRisk, category: JSONRPCMalformed, stage: "tools/call", status: 200, media: MediaJSON, era: Era2025, code: intp(-32000), tools: 2},
		{name: "jsonrpc_malformed string code", server: calls(answer(200, "application/json",
			`{"jsonrpc":"2.0","id":{{id}},"error":{"code":"E_TOOL","message":"no"}}`)),
			verdict: ObservedRisk, category: JSONRPCMalformed, stage: "tools/call", status: 200, media: MediaJSON, era: Era2025, tools: 2},
		{name: "not_jsonrpc", server: calls(answer(402, "application/json", `{"detail":"payment required"}`)),
			verdict: ObservedRisk, category: NotJSONRPC, stage: "tools/call", status: 402, media: MediaJSON, era: Era2025, tools: 2},
		{name: "not_json", server: calls(answer(404, "text/html; charset=utf-8", `<html><body>404 Not Found</body></html>`)),
			verdict: ObservedRisk, category: NotJSON, stage: "tools/call", status: 404, media: MediaHTML, era: Era2025, tools: 2},
		{name: "empty_body", server: calls(answer(200, "", "")),
			verdict: ObservedRisk, category: EmptyBody, stage: "tools/call", status: 200, media: MediaNone, era: Era2025, tools: 2},
		{name: "event_stream_no_data", server: calls(func(w http.ResponseWriter, id string) {
			writeSSE(w, ": keepalive\n\n", "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n")
		}), verdict: ObservedRisk, category: EventStreamNoData, stage: "tools/call", status: 200, media: MediaEventStream, era: Era2025, tools: 2},

		{name: "401 at the handshake", server: &fake{tools: tools, on: map[string]func(http.ResponseWriter, string){
			"initialize": answer(401, "application/json", `{"error":"unauthorized"}`)}},
			verdict: Unverified, category: CredentialGated, stage: "initialize", status: 401, media: MediaJSON, era: Era2025},
		{name: "403 at the call", server: calls(answer(403, "text/plain", "forbidden")),
			verdict: Unverified, category: CredentialGated, stage: "tools/call", status: 403, media: MediaText, era: Era2025, tools: 2},
		{name: "list unreadable", server: &fake{tools: tools, on: map[string]func(http.ResponseWriter, string){
			"tools/list": answer(500, "text/html", "<h1>oops</h1>")}},
			verdict: Unverified, category: ToolsListUnreadable, stage: "tools/list", status: 500, media: MediaHTML, era: Era2025},
		{name: "list without names", server: &fake{tools: tools, on: map[string]func(http.ResponseWriter, string){
			"tools/list": answer(200, "application/json", `{"jsonrpc":"2.0","id":{{id}},"result":{"tools":[{"title":"x"}]}}`)}},
			verdict: Unverified, category: ToolsListUnreadable, stage: "tools/list", status: 200, media: MediaJSON, era: Era2025},
		{name: "name collision", server: &fake{tools: []string{"echo", DefaultProbeName}},
			verdict: Unverified, category: NameCollision, stage: "tools/list", era: Era2025, tools: 2},
		{name: "rate limit that never lifts", server: &fake{tools: tools, on: map[string]func(http.ResponseWriter, string){
			"tools/call": func(w http.ResponseWriter, id string) {
				w.Header().Set("Retry-After", "0")
				writeJSON(w, 429, `{"error":"slow down"}`)
			}}},
			verdict: Unverified, category: RateLimited, stage: "tools/call", status: 429, media: MediaJSON, era: Era2025, tools: 2},
		{name: "rate limit beyond the wait bound", server: &fake{tools: tools, on: map[string]func(http.ResponseWriter, string){
			"initialize": func(w http.ResponseWriter, id string) {
				w.Header().Set("Retry-After", "3600")
				w.WriteHeader(429)
			}}},
			verdict: Unverified, category: RateLimited, stage: "initialize", status: 429, media: MediaNone, era: Era2025},
		{name: "rate limit that lifts", server: &fake{tools: tools, on: map[string]func(http.ResponseWriter, string){
			"tools/call": func(w http.ResponseWriter, id string) {
				if lifted.Add(1) <= 2 {
					w.Header().Set("Retry-After", "1")
					w.WriteHeader(429)
					return
				}
				writeJSON(w, 200, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32602,"message":"Unknown tool"}}`)
			}}},
			verdict: Verified, stage: "tools/call", status: 200, media: MediaJSON, era: Era2025, code: intp(-32602), tools: 2},
		{name: "paginated list", server: &fake{tools: []string{"a", "b", "c", "d", "e", "f", "g"}, pageSize: 3},
			verdict: Verified, stage: "tools/call", status: 200, media: MediaJSON, era: Era2025, code: intp(-32602), tools: 7},
		{name: "too many pages", server: &fake{tools: []string{"a", "b", "c", "d", "e", "f", "g"}, pageSize: 1}, opts: Options{MaxPages: 3},
			verdict: Unverified, category: ToolsListUnreadable, stage: "tools/list", era: Era2025},
		{name: "2026-07-28 server", server: &fake{modern: true, tools: tools},
			verdict: Verified, stage: "tools/call", status: 200, media: MediaJSON, era: Era2026, code: intp(-32602), tools: 2},
		{name: "2026-07-28 server, risky", server: &fake{modern: true, tools: tools, on: map[string]func(http.ResponseWriter, string){
			"tools/call": answer(200, "application/json", `{"jsonrpc":"2.0","id":{{id}},"result":{"content":[],"isError":true}}`)}},
			verdict: ObservedRisk, category: ResultIsError, stage: "tools/call", status: 200, media: MediaJSON, era: Era2026, tools: 2},
		{name: "2025 server, era forced", server: &fake{tools: tools}, opts: Options{Era: Era2025},
			verdict: Verified, stage: "tools/call", status: 200, media: MediaJSON, era: Era2025, code: intp(-32602), tools: 2},
	}
}

func checkZooReport(t *testing.T, tc zooCase, rep Report) {
	t.Helper()
	if rep.Verdict != tc.verdict || rep.Category != tc.category || rep.Stage != tc.stage ||
		rep.HTTPStatus != tc.status || rep.MediaType != tc.media || rep.Era != tc.era || rep.Tools != tc.tools {
		t.Errorf("got  %s stage=%s status=%d media=%s era=%s tools=%d\nwant %s %s stage=%s status=%d media=%s era=%s tools=%d",
			rep, rep.Stage, rep.HTTPStatus, rep.MediaType, rep.Era, rep.Tools,
			tc.verdict, tc.category, tc.stage, tc.status, tc.media, tc.era, tc.tools)
	}
	if (rep.ErrorCode == nil) != (tc.code == nil) || rep.ErrorCode != nil && *rep.ErrorCode != *tc.code {
		t.Errorf("error code %v, want %v", rep.ErrorCode, tc.code)
	}
}

func TestZoo(t *testing.T) {
	for _, tc := range zoo() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(tc.server)
			defer srv.Close()
			rep, err := CheckURL(context.Background(), srv.URL, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			checkZooReport(t, tc, rep)
		})
	}
}

func TestRateLimitHonoursRetryAfter(t *testing.T) {
	var hits atomic.Int32
	var first, second time.Time
	srv := httptest.NewServer(&fake{tools: []string{"x"}, on: map[string]func(http.ResponseWriter, string){
		"tools/call": func(w http.ResponseWriter, id string) {
			if hits.Add(1) == 1 {
				first = time.Now()
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(429)
				return
			}
			second = time.Now()
			writeJSON(w, 200, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32602,"message":"x"}}`)
		}}})
	defer srv.Close()
	rep, err := CheckURL(context.Background(), srv.URL, Options{})
	if err != nil || rep.Verdict != Verified {
		t.Fatalf("%v %v", rep, err)
	}
	if d := second.Sub(first); d < time.Second {
		t.Errorf("retried after %v, Retry-After said 1s", d)
	}
}

func TestUnreachableAndTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	rep, err := CheckURL(context.Background(), "http://"+addr+"/mcp", Options{})
	if err != nil || rep.Verdict != Unverified || rep.Category != Unreachable {
		t.Errorf("closed port: %v %v", rep, err)
	}

	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-block }))
	defer srv.Close()
	defer close(block)
	rep, err = CheckURL(context.Background(), srv.URL, Options{Timeout: 200 * time.Millisecond})
	if err != nil || rep.Verdict != Unverified || rep.Category != Timeout {
		t.Errorf("silent server: %v %v", rep, err)
	}
}

// The checker calls no tool but the made-up one, and sends credentials only
// when given them.
func TestRecordingServer(t *testing.T) {
	for _, modern := range []bool{false, true} {
		f := &fake{modern: modern, tools: []string{"delete_everything", "send_email"}}
		srv := httptest.NewServer(f)
		rep, err := CheckURL(context.Background(), srv.URL, Options{})
		srv.Close()
		if err != nil || rep.Verdict != Verified {
			t.Fatalf("modern=%v: %v %v", modern, rep, err)
		}
		methods, names, auth := f.seen()
		if !slices.Equal(names, []string{DefaultProbeName}) {
			t.Errorf("modern=%v: tools/call names %q", modern, names)
		}
		for _, m := range methods {
			if !slices.Contains([]string{"server/discover", "initialize", "notifications/initialized", "tools/list", "tools/call"}, m) {
				t.Errorf("modern=%v: unexpected method %s", modern, m)
			}
		}
		if len(auth) != 0 {
			t.Errorf("modern=%v: sent Authorization %q unasked", modern, auth)
		}
	}

	f := &fake{tools: []string{"x"}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	if _, err := CheckURL(context.Background(), srv.URL, Options{
		ProbeName: "my_probe", Header: http.Header{"Authorization": {"Bearer t0ken"}}}); err != nil {
		t.Fatal(err)
	}
	_, names, auth := f.seen()
	if !slices.Equal(names, []string{"my_probe"}) || len(auth) == 0 || auth[0] != "Bearer t0ken" {
		t.Errorf("names %q, auth %q", names, auth)
	}
}

func TestTestHandler(t *testing.T) {
	if err := TestHandler(&fake{tools: []string{"x"}}, Options{}); err != nil {
		t.Errorf("well-behaved server: %v", err)
	}
	risky := &fake{tools: []string{"x"}, on: map[string]func(http.ResponseWriter, string){
		"tools/call": answer(200, "application/json", `{"jsonrpc":"2.0","id":{{id}},"result":{"content":[],"isError":true}}`)}}
	err := TestHandler(risky, Options{})
	var re *ReportError
	if !errors.As(err, &re) || re.Report.Category != ResultIsError ||
		!strings.Contains(err.Error(), "OBSERVED_RISK result_is_error at tools/call (HTTP 200, application/json)") {
		t.Errorf("risky server: %v", err)
	}
}

func TestOptionsValidated(t *testing.T) {
	for _, o := range []Options{{Era: "2024"}, {Timeout: -1}, {MaxPages: -2}} {
		if _, err := CheckURL(context.Background(), "http://127.0.0.1:1/", o); err == nil || !strings.HasPrefix(err.Error(), "conformance: ") {
			t.Errorf("%+v: %v", o, err)
		}
	}
	if _, err := CheckURL(context.Background(), "ftp://x", Options{}); err == nil {
		t.Error("ftp URL accepted")
	}
}
