package conformance

import (
	"bytes"
	"fmt"
	"net/http"
	"regexp"
	"strings"
)

// A Hint is a note on the reply that decided a report, for the one reading
// it: a reason to look closer, never a verdict. A report keeps its verdict
// and category whatever its hints say.
type Hint struct {
	Kind HintKind `json:"kind"`
	Text string   `json:"text"` // the note, for people
}

// HintKind names a kind of hint.
type HintKind string

// Kinds of hint.
const (
	// HintToolNotNamed: a VERIFIED JSON-RPC error whose message (and data)
	// does not name the tool asked. The error is well-formed, so the
	// verdict stands, but it may have come from something that failed
	// before any tool lookup: a browser that does not start, a backend that
	// is down. A guard or dispatcher that looked the name up usually says
	// which name it did not find.
	HintToolNotNamed HintKind = "tool_not_named"
	// HintProxy: the deciding HTTP reply is a 5xx, or its body names an
	// upstream or a gateway: it may be a proxy's or gateway's answer for a
	// server behind it, not the MCP server's.
	HintProxy HintKind = "proxy_error"
)

// namesUpstream matches a body that speaks of an upstream or a gateway, as
// proxies do when the server behind them fails ("upstream connect error",
// "no healthy upstream", "502 Bad Gateway", "Gateway Timeout").
var namesUpstream = regexp.MustCompile(`(?i)\bupstream\b|\bbad gateway\b|\bgateway time-?out\b|\bproxy error\b`)

// hintBodyBytes bounds the part of a body the proxy hint searches.
const hintBodyBytes = 4 << 10

// proxyHint returns the proxy_error hint for a reply, if it has one.
func proxyHint(rep reply, stdio bool) (Hint, bool) {
	body := rep.body
	if len(body) > hintBodyBytes {
		body = body[:hintBodyBytes]
	}
	named := namesUpstream.Find(body)
	switch {
	case !stdio && rep.status >= 500 && named != nil:
		return Hint{HintProxy, fmt.Sprintf("HTTP %d whose body names %q: this may be a proxy or gateway answering for the server behind it, not the MCP server itself", rep.status, named)}, true
	case !stdio && rep.status >= 500:
		return Hint{HintProxy, fmt.Sprintf("HTTP %d (%s): a 5xx often comes from a proxy or gateway in front of the server, not from the MCP server itself", rep.status, http.StatusText(rep.status))}, true
	case named != nil:
		return Hint{HintProxy, fmt.Sprintf("the reply names %q: this may be a proxy or gateway answering for the server behind it, not the MCP server itself", named)}, true
	}
	return Hint{}, false
}

// toolNotNamedHint returns the tool_not_named hint for a VERIFIED answer
// to a call of name, if its error's message and data do not name it.
func toolNotNamedHint(o outcome, name string) (Hint, bool) {
	if o.verdict != Verified || name == "" {
		return Hint{}, false
	}
	lower := strings.ToLower(name)
	if strings.Contains(strings.ToLower(o.message), lower) || bytes.Contains(bytes.ToLower(o.rawData), []byte(lower)) || saysToolUnknown(o.message) {
		return Hint{}, false
	}
	code := "an error"
	if o.code != nil {
		code = fmt.Sprintf("error %d", *o.code)
	}
	msg := bodyLine([]byte(o.message))
	if msg == "" {
		msg = "nothing"
	}
	return Hint{HintToolNotNamed, fmt.Sprintf("the JSON-RPC %s does not name the tool asked, %s (its message reads %s): it may come from something that failed before any tool lookup, so it says little about how the server answers an unknown tool", code, name, msg)}, true
}

// saysToolUnknown reports a message that says a tool is unknown without
// naming it ("tool not found", the Rust SDK's; "MCP error -32603: Unknown
// tool"): the server did look a tool up.
func saysToolUnknown(msg string) bool {
	m := strings.ToLower(strings.TrimRight(strings.TrimSpace(msg), ".!"))
	for _, p := range [...]string{"unknown tool", "tool not found", "no such tool", "tool does not exist"} {
		if m == p || strings.HasSuffix(m, ": "+p) {
			return true
		}
	}
	return false
}
