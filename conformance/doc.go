// Package conformance checks how an MCP server answers a call to a tool it
// does not have: the error_taxonomy check.
//
// The checker connects as a client would (Streamable HTTP in the 2026-07-28
// era, falling back to the 2025-11-25 handshake; or a stdio command), reads
// the whole tool list, and calls a made-up tool name with empty arguments.
// It calls no other tool and sends no credentials unless given some in
// Options.Header. A well-formed JSON-RPC error object is VERIFIED; any other
// answer is OBSERVED_RISK, with a Category saying which kind; a target it
// could not ask (credentials required, the list unreadable, the made-up name
// listed, rate limits, a reply over the size bound, timeouts), or whose call
// was turned away before any tool lookup (-32020, a lost session), is
// UNVERIFIED.
// An OBSERVED_RISK is confirmed with a second made-up name; answers that
// disagree are UNVERIFIED inconsistent. Beside it, never merged, a second
// check, mcp_name_header, asks a 2026-07-28 server whether it refuses a
// tools/call whose Mcp-Name header names another tool than its body
// (Report.NameHeader). docs/CHECKER.md in the repository gives every rule
// and why.
//
//	rep, err := conformance.CheckURL(ctx, "http://localhost:8080/mcp", conformance.Options{})
//
// In a test, TestHandler checks an http.Handler in-process and returns an
// error saying what came back. CheckFleet checks many targets with per-host
// spacing and streams their reports. The command toolguard-check (in cmd/)
// wraps all of this.
package conformance
