// Package toolguardmcpgo is the toolguard tool set for servers built with
// github.com/mark3labs/mcp-go:
//
//	httpServer := server.NewStreamableHTTPServer(mcpServer)
//	tools, err := toolguardmcpgo.Tools(mcpServer, httpServer, toolguardmcpgo.Options{})
//	if err != nil {
//		log.Fatal(err)
//	}
//	guard, err := toolguard.New(toolguard.Options{Tools: tools})
//	http.Handle("/mcp", guard.Handler(httpServer))
//
// The server decides; the guard translates. A global tool, looked up at
// call time with GetTool, is Present: the call and its answer pass (an
// event stream is read only for a list_changed).
// Any other name is Unsure: the call reaches mcp-go untouched too, and the
// guard replaces only mcp-go's own not-found answer, with the list mcp-go
// gave the caller's own tools/list. By default the tool set only reads:
// it adds nothing to the server and reads nothing in the background. With
// Options.AnswerBeforeServer the author asserts more, and an unknown name
// can be answered before the server; only then does Tools add session
// hooks to the server. Only public mcp-go API is used.
package toolguardmcpgo

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	toolguard "github.com/toolguard/toolguard/middleware"
)

// Options configures Tools.
type Options struct {
	// AnswerBeforeServer lets the guard answer a tools/call for a name the
	// server does not have without sending it to mcp-go, where mcp-go's
	// public API, read at call time, shows the name absent and nothing
	// between the guard and mcp-go's lookup can load, rename or refuse a
	// tool. mcp-go cannot show all of that, so setting it is an assertion
	// by the author: docs/RULES.md §1 ("AnswerBeforeServer") lists what is
	// checked at call time and what is asserted (no task tools or tool
	// filters, no session tools on the sessionless session, no refusal or
	// tool loading between the guard and mcp-go, guard.Handler(h) with h
	// itself). Where an assertion is false the guard may answer -32602
	// where mcp-go would have run the tool. With it, Tools adds
	// OnRegisterSession and OnUnregisterSession hooks to s (installing
	// empty Hooks when s has none), to know the caller's session tools;
	// call Tools before the server serves. Leave it unset when unsure.
	AnswerBeforeServer bool

	// Stateless asserts that h was built with server.WithStateLess(true),
	// so that mcp-go serves a 2025-era call without Mcp-Session-Id (its
	// default session manager refuses one with 404). Read only with
	// AnswerBeforeServer: with it, such a call can be answered before the
	// server.
	Stateless bool
}

// ToolSet is the toolguard.ToolSet of an mcp-go server.
type ToolSet struct {
	s    *server.MCPServer
	own  *server.StreamableHTTPServer // the handler, when it is mcp-go's own
	opts Options

	sessions sync.Map // session id → server.ClientSession, as mcp-go registered them

	// hadTool: the server has had a global tool. mcp-go takes the tools
	// capability with its first tool and never drops it, so this fact,
	// once true, stays true: it is not a copy of the registry.
	hadTool atomic.Bool
}

// Tools returns the tool set of s, served over HTTP by h. Call it after
// the server's options are set, before it serves.
func Tools(s *server.MCPServer, h http.Handler, opts Options) (*ToolSet, error) {
	if s == nil || h == nil {
		return nil, errors.New("toolguardmcpgo: Tools needs the server and its handler")
	}
	t := &ToolSet{s: s, opts: opts}
	t.own, _ = h.(*server.StreamableHTTPServer)
	if !opts.AnswerBeforeServer {
		return t, nil // the server decides every name but a global tool: nothing to add to s
	}
	if s.GetHooks() == nil {
		server.WithHooks(&server.Hooks{})(s)
	}
	hooks := s.GetHooks()
	hooks.AddOnRegisterSession(func(_ context.Context, cs server.ClientSession) {
		t.sessions.Store(cs.SessionID(), cs)
	})
	hooks.AddOnUnregisterSession(func(_ context.Context, cs server.ClientSession) {
		t.sessions.CompareAndDelete(cs.SessionID(), cs)
	})
	return t, nil
}

