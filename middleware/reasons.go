package toolguard

import (
	"log/slog"
	"net/http"
)

// A Reason says why the guard passed a request through instead of
// answering it. The constants are the one list of reasons, in the order the
// guard checks them: the first that applies is the one reported.
// docs/RULES.md explains each, and which server behaviour it follows.
type Reason int

const (
	// ReasonNotPost: the method is not POST, or the request has no body.
	ReasonNotPost Reason = iota + 1
	// ReasonSkipped: Options.Skip returned true.
	ReasonSkipped
	// ReasonContentType: the Content-Type is missing, repeated, malformed
	// or not application/json.
	ReasonContentType
	// ReasonContentEncoding: a Content-Encoding other than identity.
	ReasonContentEncoding
	// ReasonTooLarge: the body is larger than Options.MaxBodyBytes (it is
	// streamed on, never held whole), or could not be read to its end.
	ReasonTooLarge
	// ReasonNotStrict: the body is not one JSON object inside the strict
	// subset on which every JSON decoder agrees (a batch is not).
	ReasonNotStrict
	// ReasonNotRequest: jsonrpc is not "2.0", or the id is missing, null,
	// or neither a string nor an integer.
	ReasonNotRequest
	// ReasonNotToolsCall: the method is not tools/call, params is not an
	// object, or params.name is not a string.
	ReasonNotToolsCall
	// ReasonKnown: the tool set says the caller can call the tool.
	ReasonKnown
	// ReasonToServer: the tool set cannot prove before the server that
	// the server will not find the tool (Lookup said Unsure): the server
	// decides, and the guard replaces only its own not-found answer.
	ReasonToServer
	// The reasons below are for a tool the tool set says is absent, in a
	// request the server may refuse before it looks the tool up: the
	// server decides, and the guard replaces only its own not-found
	// answer.

	// ReasonUnsafeID: an integer id beyond ±(2^53−1), which JavaScript
	// servers refuse.
	ReasonUnsafeID
	// ReasonProtocolVersion: the Mcp-Protocol-Version header is repeated,
	// empty or not a released version; the _meta protocol version is not
	// a released version; the two are not equal when _meta states one; or
	// a 2026-07-28 request has no _meta version.
	ReasonProtocolVersion
	// ReasonLastEventID: a Last-Event-ID header on the POST, which go-sdk
	// refuses in every era and 2026-07-28 servers refuse.
	ReasonLastEventID
	// ReasonAccept: there is no Accept header, or it admits neither
	// application/json nor text/event-stream.
	ReasonAccept
	// ReasonHeaderMismatch: a 2026-07-28 request whose Mcp-Method or
	// Mcp-Name header is missing, repeated, or does not match the body
	// (answered with -32020 instead when Options.AnswerHeaderMismatch is
	// set and the header is not repeated).
	ReasonHeaderMismatch
	// ReasonClientMeta: a 2026-07-28 call whose _meta has no
	// clientCapabilities object, repeats a protocol key, or holds a
	// clientCapabilities or clientInfo the SDKs might not accept.
	ReasonClientMeta
	// ReasonListFailed: the tool set's list failed. Pass.Err says why.
	ReasonListFailed
	// ReasonListed: the tool set's list has the tool after all.
	ReasonListed

	reasonEnd
)

var reasonNames = [reasonEnd]string{
	ReasonNotPost:         "not-post",
	ReasonSkipped:         "skipped",
	ReasonContentType:     "content-type",
	ReasonContentEncoding: "content-encoding",
	ReasonTooLarge:        "too-large",
	ReasonNotStrict:       "not-strict",
	ReasonNotRequest:      "not-request",
	ReasonNotToolsCall:    "not-tools-call",
	ReasonKnown:           "known",
	ReasonToServer:        "to-server",
	ReasonUnsafeID:        "unsafe-id",
	ReasonProtocolVersion: "protocol-version",
	ReasonLastEventID:     "last-event-id",
	ReasonAccept:          "accept",
	ReasonHeaderMismatch:  "header-mismatch",
	ReasonClientMeta:      "client-meta",
	ReasonListFailed:      "list-failed",
	ReasonListed:          "listed",
}

// String returns the reason's short name, such as "list-failed".
func (r Reason) String() string {
	if r > 0 && r < reasonEnd {
		return reasonNames[r]
	}
	return "unknown"
}

// Watched reports whether a request passed for r goes to the server with
// its answer watched: the guard may still replace the server's own
// not-found answer (Options.OnReject then follows). It is true from
// ReasonToServer on.
func (r Reason) Watched() bool { return r >= ReasonToServer && r < reasonEnd }

// toolsCall reports whether the reason is given only once the request is
// known to be a tools/call for a named tool.
func (r Reason) toolsCall() bool { return r >= ReasonKnown }

// A Pass is what the guard reports when it passes a request through.
type Pass struct {
	// Reason is why the request passed (see the Reason constants).
	Reason Reason
	// Method is the JSON-RPC method of a body read as one JSON object
	// with a string method ("tools/call" for the reasons from
	// ReasonKnown on); empty when the body was not read or has none.
	Method string
	// Tool is the tool name the call asked for; empty for reasons given
	// before the body was read as a tools/call.
	Tool string
	// Err is the tool set's error, for ReasonListFailed.
	Err error
}

// pass reports a pass-through to Options.OnPass and Options.Logger. It
// costs nothing when neither is set.
func (g *Guard) pass(r *http.Request, reason Reason, method, tool string, err error) {
	if g.opts.OnPass != nil {
		if reason.toolsCall() {
			method = "tools/call"
		}
		g.opts.OnPass(r, Pass{Reason: reason, Method: method, Tool: tool, Err: err})
	}
	if l := g.opts.Logger; l != nil {
		level := slog.LevelDebug
		if reason.toolsCall() {
			level = slog.LevelInfo
		}
		ctx := r.Context()
		if !l.Enabled(ctx, level) {
			return
		}
		attrs := []slog.Attr{slog.String("reason", reason.String())}
		if reason.toolsCall() {
			attrs = append(attrs, slog.String("tool", tool))
		}
		if err != nil {
			attrs = append(attrs, slog.String("err", err.Error()))
		}
		l.LogAttrs(ctx, level, "toolguard: passed through", attrs...)
	}
}

// method is Pass.Method for a body that is not a tools/call the guard
// reads: decoded only when OnPass listens ("tools/list" without a copy).
func (g *Guard) method(body []byte, m message) string {
	if g.opts.OnPass == nil || !m.strict || m.method.kind != kString {
		return ""
	}
	if strEquals(body, m.method, "tools/list") {
		return "tools/list"
	}
	return string(decoded(nil, body, m.method))
}

// reporting reports whether anyone listens to pass-throughs.
func (g *Guard) reporting() bool { return g.opts.OnPass != nil || g.opts.Logger != nil }

// logNoList logs a translated answer that goes out without the caller's
// list.
func (g *Guard) logNoList(r *http.Request, tool string, err error) {
	if l := g.opts.Logger; l != nil {
		l.LogAttrs(r.Context(), slog.LevelWarn, "toolguard: answered the server's not-found without data.availableTools",
			slog.String("tool", tool), slog.String("err", err.Error()))
	}
}
