package conformance

import (
	"fmt"
	"strings"
	"time"

	"github.com/toolguard/toolguard/internal/mcpwire"
)

// CheckName is the name of the check this package runs, as seeds and
// reports spell it. The second check, NameHeaderCheck, is reported beside
// it (Report.NameHeader), never merged into it.
const CheckName = "error_taxonomy"

// DefaultProbeName is the made-up tool name the checker calls.
const DefaultProbeName = "__toolguard_probe_nonexistent_tool__"

// Verdict is the outcome of the check.
type Verdict string

const (
	// Verified: the server answered the made-up tool with a well-formed
	// JSON-RPC error object, whatever its code.
	Verified Verdict = "VERIFIED"
	// ObservedRisk: the server answered with anything else.
	ObservedRisk Verdict = "OBSERVED_RISK"
	// Unverified: the checker could not ask, or chose not to.
	Unverified Verdict = "UNVERIFIED"
)

// Category says what kind of answer (or non-answer) produced the verdict.
// VERIFIED has none; each other verdict has one of its own block below.
type Category string

// Categories of OBSERVED_RISK: what the server sent back instead of a
// JSON-RPC error. These are the seven kinds of answer the MCP Checkup
// articles record.
const (
	// ResultIsError: a result with isError: true.
	ResultIsError Category = "result_is_error"
	// ResultOK: a result without isError: true, as if the call worked.
	ResultOK Category = "result_ok"
	// JSONRPCMalformed: a message that claims JSON-RPC (it has a jsonrpc
	// member) but is neither a well-formed error nor a result: jsonrpc
	// not "2.0", both or neither of result and error, or an error whose
	// code is not an integer, whose message is not a string, or whose id
	// is missing or not the request's (null is allowed).
	JSONRPCMalformed Category = "jsonrpc_malformed"
	// NotJSONRPC: valid JSON that does not claim to be JSON-RPC.
	NotJSONRPC Category = "not_jsonrpc"
	// NotJSON: a body that is not JSON (an HTML 404 page, say), or an
	// event stream whose data is not JSON.
	NotJSON Category = "not_json"
	// EmptyBody: an empty body, a redirect without one included.
	EmptyBody Category = "empty_body"
	// EventStreamNoData: an event stream without a data event carrying a
	// reply.
	EventStreamNoData Category = "event_stream_no_data"
)

// Categories of UNVERIFIED: why the checker could not ask, or withheld the
// call.
const (
	// CredentialGated: 401 or 403 at the handshake, the list or the call:
	// turned away before tool dispatch.
	CredentialGated Category = "credential_gated"
	// ToolsListUnreadable: the handshake failed or the tool list could not
	// be read whole; the call is not sent.
	ToolsListUnreadable Category = "tools_list_unreadable"
	// NameCollision: the server lists the made-up name; the call is not
	// sent.
	NameCollision Category = "name_collision"
	// RateLimited: 429, or 503 with Retry-After, after the retries allowed.
	RateLimited Category = "rate_limited"
	// ReplyTooLarge: a reply longer than Options.MaxBodyBytes; it is not
	// classified from a part.
	ReplyTooLarge Category = "reply_too_large"
	// Unreachable: no connection, a stdio command that does not start or
	// goes away.
	Unreachable Category = "unreachable"
	// Timeout: a request took longer than Options.Timeout.
	Timeout Category = "timeout"
	// RefusedBeforeDispatch: the made-up call was turned away before any
	// tool lookup by a refusal the transport defines: -32020 (its headers
	// do not match its body: a proxy between dropped or rewrote Mcp-Name),
	// or a 404 about the session it was sent in (the server no longer
	// knows it).
	RefusedBeforeDispatch Category = "refused_before_dispatch"
	// Inconsistent: the made-up name drew a risky answer, and a second
	// made-up name, asked to confirm it, drew an answer of another
	// category (or none). The detail gives both; Report.Confirmation the
	// second.
	Inconsistent Category = "inconsistent"
)

