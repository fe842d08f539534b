// Package toolguardgosdk is the toolguard tool set for servers built with
// github.com/modelcontextprotocol/go-sdk.
//
// The package is named after the kit and the SDK, so it needs no alias next
// to the SDK's mcp package:
//
//	handler := mcp.NewStreamableHTTPHandler(getServer, nil)
//	tools, err := toolguardgosdk.Tools(handler, toolguardgosdk.Options{})
//	if err != nil {
//		log.Fatal(err)
//	}
//	guard, err := toolguard.New(toolguard.Options{Tools: tools})
//	if err != nil {
//		log.Fatal(err)
//	}
//	http.Handle("/mcp", guard.Handler(handler))
//
// The server decides; the guard translates. go-sdk exposes no registry of
// tools through its public API, and may serve a different *mcp.Server per
// request, so the tool set never answers before the server: every
// tools/call reaches go-sdk untouched, and the guard replaces only
// go-sdk's own not-found answer (-32602 `unknown tool "X"`) with its
// -32602 answer, keeping go-sdk's HTTP status. Every other answer, go-sdk's
// refusals before dispatch included (an Accept header it does not take, a
// base64 Mcp-Name, an unknown session, a foreign Host), reaches the client
// byte for byte.
//
// The list in data.availableTools is the one go-sdk gave the caller in
// answer to the caller's own tools/list, read by the guard as it passed:
// the guard never sends go-sdk a request of its own.
package toolguardgosdk

import (
	"errors"
	"net/http"

	toolguard "github.com/toolguard/toolguard/middleware"
)

// Options configures Tools. It has no fields yet.
type Options struct{}

// Tools returns the tool set of the go-sdk handler h (the
// *mcp.StreamableHTTPHandler, or whatever handler the guard wraps).
func Tools(h http.Handler, _ Options) (*ToolSet, error) {
	if h == nil {
		return nil, errors.New("toolguardgosdk: Tools needs a handler (h is nil)")
	}
	return &ToolSet{}, nil
}

// ToolSet is the toolguard.ToolSet of a go-sdk handler: go-sdk decides
// every call.
type ToolSet struct{}

// Lookup returns Unsure: go-sdk decides.
func (*ToolSet) Lookup(*http.Request, string) toolguard.Presence { return toolguard.Unsure }

// List is never asked: Lookup is never Absent.
func (*ToolSet) List(*http.Request) ([]string, error) {
	return nil, errors.New("toolguardgosdk: go-sdk's tools are not read in process")
}
