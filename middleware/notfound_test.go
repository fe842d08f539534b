package toolguard

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/toolguard/toolguard/internal/mcpwire"
)

// errorReply and isErrorReply build replies as the SDKs write them.
func errorReply(id string, code int, msg string) string {
	m, _ := json.Marshal(msg)
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}`, id, code, m)
}

// errorDataReply is an error reply whose data is the string data.
func errorDataReply(id string, code int, msg, data string) string {
	m, _ := json.Marshal(msg)
	d, _ := json.Marshal(data)
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s,"data":%s}}`, id, code, m, d)
}

func isErrorReply(id, text string) string {
	t, _ := json.Marshal(text)
	return fmt.Sprintf(`{"result":{"content":[{"type":"text","text":%s}],"isError":true},"jsonrpc":"2.0","id":%s}`, t, id)
}

// A notFoundShape is one way a server answers a tools/call for a tool it
// does not have, as measured or read from its source: docs/RULES.md §2
// has the same table. The guard holds no table: it reads what an answer
// says (matchNotFound), and these tests hold every shape to that reading.
type notFoundShape struct {
	Server   string // the SDK or server
	Versions string // the versions the shape was measured on (or read from, see Source)
	// IsError: the answer is a result with isError: true and this text as
	// its only content; otherwise a JSON-RPC error with this message.
	IsError bool
	Code    int    // the JSON-RPC error code (0 for an isError result)
	Text    string // the message or text, with %s where the tool name goes
	// Data is set for an error that names the tool in its data (a string,
	// with %s where the tool name goes) instead of its message (Text, then
	// a fixed message).
	Data   string
	Source string // "measured" (run here), or where the shape was read
}

// notFoundShapes are the not-found answers of the SDKs the guard knows.
// An SDK whose answer does not name the tool (the Rust SDK's -32602 "tool
// not found") is not among them: it is translated only where the
// caller's list shows the name absent.
var notFoundShapes = []notFoundShape{
	{Server: "mark3labs/mcp-go", Versions: "v0.15 … v1.2.1", Code: -32602, Text: "tool '%s' not found: tool not found", Source: "measured"},
	{Server: "modelcontextprotocol/go-sdk", Versions: "v1.1 … v1.8.0", Code: -32602, Text: "unknown tool %q", Source: "measured"},
	{Server: "TypeScript SDK v1 (@modelcontextprotocol/sdk)", Versions: "1.21.0 … 1.32.2", IsError: true, Text: "MCP error -32602: Tool %s not found", Source: "measured"},
	{Server: "TypeScript SDK v2 (@modelcontextprotocol/server)", Versions: "2.4.0", Code: -32602, Text: "Tool %s not found", Source: "measured"},
	{Server: "npm fastmcp", Versions: "4.20.16", Code: -32601, Text: "MCP error -32601: Unknown tool: %s", Source: "measured"},
	{Server: "npm fastmcp, edge runtime (fastmcp/edge)", Versions: "4.20.16", Code: -32602, Text: "Tool not found: %s", Source: "measured"},
	{Server: "Python SDK (mcp, FastMCP, MCPServer; jlowin/fastmcp 2.x)", Versions: "mcp v1.3 … v1.29, v2.0.0; fastmcp 2.0 … 2.14", IsError: true, Text: "Unknown tool: %s", Source: sourceNoPyPI},
	{Server: "jlowin/fastmcp 3", Versions: "3.0.0rc2", IsError: true, Text: "Unknown tool: '%s'", Source: sourceNoPyPI},
	{Server: "jlowin/fastmcp 3, ErrorHandlingMiddleware", Versions: "3.0.0rc2", IsError: true, Text: "Not found: Unknown tool: '%s'", Source: sourceNoPyPI},
	{Server: "jlowin/fastmcp 2, ErrorHandlingMiddleware", Versions: "2.14.5", IsError: true, Text: "Resource not found: Unknown tool: '%s'", Source: sourceNoPyPI},
	{Server: "Gradio (gradio.mcp)", Versions: "6.25.0", IsError: true, Text: "Unknown tool for this Gradio app: %s", Source: sourceNoPyPI},
	{Server: "C# SDK (ModelContextProtocol)", Versions: "0.3.0-preview.1 … 2.2.0", Code: -32602, Text: "Unknown tool: '%s'", Source: sourceRead},
	{Server: "Java SDK (io.modelcontextprotocol)", Versions: "0.13.0 … 2.0.1", Code: -32602, Text: "Unknown tool: invalid_tool_name", Data: "Tool not found: %s", Source: sourceRead},
	{Server: "Java SDK (io.modelcontextprotocol)", Versions: "… 0.12", Code: -32603, Text: "Tool not found: %s", Source: sourceRead},
	{Server: "Kotlin SDK", Versions: "0.7.5 … 0.14.0", IsError: true, Text: "Tool %s not found", Source: sourceRead},
	{Server: "Kotlin SDK", Versions: "… 0.7.4", Code: -32603, Text: "Tool not found: %s", Source: sourceRead},
	{Server: "Ruby SDK (mcp gem)", Versions: "0.7.1 … 1.3.0", Code: -32602, Text: "Invalid params", Data: "Tool not found: %s", Source: sourceRead},
	{Server: "Ruby SDK (mcp gem)", Versions: "0.5.0 … 0.7.0", IsError: true, Text: "Tool not found: %s", Source: sourceRead},
	{Server: "PHP SDK (mcp/sdk)", Versions: "0.1.0 … 0.7.1", Code: -32601, Text: `Tool not found: "%s".`, Source: sourceRead},
	{Server: "php-mcp/server", Versions: "3.3.0", Code: -32601, Text: "Method not found: Tool '%s' not found.", Source: sourceRead},
	{Server: "logiscape/mcp-sdk-php", Versions: "2.0.1", Code: -32602, Text: "Unknown tool: %s", Source: sourceRead},
	{Server: "laravel/mcp", Versions: "0.9.4, 1.0.0-beta.1", Code: -32602, Text: "Tool [%s] not found.", Source: sourceRead},
	{Server: "quarkus mcp-server", Versions: "1.10.7, 2.0.0.CR2", Code: -32602, Text: "Invalid tool name: %s", Source: sourceRead},
	{Server: "fast-mcp (Ruby gem)", Versions: "1.6.0", Code: -32602, Text: "Tool not found: %s", Source: sourceRead},
	{Server: "rust-mcp-sdk (tool_box!)", Versions: "1.0.1", IsError: true, Text: "Unknown tool: %s", Source: sourceRead},
	{Server: "mcp_dart", Versions: "2.4.1", Code: -32602, Text: "Tool '%s' not found", Source: sourceRead},
	{Server: "ThinkInAIXYZ/go-mcp", Versions: "v0.2.0 … v0.2.29", Code: -32603, Text: "missing tool, toolName=%s", Source: sourceRead},
}

