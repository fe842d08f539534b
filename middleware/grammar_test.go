package toolguard

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// textResult is a result whose one content is text, with isError or not.
func textResult(id, text string, isError bool) string {
	q, _ := json.Marshal(text)
	r := `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":` + string(q) + `}]`
	if isError {
		r += `,"isError":true`
	}
	return r + `}}`
}

// Servers write their own dispatch and answer an unknown tool in their
// own words: each is recognized by what it says, in the kind of answer it
// comes in, with what the caller's list says of the name (issue 32; the
// real servers each shape comes from are in docs/RULES.md §2).
func TestRecognizesNotFoundInTheirOwnWords(t *testing.T) {
	const X = "get_wether"
	type want struct{ unseen, absent, listed bool }
	every, confirmed, never := want{true, true, false}, want{false, true, false}, want{}
	for _, tc := range []struct {
		what, reply string
		want        want
	}{
		// @wonderwhy-er/desktop-commander 0.2.52
		{"isError, Error: prefix", textResult("1", "Error: Unknown tool: "+X, true), every},
		// cclsp 0.7.0: the third kind, a success carrying the error
		{"result without isError, whole text", textResult("1", "Error: Unknown tool: "+X, false), confirmed},
		{"result without isError, with more", textResult("1", "Unknown tool: "+X+". Try again later, or ask for help.", false), never},
		// @modelcontextprotocol/server-slack 2025.4.25
		{"JSON text in a result", textResult("1", `{"error":"Unknown tool: `+X+`"}`, false), confirmed},
		{"JSON text in an isError", textResult("1", `{"error":{"message":"Tool '`+X+`' not found"}}`, true), every},
		// mcp-framework 0.2.22
		{"-32603 with the list after", errorReply("1", -32603, "Unknown tool: "+X+". Available tools: echo"), every},
		{"markdown heading", textResult("1", "### Error\n\nTool \""+X+"\" not found", true), every},
		{"Error executing tool", textResult("1", "Error executing tool "+X+": Unknown tool: "+X, true), every},
		// mcp-discord 1.3.4: the prefix without the tool's name
		{"Error executing tool:", textResult("1", "Error executing tool: Unknown tool: "+X, true), every},
		{"Failed to call tool:", errorReply("1", -32603, "Failed to call tool: Tool "+X+" not found"), every},
		// @dangahagan/weather-mcp 1.23.0: a tool turned off, unknown to a
		// caller whose list lacks it
		{"not enabled", textResult("1", "Error: Tool '"+X+"' is not enabled. Please check your ENABLED_TOOLS configuration.", true), confirmed},
		{"disabled", errorReply("1", -32602, "tool '"+X+"' is disabled"), confirmed},
		// A tool's own word that it cannot run now: the tool may be one
		// the server has, so only a list that lacks it makes it unknown.
		{"not available now", textResult("1", "Tool "+X+" is not available: no display is attached to this host", true), confirmed},
		{"not available", errorReply("1", -32602, "Tool '"+X+"' is not available."), confirmed},
		{"not supported", textResult("1", "Tool "+X+" not supported on this platform", true), confirmed},
		{"not registered", errorReply("1", -32602, "Tool "+X+" is not registered"), every},
		// "X not found", no tool named as such
		{"a name not found", textResult("1", X+" not found", true), confirmed},
		// @notionhq/notion-mcp-server 2.5.2; a tool named after an upstream
		// JSON-RPC method may fail in the same words
		{"a method not found", errorReply("1", -32603, "Method "+X+" not found"), confirmed},
		{"the tool was not found", errorReply("1", -32602, "The tool "+X+" was not found."), every},
		{"does not exist", textResult("1", "Tool '"+X+"' does not exist", true), every},
		{"no such tool", errorReply("1", -32601, "No such tool: "+X), every},
		// Found on npm on 2026-12-07: @infisical/mcp 0.0.24, claude-historian-mcp
		// 1.0.3 (an McpError's name and the tool alone before the colon),
		// mcp-context-manager 7.5.0 (a symbol first), fast-filesystem-mcp 3.5.2
		{"unrecognized tool name", errorReply("1", -32603, "Unrecognized tool name: "+X), every},
		{"an error's name", errorReply("1", -32603, "MCP error -32603: Error executing "+X+": McpError: MCP error -32601: Unknown tool: "+X), every},
		{"a symbol first", textResult("1", "❌ Error: Unknown tool: "+X, false), confirmed},
		{"not implemented", errorReply("1", -32603, "Tool not implemented: "+X), confirmed},
		{"not available, phrase first", errorReply("1", -32603, "Tool not available: "+X), confirmed},
		{"an error's name, nothing unknown", textResult("1", "TypeError: Cannot read properties of undefined (reading '"+X+"')", true), never},
		// Read from the SDKs' source on 2026-12-07: Gradio 6.25.0, jlowin/fastmcp
		// 3.0.0rc2 and 2.14.5 with ErrorHandlingMiddleware, php-mcp/server
		// 3.3.0, the Swift SDK 0.12.0's MCPError.invalidParams, laravel/mcp
		{"words between the phrase and the name", textResult("1", "Unknown tool for this Gradio app: "+X, true), every},
		{"a middleware's not found", textResult("1", "Not found: Unknown tool: '"+X+"'", true), every},
		{"a middleware's resource not found", textResult("1", "Resource not found: Unknown tool: '"+X+"'", true), every},
		{"JSON-RPC's method not found first", errorReply("1", -32601, "Method not found: Tool '"+X+"' not found."), every},
		{"JSON-RPC's invalid params first", errorReply("1", -32602, "Invalid params: Unknown tool: "+X), every},
		{"JSON-RPC's internal error first", errorReply("1", -32603, "Internal error: Unknown tool: "+X), every},
		{"in brackets", errorReply("1", -32602, "Tool ["+X+"] not found."), every},
		// @douyinfe/semi-mcp 1.0.22 over HTTP, on 2026-12-07: "unknown tool" in Chinese
		{"in Chinese", errorReply("1", -32603, "未知的工具: "+X), every},
		{"in Chinese, a full-width colon", textResult("1", "未知工具："+X, true), every},
		{"in Chinese, another name", errorReply("1", -32603, "未知的工具: "+X+"_v2"), never},
		// Found on npm on 2026-12-07: @mseep/linear-mcp 78.0.1,
		// @anaisbetts/mcp-installer 0.5.0
		{"words ending with error first", textResult("1", "Linear API error: MCP error -32601: Unknown tool: "+X, true), every},
		{"words starting with Error first", textResult("1", "Error setting up package: Error: Unknown tool: "+X, true), every},
		{"not a known tool", textResult("1", "`"+X+"` is not a known tool (call tools/list)", true), every},
		{"with diagnostics after", errorReply("1", -32603, "Tool not found: "+X+"\n  at dispatch (server.js:12)"), every},
		// Answers that name no tool: only where the list confirms.
		{"bare, error", errorReply("1", -32602, "tool not found"), confirmed},
		{"bare, isError", textResult("1", "Unknown tool", true), confirmed},
		{"bare, result", textResult("1", "Unknown tool", false), never},
		// Execution errors that read like not-found, never.
		{"a file", textResult("1", "Error: File not found: /tmp/"+X, true), never},
		{"a user", textResult("1", "User "+X+" not found", true), never},
		{"a permission", textResult("1", "Permission denied: "+X, true), never},
		{"another tool", textResult("1", "Unknown tool: search (called by "+X+")", true), never},
		{"a longer name", errorReply("1", -32602, "Unknown tool: "+X+"_v2"), never},
		{"a resource", errorReply("1", -32002, "Resource "+X+" not found"), never},
		{"not found after other words", textResult("1", "The city for "+X+" was not found", true), never},
		{"an argument", textResult("1", "Invalid arguments for tool "+X+": city not found", true), never},
		{"a sentence before the colon", textResult("1", "Error while the gateway was looking for an upstream to ask: Unknown tool: "+X, true), never},
		{"a thing not found, after a middleware's words", textResult("1", "Not found: "+X, true), never},
		{"invalid params about an argument", errorReply("1", -32602, "Invalid params: "+X+": city is required"), never},
		{"words between, no colon", textResult("1", "Unknown tool for "+X, true), never},
		// A tool that exists but not here (a review's cases): only "Unknown
		// tool" takes words between, a few and one clause.
		{"unsupported for a plan", textResult("1", "Unsupported tool for your plan: "+X, true), never},
		{"not found for a workspace", textResult("1", "Tool not found for workspace acme: "+X, true), never},
		{"words between, across a sentence", textResult("1", "Unknown tool for this mode. Available tools: "+X, true), never},
		{"a label with more than a name before the colon", textResult("1", "Not found any route for this request: Unknown tool: "+X, true), never},
		{"words between, another name", textResult("1", "Unknown tool for "+X+": search", true), never},
		{"in brackets, another name", errorReply("1", -32602, "Tool ["+X+"_v2] not found."), never},
		// Found on npm on 2026-12-07: @twilio-alpha/mcp 0.7.0 (its OpenAPI
		// server's own dispatch), moltbook-http-mcp 1.1.1
		{"in parentheses", errorReply("1", -32603, "Tool ("+X+") not found: undefined"), every},
		{"in parentheses, another name", errorReply("1", -32603, "Tool ("+X+"_v2) not found: "+X), never},
		{"in guillemets", textResult("1", "Unknown tool: «"+X+"»", true), every},
		{"unknown method", textResult("1", "Error: Unknown method: "+X, true), confirmed},
		{"unknown method, another name", textResult("1", "Error: Unknown method: tools/call", true), never},
	} {
		for _, c := range []struct {
			ls   listState
			want bool
		}{{listUnseen, tc.want.unseen}, {listAbsent, tc.want.absent}, {listHas, tc.want.listed}} {
			a, ok := readCallAnswer([]byte(tc.reply), []byte("1"), X, nil)
			got := ok && a.notFound(X, stateIs(c.ls))
			if got != c.want {
				t.Errorf("%s (list %d): %v, want %v: %s", tc.what, c.ls, got, c.want, tc.reply)
			}
		}
	}
}

