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
//
// # Names-only lists
//
// A rejection is confirmed with a tools/list fetched after the call
// arrived, and by default that list carries every tool's input and output
// schemas: go-sdk encodes them all and the guard reads past them, which
// with many tools costs far more than go-sdk's own answer to an unknown
// tool. Give the tool set the *mcp.Server values the handler serves
// (Options.Servers, or ToolSet.Attach for a server made later, say one per
// request in getServer) and its own tools/list fetches are answered with
// names only:
//
//	tools, err := toolguardgosdk.Tools(handler, toolguardgosdk.Options{Servers: []*mcp.Server{server}})
//
// The fetch still goes through the handler as the caller, so go-sdk picks
// the server (the session's own, or getServer's per request), checks the
// request and runs every receiving middleware exactly as before; only
// after that does a receiving middleware the tool set adds to each server
// replace the tools in the result with their names (input schema
// {"type":"object"}), so go-sdk encodes, and the guard reads, almost
// nothing. The middleware acts only on a tools/list whose HTTP request
// carries the X-Toolguard-List header with a 128-bit random token the tool
// set made for that one fetch, valid while the fetch runs; every other
// request, a caller's tools/list included, is left alone. Attach a server
// after your own receiving middleware: middleware added to it later sees
// the guard's fetches with names only. A server that was not attached
// answers the fetch in full, which is still exact, only slower.
package toolguardgosdk

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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

	// Servers are go-sdk servers the handler serves. When any is given,
	// the tool set's tools/list fetches are answered with names only (see
	// the package documentation); servers made later can be added with
	// ToolSet.Attach. Without Servers or Attach, nothing changes.
	Servers []*mcp.Server
}

// Tools returns the tool set of the go-sdk handler h (the
// *mcp.StreamableHTTPHandler, or whatever handler the guard wraps).
func Tools(h http.Handler, opts Options) (*ToolSet, error) {
	if h == nil {
		return nil, errors.New("toolguardgosdk: Tools needs a handler (h is nil)")
	}
	for _, s := range opts.Servers {
		if s == nil {
			return nil, errors.New("toolguardgosdk: Options.Servers holds a nil server")
		}
	}
	t := &ToolSet{}
	d, err := toolguard.Discover(fetcher{t: t, h: h}, opts.Discover)
	if err != nil {
		return nil, err
	}
	t.d = d
	for _, s := range opts.Servers {
		t.Attach(s)
	}
	return t, nil
}

// ToolSet is the toolguard.ToolSet of a go-sdk handler.
type ToolSet struct {
	d *toolguard.Discovery

	// attached is set once a server is attached: only then do fetches
	// carry a token.
	attached atomic.Bool
	tokens   sync.Map // token of a fetch in flight: struct{}
}

// listHeader marks the tool set's own tools/list fetches once a server is
// attached: a 128-bit random token, hex-encoded, made for one fetch and
// valid only while it runs. A caller that sends it gains nothing: it is
// replaced on a fetch, and on any other request its value is no token.
const listHeader = "X-Toolguard-List"

// fetcher is the handler Discover asks: the go-sdk handler, with each
// fetch marked once a server is attached. Only Discover calls it.
type fetcher struct {
	t *ToolSet
	h http.Handler
}

func (f fetcher) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !f.t.attached.Load() {
		f.h.ServeHTTP(w, r)
		return
	}
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	tok := hex.EncodeToString(b[:])
	f.t.tokens.Store(tok, struct{}{})
	defer f.t.tokens.Delete(tok)
	// r is the fetch's own request, its header map its own: Set replaces
	// whatever value a caller's forwarded header had.
	r.Header.Set(listHeader, tok)
	f.h.ServeHTTP(w, r)
}

// Attach adds to s a receiving middleware that answers the tool set's own
// tools/list fetches with names only (see the package documentation). It
// is for servers made after Tools, such as one per request in getServer
// (the tool set keeps no reference to s). Attach each server once, after
// your own receiving middleware, so that all of it sees the full list.
func (t *ToolSet) Attach(s *mcp.Server) {
	if s == nil {
		return
	}
	t.attached.Store(true)
	s.AddReceivingMiddleware(t.namesOnly)
}

// namesOnly is the receiving middleware of Attach. It runs the request
// through the rest of the server (go-sdk's own handler and every
// middleware attached before it) untouched, and only then, for one of the
// tool set's own fetches, keeps the tools' names.
func (t *ToolSet) namesOnly(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || method != "tools/list" {
			return res, err
		}
		list, ok := res.(*mcp.ListToolsResult)
		if !ok || list == nil || !t.ours(req) {
			return res, err
		}
		return names(list), nil
	}
}

// ours reports whether req came with the token of a fetch in flight.
func (t *ToolSet) ours(req mcp.Request) bool {
	if req == nil {
		return false
	}
	extra := req.GetExtra()
	if extra == nil {
		return false
	}
	vs := extra.Header.Values(listHeader)
	if len(vs) != 1 || len(vs[0]) != 32 {
		return false
	}
	_, ok := t.tokens.Load(vs[0])
	return ok
}

// objectSchema is the input schema of every tool in a names-only list.
var objectSchema = json.RawMessage(`{"type":"object"}`)

// names returns list with each tool reduced to its name; every other
// member of the result (nextCursor, ttlMs, _meta) is kept.
func names(list *mcp.ListToolsResult) *mcp.ListToolsResult {
	out := *list
	tools := make([]mcp.Tool, len(list.Tools))
	out.Tools = make([]*mcp.Tool, len(list.Tools))
	for i, tl := range list.Tools {
		if tl == nil {
			continue // stays null, as go-sdk would have sent it
		}
		tools[i] = mcp.Tool{Name: tl.Name, InputSchema: objectSchema}
		out.Tools[i] = &tools[i]
	}
	return &out
}

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