const (
	sourceRead   = "read from source: its runtime is not installed here"
	sourceNoPyPI = "read from source: Python packages cannot be installed here (no PyPI)"
)

// reply is the shape's answer to the call id of name, as its server
// writes it.
func (s notFoundShape) reply(id, name string) string {
	switch {
	case s.IsError:
		return isErrorReply(id, shapeText(s.Text, name))
	case s.Data != "":
		return errorDataReply(id, s.Code, s.Text, shapeText(s.Data, name))
	}
	return errorReply(id, s.Code, shapeText(s.Text, name))
}

// Every shape of the table is, by what it says, a not-found answer for its
// own name and id, and for no other: for a few chosen names and 2,000
// drawn from the characters of tool names, quotes, colons, spaces within
// and non-ASCII. (A name with white space around it, in an unquoted
// shape, is not read: the grammar trims the text.)
func TestNotFoundShapesAreRecognised(t *testing.T) {
	names := []string{"nope", "get_wether", `we"ird 'name'`, "ünï/cødé", "a"}
	r := rand.New(rand.NewPCG(36, 2))
	chars := []rune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-/ :'\"é")
	for len(names) < 2005 {
		n := make([]rune, 1+r.IntN(20))
		for j := range n {
			n[j] = chars[r.IntN(len(chars))]
		}
		if name := string(n); strings.TrimSpace(name) == name {
			names = append(names, name)
		}
	}
	for _, name := range names {
		for _, s := range notFoundShapes {
			reply := s.reply("7", name)
			if !isNotFound([]byte(reply), []byte("7"), name) {
				t.Errorf("%s: %s is not recognised for %q", s.Server, reply, name)
			}
			if isNotFound([]byte(reply), []byte("8"), name) {
				t.Errorf("%s: recognised for another id", s.Server)
			}
			if isNotFound([]byte(reply), []byte("7"), name+"x") || isNotFound([]byte(reply), []byte("7"), "b"+name) {
				t.Errorf("%s: %s recognised for another name", s.Server, reply)
			}
		}
	}
}

