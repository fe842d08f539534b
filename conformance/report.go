package conformance

import (
	"fmt"
	"time"
)

// Check is the name of the check this package runs.
const Check = "error_taxonomy"

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
type Category string

// Categories of OBSERVED_RISK.
const (
	ResultIsError       Category = "result_is_error"      // a result with isError: true
	ResultOK            Category = "result_ok"            // a result as if the call worked
	JSONRPCMalformed    Category = "jsonrpc_malformed"    // claims JSON-RPC, but the error object is malformed
	NotJSONRPC          Category = "not_jsonrpc"          // valid JSON that is not JSON-RPC
	NotJSON             Category = "not_json"             // a body that is not JSON
	EmptyBody           Category = "empty_body"           // an empty body
	EventStreamNoData   Category = "event_stream_no_data" // an event stream without the reply
	CredentialGated     Category = "credential_gated"     // 401/403: turned away before tool dispatch
	ToolsListUnreadable Category = "tools_list_unreadable"
	NameCollision       Category = "name_collision" // the server lists the made-up name
	RateLimited         Category = "rate_limited"
	Unreachable         Category = "unreachable"
	Timeout             Category = "timeout"
)

// Categories of UNVERIFIED are CredentialGated, ToolsListUnreadable,
// NameCollision, RateLimited, Unreachable and Timeout; VERIFIED has none.

// Media types a report records: the reply's Content-Type reduced to one of
// a fixed list.
const (
	MediaJSON        = "application/json"
	MediaEventStream = "text/event-stream"
	MediaHTML        = "text/html"
	MediaText        = "text/plain"
	MediaNone        = "none"
	MediaOther       = "other"
)

// Protocol eras.
const (
	Era2025 = "2025-11-25"
	Era2026 = "2026-07-28"
)

// A Report is the result of checking one target.
type Report struct {
	Target   string   `json:"target"`
	Check    string   `json:"check"`
	Verdict  Verdict  `json:"verdict"`
	Category Category `json:"category,omitempty"`
	// Stage is the request that decided the verdict: "discover",
	// "initialize", "tools/list" or "tools/call".
	Stage      string `json:"stage,omitempty"`
	HTTPStatus int    `json:"httpStatus,omitempty"`
	MediaType  string `json:"mediaType,omitempty"`
	// Era is the protocol revision the checker spoke with the target.
	Era string `json:"era,omitempty"`
	// ErrorCode is the JSON-RPC error code of the answer, when it is an
	// error object with a code that is a small integer.
	ErrorCode *int `json:"errorCode,omitempty"`
	// Tools is how many tools the target listed.
	Tools int `json:"tools"`
	// Detail says in a sentence what came back, for people.
	Detail   string        `json:"detail,omitempty"`
	Duration time.Duration `json:"durationNs"`
}

func (r Report) String() string {
	s := fmt.Sprintf("%s %s", r.Target, r.Verdict)
	if r.Category != "" {
		s += " " + string(r.Category)
	}
	if r.HTTPStatus != 0 {
		s += fmt.Sprintf(" (HTTP %d, %s)", r.HTTPStatus, r.MediaType)
	}
	if r.Detail != "" {
		s += ": " + r.Detail
	}
	return s
}
