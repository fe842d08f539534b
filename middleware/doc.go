// Package toolguard is net/http middleware for MCP servers that answers a
// tools/call naming a tool the server does not have with the JSON-RPC error
// the MCP specification asks for (-32602), listing the tools the caller can
// call and the names nearest the one it asked for, before the SDK behind it
// can turn the call into an ordinary result with isError.
//
// Everything else passes through untouched, body byte for byte: the
// middleware answers only where the server itself would have looked the
// tool up and not found it. A body outside the strict subset on which every
// JSON decoder agrees, a batch, a notification, a protocol version or _meta
// the server would refuse, a tool set that cannot tell, or a caller the
// server will not list tools to (an unknown session, a foreign Host) all
// reach the server as if the middleware were not there. Each pass-through
// has a [Reason], in one ordered list, reported to Options.OnPass and
// Options.Logger. The rules, and what mcp-go and go-sdk refuse before tool
// lookup, are in docs/RULES.md in the repository. The ResponseWriter is
// not wrapped, so streaming, flushing and hijacking behave as without it,
// but in one case: when the tool set's own requests took messages the
// server meant for the caller and the call passes, Handler wraps it to
// deliver them with the server's answer (a JSON answer then goes out as
// an event stream, line by line as it is written; http.ResponseController
// reaches the writer beneath through Unwrap).
//
// The package lives in the folder middleware but is named toolguard, so it
// can be imported next to echo's and chi's own middleware packages without
// an alias, and reads as what it is at the call site:
//
//	guard, err := toolguard.New(toolguard.Options{
//		Tools: toolguard.StaticTools("get_weather", "search_docs"),
//	})
//	if err != nil {
//		log.Fatal(err)
//	}
//	http.Handle("/mcp", guard.Handler(mcpHandler))
//
// Framework adapters call [Guard.Check] and [Rejection.Write], so every host
// writes the same bytes.
//
// What "registered" means is asked per request of a [ToolSet]. This package
// ships [StaticTools], [ToolsFunc] and [Discover], which asks the server
// itself for tools/list exactly as the caller (its Host, headers, context,
// and the call's own _meta, found with [CallFromContext]); the adapters
// modules add tool sets read from mark3labs/mcp-go and
// modelcontextprotocol/go-sdk servers.
//
// For a server that speaks over standard input and output, [NewStdio]
// guards the stream itself: give the server the guard's [Stdio.Reader] and
// [Stdio.Writer] instead of os.Stdin and os.Stdout. It asks the server for
// tools/list on the same stream, as the caller, and answers only lines it
// can read with certainty (see [Stdio]). The command toolguard-stdio puts it
// in front of a stdio server in any language.
//
// Put the guard after authentication: a rejection lists the tools the
// caller could call, which anonymous callers should not see. Options has
// HideToolList and HideSuggestions for servers that must not enumerate.
package toolguard
