// Package zoo is the fixture zoo of the conformance tests: local MCP
// servers that answer a made-up tool in each way the checker must tell
// apart, with the report each must produce. The package's tests and the
// command's tests share it.
package zoo

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolguard/toolguard/conformance"
)

// Fake is a configurable MCP server for the fixture zoo. By default it is a
// well-behaved 2025-11-25 server with sessions whose tools/call of an
// unknown tool answers -32602.
type Fake struct {
	Sessionless bool // answer server/discover with 2026-07-28, enforce its headers
	// LenientName, with Sessionless: do not hold a tools/call's Mcp-Name to
	// the body's name (the other 2026-07-28 headers still are).
	LenientName bool
	// OnMismatch, with Sessionless, answers a tools/call whose Mcp-Name is not
	// the body's name; default HTTP 400 with -32020.
	OnMismatch func(w http.ResponseWriter, id string)
	// Version, if set, is the protocol version the server answers
	// initialize with; it then refuses, as TypeScript SDK 1.13–1.21 servers
	// do, a later request whose Mcp-Protocol-Version names another.
	Version  string
	Tools    []string // registered tools
	PageSize int      // > 0: paginate tools/list

	// On overrides the answer to a method; it gets the raw id.
	On map[string]func(w http.ResponseWriter, id string)
	// OnName overrides the answer to a tools/call of a name (before On).
	OnName map[string]func(w http.ResponseWriter, id string)

	mu       sync.Mutex
	methods  []string // every method received, in order
	names    []string // every tools/call name received
	authSeen []string // Authorization headers received
}

type rpc struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  struct {
		Name   string `json:"name"`
		Cursor string `json:"cursor"`
		Meta   struct {
			Version string `json:"io.modelcontextprotocol/protocolVersion"`
		} `json:"_meta"`
	} `json:"params"`
}

func WriteJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

func WriteSSE(w http.ResponseWriter, events ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	for _, e := range events {
		io.WriteString(w, e)
		w.(http.Flusher).Flush()
	}
}

// ServeHTTP answers one JSON-RPC message in the manner f is configured
// for: the era's header checks first, then the overrides, then a
// well-behaved server's answer.
func (f *Fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodDelete {
		w.WriteHeader(200)
		return
	}
	var m rpc
	if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
		WriteJSON(w, 400, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`)
		return
	}
	f.remember(&m, r.Header.Get("Authorization"))
	id := string(m.ID)
	if r.Header.Get("Mcp-Protocol-Version") == "2026-07-28" && !f.Sessionless {
		f.refuseModern(w, m.Method, id)
		return
	}
	if f.Sessionless && f.refuseHeaders(w, r, &m, id) {
		return
	}
	if v := r.Header.Get("Mcp-Protocol-Version"); f.Version != "" && v != "" && v != f.Version {
		WriteJSON(w, 400, `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: Unsupported protocol version"}}`)
		return
	}
	if h, ok := f.override(&m); ok {
		h(w, id)
		return
	}
	f.answer(w, &m, id)
}

// remember records the message's method, a tools/call's name and the
// Authorization header, for Seen.
func (f *Fake) remember(m *rpc, auth string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.methods = append(f.methods, m.Method)
	if m.Method == "tools/call" {
		f.names = append(f.names, m.Params.Name)
	}
	if auth != "" {
		f.authSeen = append(f.authSeen, auth)
	}
}

// refuseModern answers a 2026-07-28 request the way a 2025-era server
// does: an empty 400, unless On overrides the method.
func (f *Fake) refuseModern(w http.ResponseWriter, method, id string) {
	if h, ok := f.On[method]; ok {
		h(w, id)
		return
	}
	w.WriteHeader(400)
}

// refuseHeaders answers, and reports true for, a message to a sessionless
// server whose 2026-07-28 headers or _meta do not match its body: -32020,
// or OnMismatch for a tools/call's Mcp-Name (not checked with LenientName).
func (f *Fake) refuseHeaders(w http.ResponseWriter, r *http.Request, m *rpc, id string) bool {
	if r.Header.Get("Mcp-Protocol-Version") != "2026-07-28" || m.Params.Meta.Version != "2026-07-28" || r.Header.Get("Mcp-Method") != m.Method {
		writeHeaderMismatch(w, id)
		return true
	}
	if m.Method != "tools/call" || f.LenientName || r.Header.Get("Mcp-Name") == m.Params.Name {
		return false
	}
	if f.OnMismatch != nil {
		f.OnMismatch(w, id)
	} else {
		writeHeaderMismatch(w, id)
	}
	return true
}

func writeHeaderMismatch(w http.ResponseWriter, id string) {
	WriteJSON(w, 400, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32020,"message":"header mismatch"}}`)
}

// override is the handler the test set for the message: OnName's for a
// tools/call of that name, else On's for the method.
func (f *Fake) override(m *rpc) (func(http.ResponseWriter, string), bool) {
	if h, ok := f.OnName[m.Params.Name]; ok && m.Method == "tools/call" {
		return h, true
	}
	h, ok := f.On[m.Method]
	return h, ok
}

// answer is a well-behaved server's answer to the message; a tools/call
// reaching it is of a tool the server does not have (-32602).
func (f *Fake) answer(w http.ResponseWriter, m *rpc, id string) {
	switch m.Method {
	case "server/discover":
		if !f.Sessionless {
			WriteJSON(w, 200, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32601,"message":"method not found"}}`)
			return
		}
		WriteJSON(w, 200, `{"jsonrpc":"2.0","id":`+id+`,"result":{"supportedVersions":["2026-07-28","2025-11-25"],"capabilities":{"tools":{}}}}`)
	case "initialize":
		w.Header().Set("Mcp-Session-Id", "s-1")
		WriteJSON(w, 200, `{"jsonrpc":"2.0","id":`+id+`,"result":{"protocolVersion":"`+cmp.Or(f.Version, "2025-11-25")+`","capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"1"}}}`)
	case "notifications/initialized":
		w.WriteHeader(http.StatusAccepted)
	case "tools/list":
		f.list(w, id, m.Params.Cursor)
	case "tools/call":
		WriteJSON(w, 200, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32602,"message":"Unknown tool: `+m.Params.Name+`"}}`)
	default:
		WriteJSON(w, 200, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32601,"message":"method not found"}}`)
	}
}

