// Package toolguardgosdk is the toolguard tool set for servers built with
// github.com/modelcontextprotocol/go-sdk.
//
// The package is named after the kit and the SDK, so it needs no alias next
// to the SDK's mcp package:
//
//	handler := mcp.NewStreamableHTTPHandler(getServer, nil)
//	tools, err := toolguardgosdk.Tools(handler, toolguard.DiscoverOptions{})
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
//   - a POST whose Accept header does not list both application/json and
//     text/event-stream (go-sdk answers 400);
//   - a 2026-07-28 request whose Mcp-Name header uses the =?base64?...?=
//     form: go-sdk compares the header undecoded and answers -32020.
package toolguardgosdk

import (
	"net/http"
	"strings"

	toolguard "github.com/toolguard/toolguard/middleware"
)

// Tools returns the tool set of the go-sdk handler h (the
// *mcp.StreamableHTTPHandler, or whatever handler the guard wraps).
func Tools(h http.Handler, opts toolguard.DiscoverOptions) (toolguard.ToolSet, error) {
	d, err := toolguard.Discover(h, opts)
	if err != nil {
		return nil, err
	}
	return tools{d}, nil
}

type tools struct{ d *toolguard.Discovery }

func (t tools) Lookup(r *http.Request, name string) toolguard.Presence {
	if !acceptsBoth(r.Header.Values("Accept")) || strings.HasPrefix(r.Header.Get("Mcp-Name"), "=?base64?") {
		return toolguard.Unsure
	}
	return t.d.Lookup(r, name)
}

func (t tools) List(r *http.Request) ([]string, error) { return t.d.List(r) }

// acceptsBoth reports whether the Accept values admit application/json and
// text/event-stream, as go-sdk requires of every POST.
func acceptsBoth(values []string) bool {
	var json, stream bool
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			mt, _, _ := strings.Cut(part, ";")
			switch strings.ToLower(strings.TrimSpace(mt)) {
			case "*/*":
				json, stream = true, true
			case "application/json", "application/*":
				json = true
			case "text/event-stream", "text/*":
				stream = true
			}
		}
	}
	return json && stream
}