func TestIsNotFound(t *testing.T) {
	for _, tc := range []struct {
		reply, id, name string
		want            bool
	}{
		// Errors that name the tool as unknown, in the usual spellings.
		{errorReply(`"abc"`, -32602, "Unknown tool: nope"), `"abc"`, "nope", true},
		{errorReply(`"abc"`, -32602, "Unknown tool: nope"), `"a\u0062c"`, "nope", true},
		{errorReply("1", -32601, "MCP error -32601: Unknown tool: nope"), "1", "nope", true},
		{errorReply("1", -32603, "unknown tool 'nope'"), "1", "nope", true},
		{errorReply("1", -32602, "Tool \"nope\" not found."), "1", "nope", true},
		{errorReply("1", -32602, "UNKNOWN TOOL: nope"), "1", "nope", true},
		{errorReply("1", -32603, "Tool not found: nope"), "1", "nope", true},
		{errorReply("1", -32601, `Tool not found: "nope".`), "1", "nope", true},
		{errorReply("1", -32603, "Tool not found nope"), "1", "nope", true},
		{errorReply("1", -32603, "missing tool, toolName=nope"), "1", "nope", true},
		{errorDataReply("1", -32602, "Invalid params", "Tool not found: nope"), "1", "nope", true},
		{`{"jsonrpc":"2.0","id":1,"error":{"data":"Tool not found: nope","message":"Unknown tool: invalid_tool_name","code":-32602}}`, "1", "nope", true},
		// With an explanation after the name, or in other words (issue 32).
		{errorReply("1", -32602, "Unknown tool: nope; did you mean x"), "1", "nope", true},
		{errorReply("1", -32602, "Unknown tool:nope"), "1", "nope", true},
		{isErrorReply("1", "Unknown tool: nope, try again"), "1", "nope", true},
		{isErrorReply("1", "Tool nope was not found"), "1", "nope", true},
		{isErrorReply("1", "No tool named nope"), "1", "nope", true},
		{isErrorReply("1", "Unknown tool log_error: did you mean log_event?"), "1", "log_error", true}, // not "... error:", a prefix
		{errorReply("1", -32603, "Tool not found: nope, try again"), "1", "nope", true},
		// Not a not-found answer.
		{errorReply("1", -32602, "Unknown tool: nope2"), "1", "nope", false},
		{errorReply("1", -32602, "tool 'nope' is disabled"), "1", "nope", false},
		{errorReply("1", -32602, "invalid arguments for tool nope"), "1", "nope", false},
		{isErrorReply("1", `Tool "delete_repository" requires client support for form elicitation.`), "1", "delete_repository", false},
		// Answers that do not name the called tool.
		{errorReply("1", -32602, "tool not found"), "1", "nope", false}, // the Rust SDK's: a tool's own error reads the same
		{errorReply("1", -32603, "Tool not found: other"), "1", "nope", false},
		{errorDataReply("1", -32602, "Invalid params", "Tool not found: other"), "1", "nope", false},
		{errorDataReply("1", -32602, "Invalid params", "argument nope not found"), "1", "nope", false},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"detail":"Tool not found: nope"}}}`, "1", "nope", false},
		{errorReply("1", -32603, "missing tool, toolName=nope2"), "1", "nope", false},
		{`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Unknown tool: nope"}]}}`, "1", "nope", false},
		{`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Unknown tool: nope"},{"type":"text","text":"x"}],"isError":true}}`, "1", "nope", false},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"Unknown tool: nope"}}`, "1", "nope", false},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: nope"},"result":{}}`, "1", "nope", false},
		{`{"jsonrpc":"1.0","id":1,"error":{"code":-32602,"message":"Unknown tool: nope"}}`, "1", "nope", false},
		{errorReply("1", -32602, "Unknown tool: nope"), `"1"`, "nope", false},
		{errorReply(`"1"`, -32602, "Unknown tool: nope"), "1", "nope", false},
		{`not json`, "1", "nope", false},
		// Keys in another letter case: encoding/json reads them as the
		// keys, a JavaScript client does not.
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error","data":{"x":1},"Data":"Tool not found: nope"}}`, "1", "nope", false},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error","DATA":"Tool not found: nope"}}`, "1", "nope", false},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"Message":"Unknown tool: nope"}}`, "1", "nope", false},
		{`{"jsonrpc":"2.0","id":1,"Error":{"code":-32602,"message":"Unknown tool: nope"}}`, "1", "nope", false},
		{`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","Text":"Unknown tool: nope"}],"isError":true}}`, "1", "nope", false},
		{`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Unknown tool: nope"}],"IsError":true}}`, "1", "nope", false},
		// Outside the strict subset (a number beyond float64, a key
		// twice): passed as the server wrote it.
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: nope","data":{"a":1e400}}}`, "1", "nope", false},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: nope","message":"Unknown tool: nope"}}`, "1", "nope", false},
		// Members in any order, with others in the result and its items: read.
		{`{"result":{"_meta":{"k":[1,{"a":null}]},"isError":true,"content":[{"text":"Unknown tool: nope","annotations":{},"type":"text"}]},"id":1,"jsonrpc":"2.0"}`, "1", "nope", true},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: nope","data":null}}`, "1", "nope", true},
		// A reply clients read apart: a method (go-sdk and Python read a
		// request), another member, error beside result, a null isError,
		// a code beyond ±(2^53−1) (the TypeScript SDK refuses them).
		{`{"jsonrpc":"2.0","id":1,"method":"elicitation/create","error":{"code":-32602,"message":"Unknown tool: nope"}}`, "1", "nope", false},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: nope"},"extra":0}`, "1", "nope", false},
		{`{"jsonrpc":"2.0","id":1,"result":null,"error":{"code":-32602,"message":"Unknown tool: nope"}}`, "1", "nope", false},
		{`{"jsonrpc":"2.0","id":1,"error":null,"result":{"content":[{"type":"text","text":"Unknown tool: nope"}],"isError":true}}`, "1", "nope", false},
		{`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Unknown tool: nope"}],"isError":null}}`, "1", "nope", false},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":9007199254740993,"message":"Unknown tool: nope"}}`, "1", "nope", false},
	} {
		if got := isNotFound([]byte(tc.reply), []byte(tc.id), tc.name); got != tc.want {
			t.Errorf("isNotFound(%s, %s, %q) = %v, want %v", tc.reply, tc.id, tc.name, got, tc.want)
		}
	}
}

