// Package zoo is the fixture zoo of the conformance tests: local MCP
// servers that answer a made-up tool in each way the checker must tell
// apart, with the report each must produce. The package's tests and the
// command's tests share it.
package zoo

import (
	"fmt"
	"sync/atomic"

	"encoding/json"
	"github.com/toolguard/toolguard/conformance"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// Fake is a configurable MCP server for the fixture zoo. By default it is a
// well-behaved 2025-11-25 server with sessions whose tools/call of an
// unknown tool answers -32602.
type Fake struct {
	Modern   bool     // answer server/discover with 2026-07-28, enforce its headers
	Tools    []string // registered tools
	PageSize int      // > 0: paginate tools/list

	// On overrides the answer to a method; it gets the raw id.
	On map[string]func(w http.ResponseWriter, id string)

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
	f.mu.Lock()
	f.methods = append(f.methods, m.Method)
	if m.Method == "tools/call" {
		f.names = append(f.names, m.Params.Name)
	}
	if a := r.Header.Get("Authorization"); a != "" {
		f.authSeen = append(f.authSeen, a)
	}
	f.mu.Unlock()
	id := string(m.ID)

	modernReq := r.Header.Get("Mcp-Protocol-Version") == "2026-07-28"
	if modernReq && !f.Modern {
		w.WriteHeader(400) // a 2025-era server: an empty 400
		return
	}
	if f.Modern {
		if !modernReq || m.Params.Meta.Version != "2026-07-28" || r.Header.Get("Mcp-Method") != m.Method ||
			m.Method == "tools/call" && r.Header.Get("Mcp-Name") != m.Params.Name {
			WriteJSON(w, 400, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32020,"message":"header mismatch"}}`)
			return
		}
	}
	if h, ok := f.On[m.Method]; ok {
		h(w, id)
		return
	}
	switch m.Method {
	case "server/discover":
		if !f.Modern {
			WriteJSON(w, 200, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32601,"message":"method not found"}}`)
			return
		}
		WriteJSON(w, 200, `{"jsonrpc":"2.0","id":`+id+`,"result":{"supportedVersions":["2026-07-28","2025-11-25"],"capabilities":{"tools":{}}}}`)
	case "initialize":
		w.Header().Set("Mcp-Session-Id", "s-1")
		WriteJSON(w, 200, `{"jsonrpc":"2.0","id":`+id+`,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"1"}}}`)
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
	Name     string
	Server   http.Handler
	Opts     conformance.Options
	Verdict  conformance.Verdict
	Category conformance.Category
	Stage    string
	Status   int
	Media    string
	Era      string
	Code     *int
	Tools    int
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
			Verdict: conformance.Unverified, Category: conformance.RateLimited, Stage: "initialize", Status: 429, Media: conformance.MediaNone, Era: conformance.Era2025},
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
		{Name: "2026-07-28 server", Server: &Fake{Modern: true, Tools: tools},
			Verdict: conformance.Verified, Stage: "tools/call", Status: 200, Media: conformance.MediaJSON, Era: conformance.Era2026, Code: intp(-32602), Tools: 2},
		{Name: "2026-07-28 server, risky", Server: &Fake{Modern: true, Tools: tools, On: map[string]func(http.ResponseWriter, string){
			"tools/call": Answer(200, "application/json", `{"jsonrpc":"2.0","id":{{id}},"result":{"content":[],"isError":true}}`)}},
			Verdict: conformance.ObservedRisk, Category: conformance.ResultIsError, Stage: "tools/call", Status: 200, Media: conformance.MediaJSON, Era: conformance.Era2026, Tools: 2},
		{Name: "2025 server, era forced", Server: &Fake{Tools: tools}, Opts: conformance.Options{Era: conformance.Era2025},
			Verdict: conformance.Verified, Stage: "tools/call", Status: 200, Media: conformance.MediaJSON, Era: conformance.Era2025, Code: intp(-32602), Tools: 2},
	}
}

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
	return nil
}