func (f *Fake) list(w http.ResponseWriter, id, cursor string) {
	tools := f.Tools
	start, _ := strconv.Atoi(cursor)
	end := len(tools)
	if f.PageSize > 0 {
		end = min(start+f.PageSize, len(tools))
	}
	type tool struct {
		Name        string         `json:"name"`
		InputSchema map[string]any `json:"inputSchema"`
	}
	res := struct {
		Tools      []tool `json:"tools"`
		NextCursor string `json:"nextCursor,omitempty"`
	}{Tools: []tool{}}
	for _, n := range tools[min(start, end):end] {
		res.Tools = append(res.Tools, tool{n, map[string]any{"type": "object"}})
	}
	if end < len(tools) {
		res.NextCursor = strconv.Itoa(end)
	}
	b, _ := json.Marshal(res)
	WriteJSON(w, 200, `{"jsonrpc":"2.0","id":`+id+`,"result":`+string(b)+`}`)
}

func (f *Fake) Seen() (methods, names, auth []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.methods...), append([]string(nil), f.names...), append([]string(nil), f.authSeen...)
}

// Answer returns an override writing a fixed reply, with the id spliced in
// where the body holds {{id}}.
func Answer(status int, contentType, body string) func(http.ResponseWriter, string) {
	return func(w http.ResponseWriter, id string) {
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		w.WriteHeader(status)
		if body != "" {
			io.WriteString(w, strings.ReplaceAll(body, "{{id}}", id))
		}
	}
}

// A Case is one server of the zoo and the report the checker must give.
type Case struct {
	Name string
	// Server is an HTTP server; Command, when set instead, a stdio one.
	Server   http.Handler
	Command  []string
	Opts     conformance.Options
	Verdict  conformance.Verdict
	Category conformance.Category
	Stage    string
	Status   int
	Media    conformance.MediaType
	Era      string
	Code     *int
	Tools    int
	// Detail, if set, must appear in the report's detail.
	Detail string
	// NameHeader is the mcp_name_header outcome; empty means
	// not_applicable.
	NameHeader conformance.Strictness
}

// intp returns a pointer to i.
func intp(i int) *int { return &i }

