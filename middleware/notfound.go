package toolguard

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/toolguard/toolguard/mcpwire"
)

// A NotFoundShape is one way a server answers a tools/call for a tool it
// does not have: the answer the guard translates. NotFoundShapes lists
// them; docs/RULES.md has the same table.
type NotFoundShape struct {
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

// NotFoundShapes are the not-found answers of the SDKs the guard knows.
// Besides these, any JSON-RPC error whose message (or data, when it is a
// string) names the called tool as unknown or not found (see
// [IsNotFound]) is a not-found answer too. An SDK whose answer does not
// name the tool (the Rust SDK's -32602 "tool not found") is not among
// them: the guard cannot tell that answer from a tool's own error, so it
// passes as the server wrote it.
var NotFoundShapes = []NotFoundShape{
	{Server: "mark3labs/mcp-go", Versions: "v0.15 … v1.2.1", Code: -32602, Text: "tool '%s' not found: tool not found", Source: "measured"},
	{Server: "modelcontextprotocol/go-sdk", Versions: "v1.1 … v1.8.0", Code: -32602, Text: "unknown tool %q", Source: "measured"},
	{Server: "TypeScript SDK v1 (@modelcontextprotocol/sdk)", Versions: "1.21.0 … 1.32.2", IsError: true, Text: "MCP error -32602: Tool %s not found", Source: "measured"},
	{Server: "TypeScript SDK v2 (@modelcontextprotocol/server)", Versions: "2.4.0", Code: -32602, Text: "Tool %s not found", Source: "measured"},
	{Server: "npm fastmcp", Versions: "4.20.16", Code: -32601, Text: "MCP error -32601: Unknown tool: %s", Source: "measured"},
	{Server: "npm fastmcp, edge runtime (fastmcp/edge)", Versions: "4.20.16", Code: -32602, Text: "Tool not found: %s", Source: "measured"},
	{Server: "Python SDK (mcp, FastMCP; jlowin/fastmcp 2.x)", Versions: "mcp v1.3 … v1.29; fastmcp 2.0 … 2.14", IsError: true, Text: "Unknown tool: %s", Source: sourceNoPyPI},
	{Server: "jlowin/fastmcp 3", Versions: "3.0.0rc2", IsError: true, Text: "Unknown tool: '%s'", Source: sourceNoPyPI},
	{Server: "C# SDK (ModelContextProtocol)", Versions: "0.3.0-preview.1 … 2.2.0", Code: -32602, Text: "Unknown tool: '%s'", Source: sourceRead},
	{Server: "Java SDK (io.modelcontextprotocol)", Versions: "0.13.0 … 2.0.1", Code: -32602, Text: "Unknown tool: invalid_tool_name", Data: "Tool not found: %s", Source: sourceRead},
	{Server: "Java SDK (io.modelcontextprotocol)", Versions: "… 0.12", Code: -32603, Text: "Tool not found: %s", Source: sourceRead},
	{Server: "Kotlin SDK", Versions: "0.7.5 … 0.14.0", IsError: true, Text: "Tool %s not found", Source: sourceRead},
	{Server: "Kotlin SDK", Versions: "… 0.7.4", Code: -32603, Text: "Tool not found: %s", Source: sourceRead},
	{Server: "Ruby SDK (mcp gem)", Versions: "0.7.1 … 1.3.0", Code: -32602, Text: "Invalid params", Data: "Tool not found: %s", Source: sourceRead},
	{Server: "Ruby SDK (mcp gem)", Versions: "0.5.0 … 0.7.0", IsError: true, Text: "Tool not found: %s", Source: sourceRead},
	{Server: "PHP SDK (mcp/sdk)", Versions: "0.1.0 … 0.7.1", Code: -32601, Text: `Tool not found: "%s".`, Source: sourceRead},
	{Server: "ThinkInAIXYZ/go-mcp", Versions: "v0.2.0 … v0.2.29", Code: -32603, Text: "missing tool, toolName=%s", Source: sourceRead},
}

const (
	sourceRead   = "read from source: its runtime is not installed here"
	sourceNoPyPI = "read from source: Python packages cannot be installed here (no PyPI)"
)

// maxNotFoundBytes bounds the answers the guard reads for a not-found
// shape: a larger answer is none of them.
func maxNotFoundBytes(name string) int { return 8<<10 + 8*len(name) }

// IsNotFound reports whether msg, one JSON-RPC message, is the server's
// own not-found answer to the tools/call with the given id (its JSON
// bytes, as sent) and tool name: a reply to that id that is either
//
//   - a JSON-RPC error whose message, or whose data when it is a string,
//     names the tool as unknown or not found: "Unknown tool: X",
//     "unknown tool \"X\"", "Tool X not found", "tool 'X' not found: …",
//     "Tool not found: X" (or without the colon), in any letter case, the
//     name bare or in quotes, after an optional "MCP error <code>: "
//     prefix; or go-mcp's "missing tool, toolName=X", exactly; or
//   - a result with isError: true whose only content is the text of an
//     isError shape of [NotFoundShapes], for this name.
//
// Anything else (a result, an actionable isError, an error about something
// else, a reply with one of these keys in another letter case) is not.
func IsNotFound(msg []byte, id []byte, name string) bool {
	if len(msg) > maxNotFoundBytes(name) || !bytes.Contains(msg, []byte(`"id"`)) {
		return false
	}
	if !bytes.Contains(msg, []byte(`"error"`)) && !bytes.Contains(msg, []byte(`"isError"`)) {
		return false
	}
	// The usual answer, an error reply in the strict subset, is read by
	// the strict scanner; anything else by encoding/json, and the two
	// agree wherever the scanner answers (FuzzIsNotFound).
	if replyID, message, data, ok := readErrorReply(msg); ok {
		return sameID(replyID, id) && (namesUnknown(message, name) || namesUnknown(data, name))
	}
	return !keyVariants(msg) && notFoundJSON(msg, id, name)
}

var (
	errorReplyKeys = []string{"jsonrpc", "id", "error", "result"}
	errorKeys      = []string{"code", "message", "data"}
)

// readErrorReply reads an error reply in the strict subset: jsonrpc
// "2.0", an id, and an error with an integer code, a string message and
// any data (returned when it is a string, "" otherwise: an empty message
// names no tool). ok is false for anything else (a result, a reply
// outside the subset).
func readErrorReply(b []byte) (id []byte, message, data string, ok bool) {
	s := scanner{b: b}
	s.ws()
	if s.i >= len(b) || b[s.i] != '{' {
		return nil, "", "", false
	}
	var jsonrpc, idSp, code, msg, dataSp span
	var hasError bool
	ok = s.members(errorReplyKeys, func(k int) bool {
		switch k {
		case 0:
			return s.capture(&jsonrpc)
		case 1:
			return s.capture(&idSp)
		case 2:
			if s.i >= len(b) || b[s.i] != '{' {
				return false
			}
			hasError = true
			return s.members(errorKeys, func(k int) bool {
				switch k {
				case 0:
					return s.capture(&code) && code.kind == kInt
				case 1:
					return s.capture(&msg) && msg.kind == kString
				case 2:
					return s.capture(&dataSp)
				}
				return s.value()
			})
		case 3:
			return false // a result: read by encoding/json
		}
		return s.value()
	})
	if !ok || !hasError || code.kind != kInt || msg.kind != kString || jsonrpc.kind != kString || !strEquals(b, jsonrpc, "2.0") || idSp.kind == absent {
		return nil, "", "", false
	}
	s.ws()
	if s.i != len(b) {
		return nil, "", "", false
	}
	var scratch [256]byte
	if dataSp.kind == kString {
		data = string(decoded(scratch[:0], b, dataSp))
	}
	return idSp.raw(b), string(decoded(scratch[:0], b, msg)), data, true
}

// keyVariants reports whether msg has, where a not-found answer is read,
// a member whose key is one it is read by in another letter case
// ("Error", "DATA"): encoding/json would read it as that key, a
// JavaScript or Python client would not, so the reply is not read as a
// not-found answer at all.
func keyVariants(msg []byte) bool {
	var top map[string]json.RawMessage
	if json.Unmarshal(msg, &top) != nil {
		return false // not an object: notFoundJSON refuses it
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

// notFoundJSON is IsNotFound read by encoding/json (which matches keys in
// any letter case: IsNotFound first refuses replies where that matters).
func notFoundJSON(msg []byte, id []byte, name string) bool {
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
	if json.Unmarshal(msg, &m) != nil || m.JSONRPC != "2.0" || !sameID(m.ID, id) {
		return false
	}
	switch {
	case m.Error != nil && m.Result == nil:
		if _, err := m.Error.Code.Int64(); err != nil || m.Error.Message == nil {
			return false
		}
		if namesUnknown(*m.Error.Message, name) {
			return true
		}
		var data string
		return len(m.Error.Data) > 0 && m.Error.Data[0] == '"' && json.Unmarshal(m.Error.Data, &data) == nil && namesUnknown(data, name)
	case m.Result != nil && m.Error == nil && m.Result.IsError && len(m.Result.Content) == 1:
		c := m.Result.Content[0]
		if c.Type != "text" {
			return false
		}
		for _, s := range NotFoundShapes {
			if s.IsError && c.Text == shapeText(s.Text, name) {
				return true
			}
		}
	}
	return false
}

// shapeText puts name into a shape's text.
func shapeText(text, name string) string {
	if i := strings.Index(text, "%q"); i >= 0 {
		return text[:i] + strconv.Quote(name) + text[i+2:]
	}
	if i := strings.Index(text, "%s"); i >= 0 {
		return text[:i] + name + text[i+2:]
	}
	return text
}

// sameID reports whether the id of a reply is the id of the call.
func sameID(got, want []byte) bool { return mcpwire.SameID(got, want) }

// namesUnknown reports whether an error message names the tool as unknown
// or not found (see IsNotFound).
func namesUnknown(msg, name string) bool {
	msg = strings.TrimSpace(msg)
	if rest, ok := cutFold(msg, "MCP error "); ok {
		// "MCP error -32602: ..." (the TypeScript SDKs' McpError)
		i := strings.Index(rest, ": ")
		if i < 0 {
			return false
		}
		if _, err := strconv.Atoi(rest[:i]); err != nil {
			return false
		}
		msg = rest[i+2:]
	}
	if rest, ok := cutFold(msg, "unknown tool"); ok {
		return endsWithName(rest, name)
	}
	if rest, ok := cutFold(msg, "tool not found"); ok {
		return endsWithName(rest, name) // "Tool not found: X" (the Java, Kotlin and PHP SDKs)
	}
	if rest, ok := strings.CutPrefix(msg, "missing tool, toolName="); ok {
		return rest == name // ThinkInAIXYZ/go-mcp
	}
	if rest, ok := cutFold(msg, "tool "); ok {
		rest, ok = cutQuoted(rest, name)
		if !ok {
			return false
		}
		rest, ok = cutFold(rest, " not found")
		return ok && (rest == "" || rest == "." || strings.HasPrefix(rest, ":"))
	}
	return false
}

// endsWithName reports whether rest, what follows "unknown tool" or "tool
// not found" in a message, is an optional colon, spaces and the name (bare
// or quoted), then nothing or a period.
func endsWithName(rest, name string) bool {
	rest = strings.TrimPrefix(rest, ":")
	if rest == "" || rest[0] != ' ' {
		return false
	}
	rest, ok := cutQuoted(strings.TrimLeft(rest, " "), name)
	return ok && (rest == "" || rest == ".")
}

// cutFold cuts prefix from s, ignoring ASCII letter case.
func cutFold(s, prefix string) (string, bool) {
	if len(s) < len(prefix) || !strings.EqualFold(s[:len(prefix)], prefix) {
		return s, false
	}
	return s[len(prefix):], true
}

// cutQuoted cuts name from the start of s: bare, in single or double
// quotes, or Go-quoted.
func cutQuoted(s, name string) (string, bool) {
	for _, q := range [...]string{strconv.Quote(name), `"` + name + `"`, "'" + name + "'", "`" + name + "`", name} {
		if rest, ok := strings.CutPrefix(s, q); ok {
			return rest, true
		}
	}
	return s, false
}