// Categories of UNVERIFIED for an entry of an MCP Registry document that
// is not checked (see ReadRegistry): nothing is sent, and the detail says
// why.
const (
	// SSETransport: an sse remote, the old HTTP+SSE transport (2024-11-05),
	// which the checker does not speak.
	SSETransport Category = "sse_transport"
	// NotSupported: a package the checker does not run (a registry type
	// other than npm, an npm package without stdio or without a version,
	// another registry or runtime), or a remote of an unknown type.
	NotSupported Category = "not_supported"
	// NeedsInput: the entry requires an input the operator did not supply
	// (an environment variable, a header, an argument, a URL variable); the
	// detail names them. The checker never invents one.
	NeedsInput Category = "needs_input"
	// NoEndpoint: a server.json with neither remotes nor packages.
	NoEndpoint Category = "no_endpoint"
)

// NameHeaderCheck is the name of the second check: whether a 2026-07-28
// server holds a tools/call's Mcp-Name header to the tool name in its body.
const NameHeaderCheck = "mcp_name_header"

// Strictness is the outcome of the mcp_name_header check.
type Strictness string

// Outcomes of the mcp_name_header check.
const (
	// Strict: the server refused a tools/call whose Mcp-Name names another
	// tool than its body: a JSON-RPC error -32020 (headers and body
	// disagree), or another JSON-RPC error with HTTP 400.
	Strict Strictness = "strict"
	// Lenient: the server answered the body's call as if the header had
	// matched: the same answer, status and code as with the right header.
	Lenient Strictness = "lenient"
	// NotApplicable: the check was not run: a 2025-era or stdio target
	// (Mcp-Name is a 2026-07-28 HTTP header), or error_taxonomy stopped
	// before its call (credentials, the list, the network...).
	NotApplicable Strictness = "not_applicable"
	// Undetermined: the mismatched call drew neither a refusal nor the
	// same answer (a 500 page, a timeout, a rate limit...).
	Undetermined Strictness = "undetermined"
)

// A NameHeaderReport is the outcome of the mcp_name_header check. It runs
// after error_taxonomy's call, only against a target that speaks
// 2026-07-28 over HTTP, and only with made-up names: it calls the made-up
// tool with an Mcp-Name header naming a second made-up tool.
type NameHeaderReport struct {
	Check string     `json:"check"` // always NameHeaderCheck
	State Strictness `json:"state"` // strict, lenient, not applicable or undetermined
	// HeaderName is the made-up name sent in Mcp-Name (the body named
	// Options.ProbeName); empty when the call was not sent.
	HeaderName string `json:"headerName,omitempty"`
	// HTTPStatus, MediaType and ErrorCode describe the reply to the
	// mismatched call, as Report's do.
	HTTPStatus int       `json:"httpStatus,omitempty"`
	MediaType  MediaType `json:"mediaType,omitempty"`
	ErrorCode  *int      `json:"errorCode,omitempty"`
	Detail     string    `json:"detail,omitempty"` // what came back, for people
}

// String formats the outcome on one line:
//
//	mcp_name_header STATE [(HTTP STATUS, MEDIA)] [code CODE][: DETAIL]
func (n NameHeaderReport) String() string {
	var b strings.Builder
	b.WriteString(NameHeaderCheck + " " + string(n.State))
	if n.HTTPStatus != 0 {
		fmt.Fprintf(&b, " (HTTP %d, %s)", n.HTTPStatus, n.MediaType)
	}
	if n.ErrorCode != nil {
		fmt.Fprintf(&b, " code %d", *n.ErrorCode)
	}
	if n.Detail != "" {
		b.WriteString(": " + n.Detail)
	}
	return b.String()
}

// A Confirmation is the answer to the second made-up name, asked when the
// first drew an OBSERVED_RISK. The risk is recorded only if both answers
// have the same category; otherwise the verdict is UNVERIFIED
// inconsistent.
type Confirmation struct {
	Name string `json:"name"` // the second made-up name
	// Verdict, Category, HTTPStatus, MediaType, ErrorCode and Detail
	// describe the answer to the second name, as Report's do.
	Verdict    Verdict   `json:"verdict"`
	Category   Category  `json:"category,omitempty"`
	HTTPStatus int       `json:"httpStatus,omitempty"`
	MediaType  MediaType `json:"mediaType,omitempty"`
	ErrorCode  *int      `json:"errorCode,omitempty"`
	Detail     string    `json:"detail,omitempty"`
}

// MediaType is a reply's Content-Type reduced to a fixed list.
type MediaType string

// Media types a report records.
const (
	MediaJSON        MediaType = "application/json"
	MediaEventStream MediaType = "text/event-stream"
	MediaHTML        MediaType = "text/html"
	MediaText        MediaType = "text/plain"
	MediaNone        MediaType = "none"  // no Content-Type
	MediaOther       MediaType = "other" // any other, or one that does not parse
)