// A reply larger than any not-found answer is not read.
func TestIsNotFoundBounded(t *testing.T) {
	long := make([]byte, 0, 20<<10)
	long = append(long, errorReply("1", -32602, "Unknown tool: nope")...)
	long = append(long[:len(long)-1], `,"pad":"`...)
	for len(long) < 20<<10 {
		long = append(long, 'x')
	}
	long = append(long, `"}`...)
	if !json.Valid(long) {
		t.Fatal("bad test reply")
	}
	if isNotFound(long, []byte("1"), "nope") {
		t.Error("a 20 KiB reply was read as a not-found answer")
	}
}

func FuzzIsNotFound(f *testing.F) {
	for _, s := range notFoundShapes {
		f.Add(errorReply("1", s.Code, shapeText(s.Text, "nope")), "1", "nope")
		f.Add(isErrorReply(`"x"`, shapeText(s.Text, "nope")), `"x"`, "nope")
	}
	f.Add(`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: nope"},"ERROR":{"code":1,"message":"x"}}`, "1", "nope")
	f.Add(`{"jsonrpc":"2.0","id":1,"error":{"code":-32602.0,"message":"Unknown tool: nope"}}`, "1", "nope")
	f.Add(`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: \u006eope"}}`, "1", "nope")
	f.Add(`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":"Tool not found: \u006eope"}}`, "1", "nope")
	f.Add(`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"x","data":"Tool not found: nope","DATA":1}}`, "1", "nope")
	f.Fuzz(func(t *testing.T, reply, id, name string) {
		got := isNotFound([]byte(reply), []byte(id), name)
		// Never a not-found answer that encoding/json would not read as
		// one; and where the strict scanner reads the reply, the same
		// answer as encoding/json. (The scanner refuses more: replies
		// outside the strict subset, among them keys in another letter
		// case, which encoding/json reads as the keys and a JavaScript
		// client does not.)
		a, ok := answerByJSON([]byte(reply), []byte(id))
		byJSON := ok && a.notFound(name, stateIs(listUnseen))
		if got && !byJSON {
			t.Fatalf("isNotFound(%q, %q, %q) = true, encoding/json says false", reply, id, name)
		}
		if _, _, ok := readCallReply([]byte(reply)); ok && len(reply) <= maxNotFoundBytes(name) && got != byJSON {
			t.Fatalf("isNotFound(%q, %q, %q) = %v, encoding/json says %v", reply, id, name, got, byJSON)
		}
		if !got {
			return
		}
		// A recognised answer is a reply to that id that names the tool.
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal([]byte(reply), &m) != nil || !mcpwire.SameID(m.ID, []byte(id)) {
			t.Fatalf("recognised %q for id %q", reply, id)
		}
		if name != "" && !containsName(reply, name) {
			t.Fatalf("recognised %q, which does not name %q", reply, name)
		}
		if keyVariants([]byte(reply)) {
			t.Fatalf("recognised %q, which has keys in another letter case", reply)
		}
	})
}