// Cases returns the zoo, fresh (some servers keep state).
func Cases() []Case {
	tools := []string{"echo", "add"}
	calls := func(h func(http.ResponseWriter, string)) http.Handler {
		return &Fake{Tools: tools, On: map[string]func(http.ResponseWriter, string){"tools/call": h}}
	}
	var lifted atomic.Int32
	return []Case{
		{Name: "verified json", Server: &Fake{Tools: tools},
			Verdict: conformance.Verified, Stage: "tools/call", Status: 200, Media: conformance.MediaJSON, Era: conformance.Era2025, Code: intp(-32602), Tools: 2},
		{Name: "verified json, an older version negotiated", Server: &Fake{Tools: tools, Version: "2025-06-18"},
			Verdict: conformance.Verified, Stage: "tools/call", Status: 200, Media: conformance.MediaJSON, Era: "2025-06-18", Code: intp(-32602), Tools: 2},
		{Name: "verified sse after notifications", Server: calls(func(w http.ResponseWriter, id string) {
			WriteSSE(w,
				"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}\n\n",
				": a comment\n\n",
				"data: {\"jsonrpc\":\"2.0\",\"id\":999,\"result\":{}}\n\n",
				"event: message\nid: 7\ndata: {\"jsonrpc\":\"2.0\",\"id\":"+id+",\n"+
					"data: \"error\":{\"code\":-32601,\"message\":\"no such tool\"}}\n\n")
		}), Verdict: conformance.Verified, Stage: "tools/call", Status: 200, Media: conformance.MediaEventStream, Era: conformance.Era2025, Code: intp(-32601), Tools: 2},
		{Name: "result_is_error", Server: calls(Answer(200, "application/json",
			`{"jsonrpc":"2.0","id":{{id}},"result":{"content":[{"type":"text","text":"MCP error -32602: Tool x not found"}],"isError":true}}`)),
			Verdict: conformance.ObservedRisk, Category: conformance.ResultIsError, Stage: "tools/call", Status: 200, Media: conformance.MediaJSON, Era: conformance.Era2025, Tools: 2},
		{Name: "result_is_error over sse", Server: calls(func(w http.ResponseWriter, id string) {
			WriteSSE(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":"+id+",\"result\":{\"content\":[],\"isError\":true}}\n\n")
		}), Verdict: conformance.ObservedRisk, Category: conformance.ResultIsError, Stage: "tools/call", Status: 200, Media: conformance.MediaEventStream, Era: conformance.Era2025, Tools: 2},
		{Name: "result_ok", Server: calls(Answer(200, "application/json",
			`{"jsonrpc":"2.0","id":{{id}},"result":{"content":[{"type":"text","text":"Unknown tool: x"}]}}`)),
			Verdict: conformance.ObservedRisk, Category: conformance.ResultOK, Stage: "tools/call", Status: 200, Media: conformance.MediaJSON, Era: conformance.Era2025, Tools: 2},
		{Name: "jsonrpc_malformed with code", Server: calls(Answer(200, "application/json",
			`{"jsonrpc":"2.0","id":{{id}},"error":{"code":-32000}}`)),
			Verdict: conformance.ObservedRisk, Category: conformance.JSONRPCMalformed, Stage: "tools/call", Status: 200, Media: conformance.MediaJSON, Era: conformance.Era2025, Code: intp(-32000), Tools: 2},
		{Name: "jsonrpc_malformed string code", Server: calls(Answer(200, "application/json",
			`{"jsonrpc":"2.0","id":{{id}},"error":{"code":"E_TOOL","message":"no"}}`)),
			Verdict: conformance.ObservedRisk, Category: conformance.JSONRPCMalformed, Stage: "tools/call", Status: 200, Media: conformance.MediaJSON, Era: conformance.Era2025, Tools: 2},
		{Name: "not_jsonrpc", Server: calls(Answer(402, "application/json", `{"detail":"payment required"}`)),
			Verdict: conformance.ObservedRisk, Category: conformance.NotJSONRPC, Stage: "tools/call", Status: 402, Media: conformance.MediaJSON, Era: conformance.Era2025, Tools: 2},
		{Name: "not_json", Server: calls(Answer(404, "text/html; charset=utf-8", `<html><body>404 Not Found</body></html>`)),
			Verdict: conformance.ObservedRisk, Category: conformance.NotJSON, Stage: "tools/call", Status: 404, Media: conformance.MediaHTML, Era: conformance.Era2025, Tools: 2},
		{Name: "empty_body", Server: calls(Answer(200, "", "")),
			Verdict: conformance.ObservedRisk, Category: conformance.EmptyBody, Stage: "tools/call", Status: 200, Media: conformance.MediaNone, Era: conformance.Era2025, Tools: 2},
		{Name: "event_stream_no_data", Server: calls(func(w http.ResponseWriter, id string) {
			WriteSSE(w, ": keepalive\n\n", "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n")
		}), Verdict: conformance.ObservedRisk, Category: conformance.EventStreamNoData, Stage: "tools/call", Status: 200, Media: conformance.MediaEventStream, Era: conformance.Era2025, Tools: 2},

		{Name: "401 at the handshake", Server: &Fake{Tools: tools, On: map[string]func(http.ResponseWriter, string){
			"initialize": Answer(401, "application/json", `{"error":"unauthorized"}`)}},
			Verdict: conformance.Unverified, Category: conformance.CredentialGated, Stage: "initialize", Status: 401, Media: conformance.MediaJSON, Era: conformance.Era2025},
		{Name: "403 at the call", Server: calls(Answer(403, "text/plain", "forbidden")),
			Verdict: conformance.Unverified, Category: conformance.CredentialGated, Stage: "tools/call", Status: 403, Media: conformance.MediaText, Era: conformance.Era2025, Tools: 2},
		{Name: "-32020 at the call: a proxy between dropped Mcp-Name", Server: &Fake{Sessionless: true, Tools: tools, On: map[string]func(http.ResponseWriter, string){
			"tools/call": Answer(400, "application/json", `{"jsonrpc":"2.0","id":{{id}},"error":{"code":-32020,"message":"Mcp-Name: missing required header"}}`)}},
			Verdict: conformance.Unverified, Category: conformance.RefusedBeforeDispatch, Stage: "tools/call", Status: 400, Media: conformance.MediaJSON, Era: conformance.Era2026, Code: intp(-32020), Tools: 2,
			Detail: "-32020"},
		{Name: "404 about the session at the call", Server: calls(Answer(404, "application/json", `{"jsonrpc":"2.0","id":{{id}},"error":{"code":-32001,"message":"Session not found"}}`)),
			Verdict: conformance.Unverified, Category: conformance.RefusedBeforeDispatch, Stage: "tools/call", Status: 404, Media: conformance.MediaJSON, Era: conformance.Era2025, Code: intp(-32001), Tools: 2,
			Detail: "no longer knows it"},
		{Name: "404 at the call in a session, about the tool", Server: calls(Answer(404, "text/plain", "Unknown tool requested in this session")),
			Verdict: conformance.ObservedRisk, Category: conformance.NotJSON, Stage: "tools/call", Status: 404, Media: conformance.MediaText, Era: conformance.Era2025, Tools: 2},
		{Name: "404 at the call in a session, a result", Server: calls(Answer(404, "application/json",
			`{"jsonrpc":"2.0","id":{{id}},"result":{"isError":true,"content":[{"type":"text","text":"session not found for this tool"}]}}`)),
			Verdict: conformance.ObservedRisk, Category: conformance.ResultIsError, Stage: "tools/call", Status: 404, Media: conformance.MediaJSON, Era: conformance.Era2025, Tools: 2},
		{Name: "404 about the session at the call, as plain text", Server: calls(Answer(404, "text/plain; charset=utf-8", "session not found\n")),
			Verdict: conformance.Unverified, Category: conformance.RefusedBeforeDispatch, Stage: "tools/call", Status: 404, Media: conformance.MediaText, Era: conformance.Era2025, Tools: 2},
		{Name: "list unreadable", Server: &Fake{Tools: tools, On: map[string]func(http.ResponseWriter, string){
			"tools/list": Answer(500, "text/html", "<h1>oops</h1>")}},
			Verdict: conformance.Unverified, Category: conformance.ToolsListUnreadable, Stage: "tools/list", Status: 500, Media: conformance.MediaHTML, Era: conformance.Era2025},
		{Name: "list without names", Server: &Fake{Tools: tools, On: map[string]func(http.ResponseWriter, string){
			"tools/list": Answer(200, "application/json", `{"jsonrpc":"2.0","id":{{id}},"result":{"tools":[{"title":"x"}]}}`)}},
			Verdict: conformance.Unverified, Category: conformance.ToolsListUnreadable, Stage: "tools/list", Status: 200, Media: conformance.MediaJSON, Era: conformance.Era2025},
		{Name: "name collision", Server: &Fake{Tools: []string{"echo", conformance.DefaultProbeName}},
			Verdict: conformance.Unverified, Category: conformance.NameCollision, Stage: "tools/list", Era: conformance.Era2025, Tools: 2},
		{Name: "rate limit that never lifts", Server: &Fake{Tools: tools, On: map[string]func(http.ResponseWriter, string){
			"tools/call": func(w http.ResponseWriter, id string) {
				w.Header().Set("Retry-After", "0")
				WriteJSON(w, 429, `{"error":"slow down"}`)
			}}},
			Verdict: conformance.Unverified, Category: conformance.RateLimited, Stage: "tools/call", Status: 429, Media: conformance.MediaJSON, Era: conformance.Era2025, Tools: 2},
		{Name: "rate limit beyond the wait bound", Server: &Fake{Tools: tools, On: map[string]func(http.ResponseWriter, string){
			"initialize": func(w http.ResponseWriter, id string) {
				w.Header().Set("Retry-After", "3600")
				w.WriteHeader(429)
			}}},
			Verdict: conformance.Unverified, Category: conformance.RateLimited, Stage: "initialize", Status: 429, Media: conformance.MediaNone, Era: conformance.Era2025,
			Detail: "asking to wait 1h0m0s (Retry-After), beyond the 10s the checker waits"},
		{Name: "rate limit that lifts", Server: &Fake{Tools: tools, On: map[string]func(http.ResponseWriter, string){
			"tools/call": func(w http.ResponseWriter, id string) {
				if lifted.Add(1) <= 2 {
					w.Header().Set("Retry-After", "1")
					w.WriteHeader(429)
					return
				}
				WriteJSON(w, 200, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32602,"message":"Unknown tool"}}`)
			}}},
			Verdict: conformance.Verified, Stage: "tools/call", Status: 200, Media: conformance.MediaJSON, Era: conformance.Era2025, Code: intp(-32602), Tools: 2},
		{Name: "paginated list", Server: &Fake{Tools: []string{"a", "b", "c", "d", "e", "f", "g"}, PageSize: 3},
			Verdict: conformance.Verified, Stage: "tools/call", Status: 200, Media: conformance.MediaJSON, Era: conformance.Era2025, Code: intp(-32602), Tools: 7},
		{Name: "too many pages", Server: &Fake{Tools: []string{"a", "b", "c", "d", "e", "f", "g"}, PageSize: 1}, Opts: conformance.Options{MaxPages: 3},
			Verdict: conformance.Unverified, Category: conformance.ToolsListUnreadable, Stage: "tools/list", Era: conformance.Era2025},
		{Name: "2026-07-28 server", Server: &Fake{Sessionless: true, Tools: tools},
			Verdict: conformance.Verified, Stage: "tools/call", Status: 200, Media: conformance.MediaJSON, Era: conformance.Era2026, Code: intp(-32602), Tools: 2, NameHeader: conformance.Strict},
		{Name: "2026-07-28 server, risky", Server: &Fake{Sessionless: true, Tools: tools, On: map[string]func(http.ResponseWriter, string){
			"tools/call": Answer(200, "application/json", `{"jsonrpc":"2.0","id":{{id}},"result":{"content":[],"isError":true}}`)}},
			Verdict: conformance.ObservedRisk, Category: conformance.ResultIsError, Stage: "tools/call", Status: 200, Media: conformance.MediaJSON, Era: conformance.Era2026, Tools: 2, NameHeader: conformance.Strict},
		{Name: "2025 server, era forced", Server: &Fake{Tools: tools}, Opts: conformance.Options{Era: conformance.Era2025},
			Verdict: conformance.Verified, Stage: "tools/call", Status: 200, Media: conformance.MediaJSON, Era: conformance.Era2025, Code: intp(-32602), Tools: 2},

		// Issue 12, class 1: null is neither a number nor a string.
		{Name: "null code", Server: calls(Answer(200, "application/json", `{"jsonrpc":"2.0","id":{{id}},"error":{"code":null,"message":"x"}}`)),
			Verdict: conformance.ObservedRisk, Category: conformance.JSONRPCMalformed, Stage: "tools/call", Status: 200, Media: conformance.MediaJSON, Era: conformance.Era2025, Tools: 2},
		{Name: "null message", Server: calls(Answer(200, "application/json", `{"jsonrpc":"2.0","id":{{id}},"error":{"code":-32602,"message":null}}`)),
			Verdict: conformance.ObservedRisk, Category: conformance.JSONRPCMalformed, Stage: "tools/call", Status: 200, Media: conformance.MediaJSON, Era: conformance.Era2025, Code: intp(-32602), Tools: 2},
		// Class 2: a 302 turns the POST into a GET; its empty body is the
		// answer, not whatever the GET brings. A 307/308 keeps the POST.
		{Name: "302 with an empty body", Server: redirectCall(302, &Fake{Tools: tools}),
			Verdict: conformance.ObservedRisk, Category: conformance.EmptyBody, Stage: "tools/call", Status: 302, Media: conformance.MediaNone, Era: conformance.Era2025, Tools: 2,
			Detail: `it redirects to "/moved", which the checker does not follow`},
		{Name: "301 to https at the handshake", Server: &Fake{Tools: tools, On: map[string]func(http.ResponseWriter, string){
			"initialize": func(w http.ResponseWriter, id string) {
				w.Header().Set("Location", "https://mcp.example/mcp")
				w.WriteHeader(http.StatusMovedPermanently)
			}}},
			Verdict: conformance.Unverified, Category: conformance.ToolsListUnreadable, Stage: "initialize", Status: 301, Media: conformance.MediaNone, Era: conformance.Era2025,
			Detail: `it redirects to "https://mcp.example/mcp"`},
		{Name: "303 with an empty body", Server: redirectCall(303, &Fake{Tools: tools}),
			Verdict: conformance.ObservedRisk, Category: conformance.EmptyBody, Stage: "tools/call", Status: 303, Media: conformance.MediaNone, Era: conformance.Era2025, Tools: 2},
		{Name: "307 followed with the POST", Server: redirectCall(307, &Fake{Tools: tools}),
			Verdict: conformance.Verified, Stage: "tools/call", Status: 200, Media: conformance.MediaJSON, Era: conformance.Era2025, Code: intp(-32602), Tools: 2},
		{Name: "308 followed with the POST", Server: redirectCall(308, &Fake{Tools: tools}),
			Verdict: conformance.Verified, Stage: "tools/call", Status: 200, Media: conformance.MediaJSON, Era: conformance.Era2025, Code: intp(-32602), Tools: 2},
		// Class 3: over the size bound is not classified from a part.
		{Name: "5 MB error", Server: calls(Answer(200, "application/json",
			`{"jsonrpc":"2.0","id":{{id}},"error":{"code":-32602,"message":"`+strings.Repeat("x", 5<<20)+`"}}`)),
			Verdict: conformance.Unverified, Category: conformance.ReplyTooLarge, Stage: "tools/call", Status: 200, Media: conformance.MediaJSON, Era: conformance.Era2025, Tools: 2},
		{Name: "5 MB isError result", Server: calls(Answer(200, "application/json",
			`{"jsonrpc":"2.0","id":{{id}},"result":{"isError":true,"content":[{"type":"text","text":"`+strings.Repeat("x", 5<<20)+`"}]}}`)),
			Verdict: conformance.Unverified, Category: conformance.ReplyTooLarge, Stage: "tools/call", Status: 200, Media: conformance.MediaJSON, Era: conformance.Era2025, Tools: 2},
		{Name: "padded event stream", Server: calls(Answer(200, "text/event-stream",
			strings.Repeat(": padding\n", 600<<10)+"data: {\"jsonrpc\":\"2.0\",\"id\":{{id}},\"error\":{\"code\":-32602,\"message\":\"x\"}}\n\n")),
			Verdict: conformance.Unverified, Category: conformance.ReplyTooLarge, Stage: "tools/call", Status: 200, Media: conformance.MediaEventStream, Era: conformance.Era2025, Tools: 2},
		{Name: "small bound", Server: &Fake{Tools: tools}, Opts: conformance.Options{MaxBodyBytes: 40},
			Verdict: conformance.Unverified, Category: conformance.ReplyTooLarge, Stage: "initialize", Status: 200, Media: conformance.MediaJSON, Era: conformance.Era2025},
		// Class 4: a malformed parameter does not hide the media type.
		{Name: "event stream, malformed parameter", Server: calls(Answer(200, "text/event-stream; charset",
			"data: {\"jsonrpc\":\"2.0\",\"id\":{{id}},\"error\":{\"code\":-32602,\"message\":\"x\"}}\n\n")),
			Verdict: conformance.Verified, Stage: "tools/call", Status: 200, Media: conformance.MediaEventStream, Era: conformance.Era2025, Code: intp(-32602), Tools: 2},
		// Class 5: a 401 to server/discover without a JSON-RPC error is a
		// legacy server saying no; with one, a modern server's gate.
		{Name: "discover 401, legacy server", Server: &Fake{Tools: tools, On: map[string]func(http.ResponseWriter, string){
			"server/discover": Answer(401, "application/json", `{"error":"unauthorized"}`)}},
			Verdict: conformance.Verified, Stage: "tools/call", Status: 200, Media: conformance.MediaJSON, Era: conformance.Era2025, Code: intp(-32602), Tools: 2},
		{Name: "discover 401 with a JSON-RPC error", Server: &Fake{Sessionless: true, Tools: tools, On: map[string]func(http.ResponseWriter, string){
			"server/discover": Answer(401, "application/json", `{"jsonrpc":"2.0","id":{{id}},"error":{"code":-32001,"message":"authentication required"}}`)}},
			Verdict: conformance.Unverified, Category: conformance.CredentialGated, Stage: "discover", Status: 401, Media: conformance.MediaJSON},
		// Class 6: an integer code of any size.
		{Name: "code 2^31", Server: calls(Answer(200, "application/json", `{"jsonrpc":"2.0","id":{{id}},"error":{"code":2147483648,"message":"x"}}`)),
			Verdict: conformance.Verified, Stage: "tools/call", Status: 200, Media: conformance.MediaJSON, Era: conformance.Era2025, Code: intp(1 << 31), Tools: 2},
		{Name: "code 2^53+1", Server: calls(Answer(200, "application/json", `{"jsonrpc":"2.0","id":{{id}},"error":{"code":9007199254740993,"message":"x"}}`)),
			Verdict: conformance.Verified, Stage: "tools/call", Status: 200, Media: conformance.MediaJSON, Era: conformance.Era2025, Tools: 2},
		// Class 7: the id must be the request's (as a number) or null.
		{Name: "error without id", Server: calls(Answer(200, "application/json", `{"jsonrpc":"2.0","error":{"code":-32602,"message":"x"}}`)),
			Verdict: conformance.ObservedRisk, Category: conformance.JSONRPCMalformed, Stage: "tools/call", Status: 200, Media: conformance.MediaJSON, Era: conformance.Era2025, Code: intp(-32602), Tools: 2},
		{Name: "error with the id as a string", Server: calls(Answer(200, "application/json", `{"jsonrpc":"2.0","id":"{{id}}","error":{"code":-32602,"message":"x"}}`)),
			Verdict: conformance.ObservedRisk, Category: conformance.JSONRPCMalformed, Stage: "tools/call", Status: 200, Media: conformance.MediaJSON, Era: conformance.Era2025, Code: intp(-32602), Tools: 2},
		{Name: "error with another id", Server: calls(Answer(200, "application/json", `{"jsonrpc":"2.0","id":99,"error":{"code":-32602,"message":"x"}}`)),
			Verdict: conformance.ObservedRisk, Category: conformance.JSONRPCMalformed, Stage: "tools/call", Status: 200, Media: conformance.MediaJSON, Era: conformance.Era2025, Code: intp(-32602), Tools: 2},
		{Name: "error with a null id", Server: calls(Answer(200, "application/json", `{"jsonrpc":"2.0","id":null,"error":{"code":-32602,"message":"x"}}`)),
			Verdict: conformance.Verified, Stage: "tools/call", Status: 200, Media: conformance.MediaJSON, Era: conformance.Era2025, Code: intp(-32602), Tools: 2},
		// Class 8: error or result without jsonrpc does not claim JSON-RPC.
		{Name: "402 error without jsonrpc", Server: calls(Answer(402, "application/json", `{"error":{"code":402,"message":"payment required"}}`)),
			Verdict: conformance.ObservedRisk, Category: conformance.NotJSONRPC, Stage: "tools/call", Status: 402, Media: conformance.MediaJSON, Era: conformance.Era2025, Tools: 2},
		{Name: "result without jsonrpc", Server: calls(Answer(200, "application/json", `{"id":{{id}},"result":{"isError":true}}`)),
			Verdict: conformance.ObservedRisk, Category: conformance.NotJSONRPC, Stage: "tools/call", Status: 200, Media: conformance.MediaJSON, Era: conformance.Era2025, Tools: 2},
		// Class 9: an event stream whose data is not JSON.
		{Name: "event stream of text", Server: calls(Answer(200, "text/event-stream", "event: message\ndata: Internal Server Error\n\n")),
			Verdict: conformance.ObservedRisk, Category: conformance.NotJSON, Stage: "tools/call", Status: 200, Media: conformance.MediaEventStream, Era: conformance.Era2025, Tools: 2},
		// Class 11: 503 with Retry-After asks to come back later; without
		// it, it is an ordinary reply. An old HTTP+SSE server gets a hint.
		{Name: "503 with Retry-After", Server: calls(func(w http.ResponseWriter, id string) {
			w.Header().Set("Retry-After", "3600")
			WriteJSON(w, 503, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32000,"message":"overloaded"}}`)
		}), Verdict: conformance.Unverified, Category: conformance.RateLimited, Stage: "tools/call", Status: 503, Media: conformance.MediaJSON, Era: conformance.Era2025, Tools: 2},
		{Name: "503 without Retry-After", Server: calls(Answer(503, "text/html", "<h1>Service Unavailable</h1>")),
			Verdict: conformance.ObservedRisk, Category: conformance.NotJSON, Stage: "tools/call", Status: 503, Media: conformance.MediaHTML, Era: conformance.Era2025, Tools: 2},
		{Name: "old HTTP+SSE transport", Server: legacySSE{},
			Verdict: conformance.Unverified, Category: conformance.ToolsListUnreadable, Stage: "initialize", Status: 405, Media: conformance.MediaText, Era: conformance.Era2025,
			Detail: "old HTTP+SSE transport"},

		// Issue 22: mcp_name_header, asked of 2026-07-28 servers only.
		{Name: "2026-07-28 lenient server", Server: &Fake{Sessionless: true, LenientName: true, Tools: tools},
			Verdict: conformance.Verified, Stage: "tools/call", Status: 200, Media: conformance.MediaJSON, Era: conformance.Era2026, Code: intp(-32602), Tools: 2,
			NameHeader: conformance.Lenient},
		{Name: "2026-07-28 lenient server, risky", Server: &Fake{Sessionless: true, LenientName: true, Tools: tools, On: map[string]func(http.ResponseWriter, string){
			"tools/call": Answer(200, "application/json", `{"jsonrpc":"2.0","id":{{id}},"result":{"content":[],"isError":true}}`)}},
			Verdict: conformance.ObservedRisk, Category: conformance.ResultIsError, Stage: "tools/call", Status: 200, Media: conformance.MediaJSON, Era: conformance.Era2026, Tools: 2,
			NameHeader: conformance.Lenient},
		{Name: "2026-07-28 server refusing the mismatch with 400 and -32602", Server: &Fake{Sessionless: true, Tools: tools,
			OnMismatch: Answer(400, "application/json", `{"jsonrpc":"2.0","id":{{id}},"error":{"code":-32602,"message":"Mcp-Name does not match params.name"}}`)},
			Verdict: conformance.Verified, Stage: "tools/call", Status: 200, Media: conformance.MediaJSON, Era: conformance.Era2026, Code: intp(-32602), Tools: 2,
			NameHeader: conformance.Strict},
		{Name: "2026-07-28 server refusing the mismatch with -32020 and 200", Server: &Fake{Sessionless: true, Tools: tools,
			OnMismatch: Answer(200, "application/json", `{"jsonrpc":"2.0","id":{{id}},"error":{"code":-32020,"message":"header mismatch"}}`)},
			Verdict: conformance.Verified, Stage: "tools/call", Status: 200, Media: conformance.MediaJSON, Era: conformance.Era2026, Code: intp(-32602), Tools: 2,
			NameHeader: conformance.Strict},
		{Name: "2026-07-28 server failing the mismatch with a 500 page", Server: &Fake{Sessionless: true, Tools: tools,
			OnMismatch: Answer(500, "text/html", "<h1>Internal Server Error</h1>")},
			Verdict: conformance.Verified, Stage: "tools/call", Status: 200, Media: conformance.MediaJSON, Era: conformance.Era2026, Code: intp(-32602), Tools: 2,
			NameHeader: conformance.Undetermined},
		{Name: "2026-07-28 server gated at the call", Server: &Fake{Sessionless: true, Tools: tools, On: map[string]func(http.ResponseWriter, string){
			"tools/call": Answer(401, "application/json", `{"jsonrpc":"2.0","id":{{id}},"error":{"code":-32001,"message":"authentication required"}}`)}},
			Verdict: conformance.Unverified, Category: conformance.CredentialGated, Stage: "tools/call", Status: 401, Media: conformance.MediaJSON, Era: conformance.Era2026, Tools: 2},
		// Issue 22: a risk is confirmed with a second made-up name.
		{Name: "two made-up names, two answers", Server: &Fake{Tools: tools, On: map[string]func(http.ResponseWriter, string){
			"tools/call": func(w http.ResponseWriter, id string) {
				WriteJSON(w, 200, `{"jsonrpc":"2.0","id":`+id+`,"result":{"content":[],"isError":true}}`)
			}}, OnName: map[string]func(http.ResponseWriter, string){
			conformance.DefaultProbeName: Answer(200, "application/json", `{"jsonrpc":"2.0","id":{{id}},"result":{"content":[{"type":"text","text":"ok"}]}}`)}},
			Verdict: conformance.Unverified, Category: conformance.Inconsistent, Stage: "tools/call", Status: 200, Media: conformance.MediaJSON, Era: conformance.Era2025, Tools: 2,
			Detail: "result_ok, HTTP 200 (an ordinary result, as if the made-up tool had worked); __toolguard_probe_nonexistent_tool_second__ drew result_is_error"},
		{Name: "rate-limits every second call", Server: LimitsEverySecondCall(),
			Verdict: conformance.Unverified, Category: conformance.Inconsistent, Stage: "tools/call", Status: 200, Media: conformance.MediaJSON, Era: conformance.Era2025, Tools: 2,
			Detail: "drew not_jsonrpc"},

		// Stdio servers (class 10 among them): a shell script answers.
		{Name: "stdio verified", Command: stdioServer(`{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"unknown tool"}}`),
			Verdict: conformance.Verified, Stage: "tools/call", Era: conformance.Era2025, Code: intp(-32602), Tools: 1},
		{Name: "stdio result_is_error", Command: stdioServer(`{"jsonrpc":"2.0","id":4,"result":{"content":[],"isError":true}}`),
			Verdict: conformance.ObservedRisk, Category: conformance.ResultIsError, Stage: "tools/call", Era: conformance.Era2025, Tools: 1},
		{Name: "stdio over-long reply", Command: stdioServer(`{"jsonrpc":"2.0","id":4,"result":{"isError":true,"content":[{"type":"text","text":"` + strings.Repeat("x", 3000) + `"}]}}`),
			Opts:    conformance.Options{MaxBodyBytes: 2000},
			Verdict: conformance.Unverified, Category: conformance.ReplyTooLarge, Stage: "tools/call", Era: conformance.Era2025, Tools: 1},
		{Name: "stdio silent", Command: []string{"sh", "-c", "cat >/dev/null"}, Opts: conformance.Options{Timeout: time.Second},
			Verdict: conformance.Unverified, Category: conformance.Timeout, Stage: "discover"},
		{Name: "stdio not reading", Command: []string{"sleep", "120"}, Opts: conformance.Options{Timeout: time.Second},
			Verdict: conformance.Unverified, Category: conformance.Timeout, Stage: "discover"},
		// (It went away at discover, so it was started again and asked as a
		// legacy server: it went away at initialize too, and the report of
		// discover stands, no era guessed.)
		{Name: "stdio exits", Command: []string{"sh", "-c", "echo 'cannot open config' >&2; exit 3"},
			Verdict: conformance.Unverified, Category: conformance.Unreachable, Stage: "discover", Detail: "went away too"},
		{Name: "stdio does not start", Command: []string{"/does/not/exist"},
			Verdict: conformance.Unverified, Category: conformance.Unreachable, Detail: "does not start"},
	}
}

