package toolguard

import (
	"log/slog"
	"net/http"
)

// A Reason says why the guard passed a request through instead of
// answering it. The constants are the one list of reasons, in the order the
// guard checks them: the first that applies is the one reported.
// docs/RULES.md §3 explains each, and which server behaviour it follows.
type Reason int

const (
	ReasonNotPost         Reason = iota + 1 // not POST, or no body
	ReasonSkipped                           // Options.Skip returned true
	ReasonContentType                       // Content-Type missing, repeated, malformed or not JSON
	ReasonContentEncoding                   // a Content-Encoding other than identity
	ReasonTooLarge                          // over Options.MaxBodyBytes (streamed on), or not read to its end
	ReasonNotStrict                         // not one JSON object in the strict subset (a batch is not)
	ReasonNotRequest                        // jsonrpc not "2.0", or an id that is not a string or integer
	ReasonNotToolsCall                      // not tools/call, or params.name not a string
	ReasonKnown                             // the tool set says the caller can call the tool
	ReasonToServer                          // the tool set is Unsure: the server decides

	// For a tool the tool set says is Absent, in a request the server may
	// refuse before its lookup: the server decides.

	ReasonUnsafeID        // an integer id beyond ±(2^53−1)
	ReasonProtocolVersion // a protocol version header or _meta a server may refuse
	ReasonLastEventID     // a Last-Event-ID header on the POST
	ReasonAccept          // an Accept that does not take both JSON and an event stream
	ReasonHeaderMismatch  // 2026-07-28: Mcp-Method or Mcp-Name missing, repeated or not the body's
	ReasonClientMeta      // 2026-07-28: _meta client capabilities an SDK may refuse
	ReasonListFailed      // the tool set's List failed (Pass.Err says why)
	ReasonListed          // the caller's kept list, or the tool set's List, has the tool after all

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

// pass reports a pass-through to Options.OnPass and Options.Logger, if set.
func (g *Guard) pass(r *http.Request, p Pass) {
	if g.opts.OnPass != nil {
		if p.Reason.toolsCall() {
			p.Method = "tools/call"
		}
		g.opts.OnPass(r, p)
	}
	if l := g.opts.Logger; l != nil {
		level := slog.LevelDebug
		if p.Reason.toolsCall() {
			level = slog.LevelInfo
		}
		ctx := r.Context()
		if !l.Enabled(ctx, level) {
			return
		}
		attrs := []slog.Attr{slog.String("reason", p.Reason.String())}
		if p.Reason.toolsCall() {
			attrs = append(attrs, slog.String("tool", p.Tool))
		}
		if p.Err != nil {
			attrs = append(attrs, slog.String("err", p.Err.Error()))
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

// rejected tells Options.Logger (at Info; at Warn without a list kept,
// ErrNoList) and Options.OnReject of an answer the guard is to write.
func (g *Guard) rejected(r *http.Request, rej *Rejection) {
	if l := g.opts.Logger; l != nil {
		msg, level := "toolguard: answered an unknown tool", slog.LevelInfo
		attrs := []slog.Attr{slog.String("tool", rej.Name), slog.Bool("translated", rej.Translated)}
		if rej.header != "" {
			msg, attrs = "toolguard: answered a header mismatch", append(attrs, slog.String("header", rej.header))
		}
		if rej.ListErr != nil {
			level, attrs = slog.LevelWarn, append(attrs, slog.String("err", rej.ListErr.Error()))
		}
		l.LogAttrs(r.Context(), level, msg, attrs...)
	}
	if g.opts.OnReject != nil {
		g.opts.OnReject(r, rej)
	}
}
