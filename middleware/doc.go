// Package toolguard is net/http middleware for MCP servers: it answers a
// tools/call naming a tool the server does not have with the JSON-RPC error
// the specification asks for (-32602), with the caller's tools and the names
// nearest the one asked, instead of the isError result many SDKs give.
//
// The guard answers only where the server itself looked the tool up and did
// not find it: before the server where a [ToolSet] read the server's own
// registry in process (StaticTools, ToolsFunc, mcp-go's adapter with
// AnswerBeforeServer), and everywhere else by replacing the server's own
// not-found answer, keeping its status. Every other answer reaches the
// client byte for byte. The guard never speaks to the server; it reads what
// passes: data.availableTools is the server's answer to the caller's own
// tools/list, kept for that caller.
//
//	guard, err := toolguard.New(toolguard.Options{Tools: toolguard.StaticTools("get_weather")})
//	if err != nil {
//		log.Fatal(err)
//	}
//	http.Handle("/mcp", guard.Handler(mcpHandler))
//
// Framework adapters use [Guard.Check], [Guard.Watch] and [Rejection.Write].
// [NewStdio] guards a stdio stream the same way. Put the guard after
// authentication. The package lives in the folder middleware and is named
// toolguard, to sit beside other middleware packages without an alias.
// docs/RULES.md in the repository has the rules and the not-found answers.
package toolguard