// CloseCallsLimited is a 2025-11-25 server that answers a made-up tool
// with isError, but a tools/call that comes within window of the one
// before with a rate-limit message of its own (HTTP 200, not JSON-RPC), as
// the server of the era-probe article did: asked twice unspaced, its two
// answers differ; spaced by more than window, they agree. It reads the
// time from now, the clock the test spaces the calls by (a fleet's
// pacer's, see conformance.WithClock): on the wall clock the answers would
// depend on how loaded the machine is.
func CloseCallsLimited(window time.Duration, now func() time.Time) http.Handler {
	var mu sync.Mutex
	var last time.Time
	return limited(func() bool {
		mu.Lock()
		defer mu.Unlock()
		t := now()
		close := !last.IsZero() && t.Sub(last) < window
		last = t
		return close
	})
}

// LimitsEverySecondCall is the server of CloseCallsLimited with every
// second call coming too close: a check's made-up call draws isError, its
// second made-up name the rate-limit message, whatever the time between
// them (the zoo's outcomes depend on no clock), and the next check of the
// same server is answered alike.
func LimitsEverySecondCall() http.Handler {
	var calls atomic.Int64
	return limited(func() bool { return calls.Add(1)%2 == 0 })
}

// limited is a server answering a tools/call with the rate-limit message
// when tooClose says so, else with isError.
func limited(tooClose func() bool) http.Handler {
	return &Fake{Tools: []string{"echo", "add"}, On: map[string]func(http.ResponseWriter, string){
		"tools/call": func(w http.ResponseWriter, id string) {
			if tooClose() {
				WriteJSON(w, 200, `{"error":"too many requests, slow down"}`)
				return
			}
			WriteJSON(w, 200, `{"jsonrpc":"2.0","id":`+id+`,"result":{"content":[{"type":"text","text":"Unknown tool"}],"isError":true}}`)
		}}}
}