// Protocol eras.
const (
	Era2025 = mcpwire.LatestWithInitialize // "2025-11-25"
	Era2026 = mcpwire.FirstSessionless     // "2026-07-28"
)

// A Report is the result of checking one target.
type Report struct {
	Target   string   `json:"target"`             // the URL, or "stdio:" and the command
	Label    string   `json:"label,omitempty"`    // the fleet target's Label, if it has one
	Check    string   `json:"check"`              // always CheckName
	Verdict  Verdict  `json:"verdict"`            // VERIFIED, OBSERVED_RISK or UNVERIFIED
	Category Category `json:"category,omitempty"` // why, for a verdict other than VERIFIED
	// Stage is the request that decided the verdict: "discover",
	// "initialize", "tools/list" or "tools/call"; empty when the target
	// could not be reached at all.
	Stage string `json:"stage,omitempty"`
	// HTTPStatus and MediaType describe the deciding HTTP reply; both are
	// empty over stdio.
	HTTPStatus int       `json:"httpStatus,omitempty"`
	MediaType  MediaType `json:"mediaType,omitempty"`
	// Era is the protocol revision the checker spoke with the target: in
	// the 2025 era, the version the server answered initialize with.
	Era string `json:"era,omitempty"`
	// ErrorCode is the JSON-RPC error code of the answer, when it is an
	// error object whose code is an integer of at most 2^53 in magnitude
	// (larger integers are valid codes, but are not recorded).
	ErrorCode *int `json:"errorCode,omitempty"`
	// Tools is how many tools the target listed.
	Tools int `json:"tools"`
	// ErrorData holds what a VERIFIED error's data says of the server's
	// tools, as toolguard's answer does; nil when its data has neither
	// list.
	ErrorData *ErrorData `json:"errorData,omitempty"`
	// Detail says in a sentence what came back, for people.
	Detail   string        `json:"detail,omitempty"`
	Duration time.Duration `json:"durationNs"` // how long the check took

	// Confirmation is the answer to a second made-up name, sent only when
	// the first drew an OBSERVED_RISK; nil otherwise.
	Confirmation *Confirmation `json:"confirmation,omitempty"`
	// NameHeader is the second check, mcp_name_header, reported on its
	// own and never merged into the verdict above.
	NameHeader NameHeaderReport `json:"mcpNameHeader"`

	// Registry names the MCP Registry entry the target came from, when it
	// came from one (ReadRegistry); nil otherwise.
	Registry *RegistryRef `json:"registry,omitempty"`
	// Hints are notes on the deciding reply for the one reading the
	// report. They change no verdict. See Hint.
	Hints []Hint `json:"hints,omitempty"`
}

// Lines formats both checks, one line each, as String and
// NameHeaderReport.String do, the second with the target too.
func (r Report) Lines() string {
	second := r.NameHeader
	if second.Check == "" {
		return r.String()
	}
	prefix := ""
	if r.Target != "" {
		prefix = r.Target + ": "
	}
	return r.String() + "\n" + prefix + second.String()
}

// String formats the report on one line:
//
//	TARGET: error_taxonomy VERDICT [CATEGORY] [at STAGE] [(HTTP STATUS, MEDIA)][: DETAIL]
func (r Report) String() string {
	var b strings.Builder
	if r.Target != "" {
		b.WriteString(r.Target + ": ")
	}
	b.WriteString(CheckName + " " + string(r.Verdict))
	if r.Category != "" {
		b.WriteString(" " + string(r.Category))
	}
	if r.Stage != "" {
		b.WriteString(" at " + r.Stage)
	}
	if r.HTTPStatus != 0 {
		fmt.Fprintf(&b, " (HTTP %d, %s)", r.HTTPStatus, r.MediaType)
	}
	if r.Detail != "" {
		b.WriteString(": " + r.Detail)
	}
	return b.String()
}

// ErrorData is what an error's data says of the server's tools: the
// members toolguard's answer carries. A member that is absent, or is not
// an array of strings, is nil.
type ErrorData struct {
	// AvailableTools is data.availableTools: the tools the server has.
	AvailableTools []string `json:"availableTools"`
	// Suggestions is data.suggestions: the tools nearest the name asked.
	Suggestions []string `json:"suggestions"`
}
