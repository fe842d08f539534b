// Package toolguard is net/http middleware for MCP servers that answers a
// tools/call naming a tool the server does not have with the JSON-RPC error
// the MCP specification asks for (-32602), listing the tools the caller can
// call and the names nearest the one it asked for, instead of the ordinary
// result with isError (or the bare error) many SDKs give.
//
// The rule: the guard answers only where the server itself looked the tool
// up and did not find it. A [ToolSet] that read, in process and at call
// time, the very set the server's lookup uses ([StaticTools], [ToolsFunc],
// mcp-go's registry where nothing can rename, load or refuse a tool) lets
// the guard answer before the server. Everywhere else (no tool set, go-sdk,
// the stdio guard) the call goes to the server untouched, and the guard
// replaces only the server's own not-found answer ([IsNotFound],
// [NotFoundShapes]), keeping its status; every other answer reaches the
// client byte for byte. A known call never waits.
//
// The guard never speaks to the server; it reads what passes. The list in
// data.availableTools is the server's answer to the caller's own
// tools/list, read on its way and kept for that caller only (see
// Options.ListTTL), without the name the server just said it does not
// have.
//
// Every request that is not a tools/call the guard reads with certainty
// passes through untouched, body byte for byte and with the caller's own
// ResponseWriter. For a tools/call whose name the tool set does not know,
// the server gets a ResponseWriter that holds a JSON answer until it ends
// (a Flush waits) and passes an event stream event by event; hijacking and
// http.ResponseController work through it (Unwrap). Each pass-through has
// a [Reason], in one ordered list, reported to Options.OnPass and
// Options.Logger. docs/RULES.md in the repository has the rules and the
// table of not-found answers.
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
// Framework adapters call [Guard.Check], [Guard.Watch] and
// [Rejection.Write], so every host writes the same bytes.
//
// What "registered" means is asked per request of a [ToolSet]. This package
// ships [StaticTools] and [ToolsFunc]; the adapters modules add tool sets
// read from mark3labs/mcp-go and modelcontextprotocol/go-sdk servers.
// Without a tool set the server decides every call.
//
// For a server that speaks over standard input and output, [NewStdio]
// guards the stream itself: give the server the guard's [Stdio.Reader] and
// [Stdio.Writer] instead of os.Stdin and os.Stdout. It forwards every client
// line at once and replaces only the server's own not-found answer to a
// call it read (see [Stdio]). The command toolguard-stdio puts it in front
// of a stdio server in any language.
//
// Put the guard after authentication: a rejection lists the tools the
// server listed to the caller. Options has
// HideToolList and HideSuggestions for servers that must not enumerate.
package toolguard