// redirectCall answers the first tools/call with a redirect of the given
// status (and an empty body) to /moved, where f answers it; a GET there
// gets a well-formed JSON-RPC error the checker must not take for the
// answer.
func redirectCall(status int, f *Fake) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			WriteJSON(w, 200, `{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"bait: this answers a GET"}}`)
			return
		}
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path != "/moved" && bytes.Contains(body, []byte(`"tools/call"`)) {
			w.Header().Set("Location", "/moved")
			w.WriteHeader(status)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		f.ServeHTTP(w, r)
	})
}

// legacySSE is a server of the 2024-11-05 HTTP+SSE transport: a GET opens
// an event stream whose first event names the endpoint for POSTs; a POST
// to the stream's URL is not allowed.
type legacySSE struct{}

func (legacySSE) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(405)
		io.WriteString(w, "Method Not Allowed")
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	io.WriteString(w, "event: endpoint\ndata: /messages?sessionId=1\n\n")
	w.(http.Flusher).Flush()
	<-r.Context().Done()
}

// stdioServer is a stdio MCP server written in sh: it answers
// server/discover with -32601 (a 2025-11-25 server), initialize, a list of
// one tool, and each made-up call with call, which must carry id 4 (the
// checker's ids are 1 for discover, 2 for initialize, 3 for the list); a
// later call (the confirmation) gets the same answer with its own id.
// Lines on standard output that are not replies, and lines on standard
// error, come with them, as real servers write them.
func stdioServer(call string) []string {
	script := `echo starting >&2
while IFS= read -r line; do
  case "$line" in
  *'"server/discover"'*) printf '%s\n' '{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}' ;;
  *'"initialize"'*) echo 'a log line on stdout'; printf '%s\n' '{"jsonrpc":"2.0","id":2,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"sh","version":"1"}}}' ;;
  *'"tools/list"'*) printf '%s\n' '{"jsonrpc":"2.0","method":"notifications/message","params":{}}' '{"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}}' ;;
  *'"tools/call"'*) id=$(printf '%s\n' "$line" | sed -n 's/.*"id":\([0-9]*\).*/\1/p'); printf '%s\n' "$CALL" | sed "s/\"id\":4/\"id\":$id/" ;;
  esac
done`
	return []string{"env", "CALL=" + call, "sh", "-c", script}
}