// Lookup reports a global tool (and, with AnswerBeforeServer, a tool of
// the caller's session) as Present; any other name as Absent where
// AnswerBeforeServer lets the guard answer before the server, and
// otherwise as Unsure: mcp-go decides.
func (t *ToolSet) Lookup(r *http.Request, name string) toolguard.Presence {
	if t.s.GetTool(name) != nil {
		if !t.hadTool.Load() {
			t.hadTool.Store(true)
		}
		return toolguard.Present
	}
	if !t.opts.AnswerBeforeServer {
		return toolguard.Unsure // no sessions are known: mcp-go decides
	}
	modern := mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion))
	session, registered := t.session(r, modern)
	if session != nil {
		if _, ok := session.GetSessionTools()[name]; ok {
			return toolguard.Present
		}
	}
	if t.before(r, modern, registered) && t.hasGlobal() {
		return toolguard.Absent
	}
	return toolguard.Unsure
}

// List returns the caller's tools, read in process at call time: the
// server's global tools and the caller's session's. The guard asks it only
// where Lookup said Absent and it has seen no tools/list answer for the
// caller (the list it shows is the one mcp-go gave the caller, when there
// is one); ListTools copies every tool, so that read costs (about 0.6 ms at
// 1,000 tools here).
func (t *ToolSet) List(r *http.Request) ([]string, error) {
	modern := mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion))
	session, _ := t.session(r, modern)
	global := t.s.ListTools()
	names := make([]string, 0, len(global))
	for n := range global {
		names = append(names, n)
	}
	if session != nil {
		for n := range session.GetSessionTools() {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// session returns the registered session r names, in the 2025 era, and
// whether the request's session is known: a registered one, or none on a
// server asserted stateless. A 2026-07-28 request has no session.
func (t *ToolSet) session(r *http.Request, modern bool) (server.SessionWithTools, bool) {
	if modern {
		return nil, true
	}
	id := r.Header.Get(server.HeaderKeySessionID)
	if id == "" {
		return nil, t.opts.Stateless
	}
	v, ok := t.sessions.Load(id)
	if !ok {
		return nil, false
	}
	st, _ := v.(server.SessionWithTools)
	return st, true
}

// before reports whether the guard may answer r before the server (see
// Options.AnswerBeforeServer), the name being known to be neither global
// nor the session's.
func (t *ToolSet) before(r *http.Request, modern, sessionKnown bool) bool {
	if !t.opts.AnswerBeforeServer || t.own == nil || !sessionKnown {
		return false
	}
	if h := t.s.GetHooks(); h != nil && (len(h.OnBeforeAny) > 0 || len(h.OnRequestInitialization) > 0 ||
		len(h.OnBeforeCallTool) > 0 || len(h.OnBeforeListTools) > 0 || len(h.OnAfterListTools) > 0) {
		return false
	}
	if v := r.Header.Get(mcp.HeaderProtocolVersion); v != "" && !t.own.SupportsProtocolVersion(v) {
		return false
	}
	if local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && local != nil &&
		loopback(local.String()) && !loopback(r.Host) {
		return false
	}
	return true
}

// loopback reports whether addr (host, or host:port) names a loopback
// host, as mcp-go's DNS-rebinding protection reads it.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.Trim(addr, "[]")
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// hasGlobal reports whether the server has had a global tool: mcp-go
// takes the tools capability with its first tool and never drops it, so a
// tools/call reaches its lookup from then on, whatever tools come and go.
// Until a tool was seen (found by a call, or by ListTools here), the
// registry is read.
func (t *ToolSet) hasGlobal() bool {
	if t.hadTool.Load() {
		return true
	}
	if len(t.s.ListTools()) > 0 {
		t.hadTool.Store(true)
		return true
	}
	return false
}