// A name in the caller's list is never translated, even in an SDK's own
// not-found words: the tool's own handler may write the same text (a
// gateway passing on a downstream server's answer, a tool that fails in
// the Python SDK's words). Unlisted, or with no list, the answer is
// translated.
func TestListedNameIsNeverTranslatedEvenInAnSDKsOwnWords(t *testing.T) {
	for _, s := range notFoundShapes {
		reply := s.reply("1", "victim")
		a, ok := readCallAnswer([]byte(reply), []byte("1"), "victim", nil)
		if !ok || a.notFound("victim", stateIs(listHas)) {
			t.Errorf("%s: translated for a listed name: %s", s.Server, reply)
		}
		if !a.notFound("victim", stateIs(listUnseen)) || !a.notFound("victim", stateIs(listAbsent)) {
			t.Errorf("%s: not translated without the name listed: %s", s.Server, reply)
		}
	}
	a, _ := readCallAnswer([]byte(errorReply("1", -32603, "The tool victim was not found.")), []byte("1"), "victim", nil)
	if a.notFound("victim", stateIs(listHas)) {
		t.Error("a grammar match translated for a listed name")
	}
}

// "X not found" names no tool: from the tool document, "document not
// found: id 42" is its own error about a document. It is read as the
// server's not-found answer only where the caller's list shows the name
// absent; with no list (expired, dropped, never seen) it passes.
func TestNamelessNotFoundOfAToolIsReadOnlyAgainstAList(t *testing.T) {
	now := time.Now()
	g := mustGuard(t, Options{Tools: unsure{}})
	g.seen.now = func() time.Time { return now }
	seeList(t, g, nil, "document", "search")
	own := isErrorReply("9", "document not found: id 42")
	next := answering(200, "application/json", own)
	if w := serve(g, next, newRequest("POST", call("9", `"document"`), nil)); w.Body.String() != own {
		t.Fatalf("setup: with the list seen: %s", w.Body)
	}
	now = now.Add(11 * time.Minute)
	if w := serve(g, next, newRequest("POST", call("9", `"document"`), nil)); w.Body.String() != own {
		t.Errorf("the tool's own execution error became %s", w.Body)
	}
}