// TimeoutBound is what a check of a timeout case must take less than: the
// default timeout of one request (15 s), so the option's 1 s applied.
// Well above the 1 s plus the stdio ending that it takes, it is a bound,
// not a claim about time: a loaded machine does not cross it.
const TimeoutBound = 15 * time.Second

// Check returns an error when rep is not the report the case calls for.
func (c Case) Check(rep conformance.Report) error {
	if rep.Verdict != c.Verdict || rep.Category != c.Category || rep.Stage != c.Stage ||
		rep.HTTPStatus != c.Status || rep.MediaType != c.Media || rep.Era != c.Era || rep.Tools != c.Tools {
		return fmt.Errorf("got  %s stage=%s status=%d media=%s era=%s tools=%d\nwant %s %s stage=%s status=%d media=%s era=%s tools=%d",
			rep, rep.Stage, rep.HTTPStatus, rep.MediaType, rep.Era, rep.Tools,
			c.Verdict, c.Category, c.Stage, c.Status, c.Media, c.Era, c.Tools)
	}
	if (rep.ErrorCode == nil) != (c.Code == nil) || rep.ErrorCode != nil && *rep.ErrorCode != *c.Code {
		return fmt.Errorf("error code %v, want %v", rep.ErrorCode, c.Code)
	}
	if !strings.Contains(rep.Detail, c.Detail) {
		return fmt.Errorf("detail %q lacks %q", rep.Detail, c.Detail)
	}
	want := c.NameHeader
	if want == "" {
		want = conformance.NotApplicable
	}
	if nh := rep.NameHeader; nh.Check != conformance.NameHeaderCheck || nh.State != want {
		return fmt.Errorf("%s, want mcp_name_header %s", nh, want)
	}
	if (rep.Confirmation != nil) != (rep.Verdict == conformance.ObservedRisk || rep.Category == conformance.Inconsistent) {
		return fmt.Errorf("confirmation %+v for %s", rep.Confirmation, rep)
	}
	if c.Category == conformance.Timeout && rep.Duration >= TimeoutBound {
		return fmt.Errorf("a %v timeout took %v: not less than the default timeout", c.Opts.Timeout, rep.Duration)
	}
	return nil
}

// StdioServer is a stdio server (a shell script) that answers tools/call
// with call, its id set to the request's.
func StdioServer(call string) []string { return stdioServer(call) }
