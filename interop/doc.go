// Package interop holds no code of its own: its tests run the kit against
// real servers and clients (mark3labs/mcp-go, modelcontextprotocol/go-sdk,
// the TypeScript SDK from npm), which the root module must not depend on.
package interop