// cutFold's first-byte check never turns away what strings.EqualFold
// takes: every phrase of the grammar, in each letter case of each byte,
// with Unicode letters that fold to ASCII ones (the Kelvin sign, long s),
// and with its first byte changed to every other byte.
func TestCutFoldTakesWhatEqualFoldTakes(t *testing.T) {
	var phrases []string
	phrases = append(phrases, namedAfter[:]...)
	phrases = append(phrases, namedBefore[:]...)
	phrases = append(phrases, namedUnavailable[:]...)
	phrases = append(phrases, "mcp error ", "the tool ", "tool ", "method ", ":", "：", "=", "-", "named", "called")
	plain := func(s, p string) bool { return len(s) >= len(p) && strings.EqualFold(s[:len(p)], p) }
	check := func(s, p string) {
		if _, ok := cutFold(s, p); ok != plain(s, p) {
			t.Errorf("cutFold(%q, %q) = %v, EqualFold says %v", s, p, ok, !ok)
		}
	}
	for _, p := range phrases {
		for i := range len(p) {
			b := []byte(p)
			b[i] ^= 0x20
			check(string(b)+" x", p)
			for c := range 256 {
				b := []byte(p)
				b[0] = byte(c)
				check(string(b), p)
			}
		}
		for _, sub := range [][2]string{{"k", "\u212a"}, {"s", "\u017f"}, {"K", "\u212a"}} {
			check(strings.Replace(p, sub[0], sub[1], 1)+"   ", p)
		}
		check(strings.ToUpper(p), p)
	}
}
