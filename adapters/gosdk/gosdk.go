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
// go-sdk exposes no registry of tools, and may serve a different *Server
// per request, so the tool set asks the handler itself: tools/list as the
// caller (same session, same headers, same URL), the way toolguard.Discover
// does, which is exact in stateful, JSON-response and stateless modes.
// On top of that it knows what go-sdk v1.8 refuses before tool dispatch,
// and passes those requests through for the SDK to answer:
//
//   - a POST whose Accept header does not admit both application/json and
//     text/event-stream (go-sdk answers 400);
//   - a 2026-07-28 request whose Mcp-Name header uses the =?base64?...?=
//     form: go-sdk compares the header undecoded and answers -32020.
package toolguardgosdk

import (
	"errors"
	"net/http"

	"github.com/toolguard/toolguard/internal/mcpwire"
	toolguard "github.com/toolguard/toolguard/middleware"
)

// Options configures Tools.
type Options struct {
	// Discover configures the tools/list fetches (see
	// toolguard.DiscoverOptions; its ModernStatus is ignored: go-sdk sends
	// 400 with its own -32602 for 2026-07-28 requests, and so does the
	// guard).
	Discover toolguard.DiscoverOptions
}

// Tools returns the tool set of the go-sdk handler h (the
// *mcp.StreamableHTTPHandler, or whatever handler the guard wraps).
func Tools(h http.Handler, opts Options) (*ToolSet, error) {
	if h == nil {
		return nil, errors.New("toolguardgosdk: Tools needs a handler (h is nil)")
	}
	d, err := toolguard.Discover(h, opts.Discover)
	if err != nil {
		return nil, err
	}
	return &ToolSet{d: d}, nil
}

// ToolSet is the toolguard.ToolSet of a go-sdk handler.
type ToolSet struct{ d *toolguard.Discovery }

// Lookup is Unsure for what go-sdk refuses before tool dispatch, and
// otherwise answers from the caller's last list.
func (t *ToolSet) Lookup(r *http.Request, name string) toolguard.Presence {
	json, stream := mcpwire.Accepts(r.Header.Values("Accept"))
	if !json || !stream || mcpwire.IsEncodedName(r.Header.Get(mcpwire.HeaderName)) {
		return toolguard.Unsure
	}
	return t.d.Lookup(r, name)
}

// List returns the caller's tools/list, asked of the handler as the caller.
func (t *ToolSet) List(r *http.Request) ([]string, error) { return t.d.List(r) }

// ModernStatus is the HTTP status go-sdk sends with -32602 for a
// 2026-07-28 request: 400.
func (t *ToolSet) ModernStatus() int { return http.StatusBadRequest }
