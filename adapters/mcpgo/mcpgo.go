// Package toolguardmcpgo is the toolguard tool set for servers built with
// github.com/mark3labs/mcp-go.
//
// The package is named after the kit and the SDK, so it needs no alias next
// to mcp-go's own server and mcp packages:
//
//	mcpServer := server.NewMCPServer("weather", "1.0.0", server.WithToolCapabilities(true))
//	// ... mcpServer.AddTool(...)
//	httpServer := server.NewStreamableHTTPServer(mcpServer)
//
//	tools, err := toolguardmcpgo.Tools(mcpServer, httpServer, toolguardmcpgo.Options{})
//	if err != nil {
//		log.Fatal(err)
//	}
//	guard, err := toolguard.New(toolguard.Options{Tools: tools})
//	if err != nil {
//		log.Fatal(err)
//	}
//	http.Handle("/mcp", guard.Handler(httpServer))
//
// The server decides; the guard translates. A name the server has (a
// global tool, or a tool of the caller's registered session, looked up at
// call time with GetTool and the session's tools) is Present: the call
// reaches mcp-go untouched. Any other name is Unsure: the call reaches
// mcp-go untouched too, and the guard replaces only mcp-go's own not-found
// answer with its -32602 answer, whose data.availableTools is the list
// mcp-go gave the caller in answer to the caller's own tools/list, read as
// it passed (so request hooks, AfterListTools hooks and tool filters apply
// to it as they did for the caller). Hooks that load, rename or refuse
// tools at call time, and middleware between the guard and mcp-go, see
// every call as they would without the guard. The tool set reads nothing
// in the background and keeps no copy of the registry.
//
// With Options.AnswerBeforeServer the author asserts more, and an unknown
// name can be answered before the server (see AnswerBeforeServer).
//
// Only public mcp-go API is used: GetTool, ListTools (for an answer before
// the server), GetHooks, the session hooks and SessionWithTools. Tools adds OnRegisterSession and
// OnUnregisterSession hooks to the server (installing empty Hooks when the
// server has none), to know the sessions mcp-go registered; call it before
// the server serves.
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
	// server does not have without sending it to mcp-go, at a fraction of
	// the cost of mcp-go's own answer. The tool set then answers Absent
	// when all of these hold at call time:
	//
	//   - h is mcp-go's own *server.StreamableHTTPServer (no middleware
	//     between the guard and mcp-go that could rename, load or refuse a
	//     tool);
	//   - the server's Hooks (read at call time) have no OnBeforeAny,
	//     OnRequestInitialization, OnBeforeCallTool, OnBeforeListTools or
	//     OnAfterListTools hook (they can load or refuse a tool at call or
	//     list time, or hide a name from the caller's list);
	//   - the server has had a global tool (mcp-go takes the tools
	//     capability with its first tool and keeps it; a server without
	//     it answers -32601), and the name is neither a global tool nor a
	//     tool of the caller's session;
	//   - the request arrived on a non-loopback address or names a loopback
	//     Host (mcp-go's DNS-rebinding protection refuses the rest with 403),
	//     and its MCP-Protocol-Version, if any, is one h serves;
	//   - in the 2025 era, the request carries the Mcp-Session-Id of a
	//     session the tool set saw mcp-go register (and not unregister), or
	//     carries none and Stateless is set; in the 2026-07-28 era (which
	//     has no sessions), always.
	//
	// The list in such an answer is read in process at call time: the
	// server's global tools (ListTools) and the session's tools. The answer
	// is JSON (or one event where the client accepts only event streams),
	// and carries none of the notifications mcp-go queued for the session:
	// they go out with the session's next request that reaches mcp-go.
	//
	// mcp-go offers no public API to read the rest, so by setting this the
	// author asserts, for as long as the server runs:
	//
	//   - no task tools (AddTaskTool, AddTaskTools) and no tool filters
	//     (WithToolFilter): both make the server's lookup differ from
	//     GetTool;
	//   - no session tools on the sessionless session: mcp-go serves every
	//     2026-07-28 request, and every 2025-era request without a session
	//     on a stateless server, in a session without an id whose tools no
	//     public API reads; a tool handler must not SetSessionTools there;
	//   - no refusal before dispatch that the guard cannot see: no session
	//     id manager (WithSessionIdManager, WithSessionIdManagerResolver)
	//     that refuses a session mcp-go registered, no authentication
	//     (WithProtectedResourceMetadata with a check in the handler chain,
	//     an HTTPContextFunc that refuses) between the guard and mcp-go;
	//     such refusals must happen in front of the guard;
	//   - no tools loaded at call time outside the hooks above: an
	//     HTTPContextFunc (WithHTTPContextFunc) that calls SetSessionTools
	//     when a header is present loads its tool after the guard has
	//     looked, and the guard answers first;
	//   - the handler the guard wraps is h itself: guard.Handler(h). The
	//     checks above read h; a middleware between the guard and h
	//     (guard.Handler(alias(h)), one that renames old_echo to echo) is
	//     not seen, and a name it would rename is answered first.
	//
	// Where an assertion is false the guard may answer -32602 where mcp-go
	// would have run the tool or refused the request. Leave it unset when
	// unsure: every answer is then mcp-go's, translated.
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

// Lookup reports a global tool or a tool of the caller's session as
// Present; any other name as Absent where AnswerBeforeServer lets the
// guard answer before the server, and otherwise as Unsure: mcp-go decides.
func (t *ToolSet) Lookup(r *http.Request, name string) toolguard.Presence {
	if t.s.GetTool(name) != nil {
		if !t.hadTool.Load() {
			t.hadTool.Store(true)
		}
		return toolguard.Present
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