// answerByJSON is FuzzIsNotFound's reference: msg read by encoding/json
// into the fields a not-found answer is read by, as the guard read replies
// outside the strict subset before it read them strictly only, refusing
// replies with keys in another letter case (keyVariants).
func answerByJSON(msg []byte, id []byte) (answer, bool) {
	if keyVariants(msg) {
		return answer{}, false
	}
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *struct {
			Code    json.Number     `json:"code"`
			Message *string         `json:"message"`
			Data    json.RawMessage `json:"data"`
		} `json:"error"`
		Result *struct {
			IsError bool `json:"isError"`
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if json.Unmarshal(msg, &m) != nil || m.JSONRPC != "2.0" || !mcpwire.SameID(m.ID, id) {
		return answer{}, false
	}
	switch {
	case m.Error != nil && m.Result == nil:
		code, err := m.Error.Code.Int64()
		if err != nil || m.Error.Message == nil {
			return answer{}, false
		}
		a := answer{kind: kindError, code: code, texts: []string{*m.Error.Message}}
		var data string
		if len(m.Error.Data) > 0 && m.Error.Data[0] == '"' && json.Unmarshal(m.Error.Data, &data) == nil {
			a.texts = append(a.texts, data)
		}
		return a, true
	case m.Result != nil && m.Error == nil && len(m.Result.Content) == 1 && m.Result.Content[0].Type == "text":
		a := answer{kind: kindResult}
		if m.Result.IsError {
			a.kind = kindIsError
		}
		text := m.Result.Content[0].Text
		a.texts = append(a.texts, text)
		a.texts = append(a.texts, jsonTexts(text)...)
		return a, true
	}
	return answer{}, false
}

// keyVariants reports whether msg has, where a not-found answer is read,
// a member whose key is one it is read by in another letter case.
func keyVariants(msg []byte) bool {
	var top map[string]json.RawMessage
	if json.Unmarshal(msg, &top) != nil {
		return false
	}
	if variant(top, "jsonrpc", "id", "error", "result") {
		return true
	}
	var e, r map[string]json.RawMessage
	if json.Unmarshal(top["error"], &e) == nil && variant(e, "code", "message", "data") {
		return true
	}
	if json.Unmarshal(top["result"], &r) == nil {
		if variant(r, "isError", "content") {
			return true
		}
		var content []map[string]json.RawMessage
		if json.Unmarshal(r["content"], &content) == nil {
			for _, c := range content {
				if variant(c, "type", "text") {
					return true
				}
			}
		}
	}
	return false
}

// variant reports whether m has one of keys in another letter case.
func variant(m map[string]json.RawMessage, keys ...string) bool {
	for k := range m {
		for _, want := range keys {
			if k != want && strings.EqualFold(k, want) {
				return true
			}
		}
	}
	return false
}

// containsName reports whether the decoded strings of reply mention name.
func containsName(reply, name string) bool {
	var v any
	if json.Unmarshal([]byte(reply), &v) != nil {
		return false
	}
	var walk func(any) bool
	walk = func(v any) bool {
		switch x := v.(type) {
		case string:
			return contains(x, name) || contains(x, strconv.Quote(name))
		case map[string]any:
			for _, e := range x {
				if walk(e) {
					return true
				}
			}
		case []any:
			for _, e := range x {
				if walk(e) {
					return true
				}
			}
		}
		return false
	}
	return walk(v)
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// isNotFound reports whether msg, one JSON-RPC message, is the server's
// own not-found answer to the tools/call with the given id (its JSON
// bytes, as sent) and tool name, where the guard has seen no list for the
// caller: a reply to that id that is a JSON-RPC error (any code), or a
// result with isError: true, whose text says that the called tool is
// unknown, not found or does not exist (see docs/RULES.md §2): the text of
// a shape of [notFoundShapes], or any text of the grammar after it. A
// result without isError is never one here: it is one only where the
// caller's list shows the name absent (the guard checks that itself).
// Anything else (a result, an actionable isError, an error about
// something else, a reply with one of these keys in another letter case)
// is not.
func isNotFound(msg []byte, id []byte, name string) bool {
	r, ok := readCallAnswer(msg, id, name, nil)
	return ok && r.notFound(name, stateIs(listUnseen))
}

// shapeText puts name into a shape's text: the answer its server writes.
func shapeText(text, name string) string {
	if i := strings.Index(text, "%q"); i >= 0 {
		return text[:i] + strconv.Quote(name) + text[i+2:]
	}
	if i := strings.Index(text, "%s"); i >= 0 {
		return text[:i] + name + text[i+2:]
	}
	return text
}

// stateIs is a caller's list that says ls of every name.
func stateIs(ls listState) func() listState { return func() listState { return ls } }
