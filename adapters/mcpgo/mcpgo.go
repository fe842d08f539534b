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
// global tool, or a tool of the caller's registered session) is Present:
// the call reaches mcp-go untouched. Any other name is Unsure: the call
// reaches mcp-go untouched too, and the guard replaces only mcp-go's own
// not-found answer with its -32602 answer, whose data.availableTools is
// the caller's tools/list, asked through the handler as the caller after
// mcp-go said not found (so request hooks, AfterListTools hooks and tool
// filters apply to it as to the caller's own list). Hooks that load,
// rename or refuse tools at call time, and middleware between the guard
// and mcp-go, see every call as they would without the guard.
//
// A global tool is found in the names ListTools gave up to about a second
// ago, and otherwise (a name not among them, or names older than that) by
// GetTool: a tool added is Present at once, and a tool deleted can read as
// Present for up to about a second. A call to it in that time reaches
// mcp-go unwatched, and mcp-go's own not-found answer (-32602, without the
// list) goes out as it is. The names spare a known call GetTool, which
// copies the whole tool on every call (about 1.5 points of a known call's
// cost at 1,000 tools; docs/BENCHMARKS.md). While calls come they are read
// again once a second, in the background (ListTools copies every tool; no
// call waits for it).
//
// With Options.AnswerBeforeServer the author asserts more, and an unknown
// name can be answered before the server (see AnswerBeforeServer).
//
// Only public mcp-go API is used: GetTool, ListTools, GetHooks, the
// session hooks and SessionWithTools. Tools adds OnRegisterSession and
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
	"time"

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
	//     OnRequestInitialization, OnBeforeCallTool or OnAfterListTools
	//     hook (they can load or refuse a tool at call time, or hide a name
	//     from the caller's list);
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
	// The list in such an answer is read in process: the server's global
	// tools (read again first when the names read last are about a second
	// old: it may lag a change by that much) and the session's tools. The
	// answer is JSON (or one event where the client accepts only event
	// streams), and carries none of the
	// notifications mcp-go queued for the session: they go out with the
	// session's next request that reaches mcp-go.
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
	//     such refusals must happen in front of the guard.
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

	// Discover configures the caller's tools/list, asked through h as the
	// caller after mcp-go answered not found.
	Discover toolguard.DiscoverOptions
}

// ToolSet is the toolguard.ToolSet of an mcp-go server.
type ToolSet struct {
	s    *server.MCPServer
	h    http.Handler
	own  *server.StreamableHTTPServer // h, when it is mcp-go's own handler
	opts Options
	d    *toolguard.Discovery

	sessions sync.Map // session id → server.ClientSession, as mcp-go registered them

	global  atomic.Pointer[globalTools] // the server's global tools, as last read
	reading atomic.Bool                 // a read of them is under way in the background
	mu      sync.Mutex                  // held by every read of them
}

// globalTools is the server's global tool names as ListTools gave them at
// one time; old is set once they are namesTTL old.
type globalTools struct {
	names []string // sorted
	set   map[string]struct{}
	read  time.Time   // when the read began
	old   atomic.Bool // set namesTTL after read, by a timer: no call asks the clock
}

// Tools returns the tool set of s, served over HTTP by h. Call it after
// the server's options are set, before it serves.
func Tools(s *server.MCPServer, h http.Handler, opts Options) (*ToolSet, error) {
	if s == nil || h == nil {
		return nil, errors.New("toolguardmcpgo: Tools needs the server and its handler")
	}
	d, err := toolguard.Discover(h, opts.Discover)
	if err != nil {
		return nil, err
	}
	t := &ToolSet{s: s, h: h, opts: opts, d: d}
	t.own, _ = h.(*server.StreamableHTTPServer)
	t.mu.Lock()
	t.readGlobal()
	t.mu.Unlock()
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
	if t.knownGlobal(name) {
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

// List returns the caller's tools: read in process where the guard
// answers before the server, otherwise the caller's tools/list, asked
// through the handler as the caller.
func (t *ToolSet) List(r *http.Request) ([]string, error) {
	modern := mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion))
	session, registered := t.session(r, modern)
	if !t.before(r, modern, registered) {
		return t.d.List(r)
	}
	global := t.globalNames()
	if session == nil {
		return global, nil
	}
	own := session.GetSessionTools()
	if len(own) == 0 {
		return global, nil
	}
	names := slices.Clone(global)
	for n := range own {
		names = append(names, n)
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
		len(h.OnBeforeCallTool) > 0 || len(h.OnAfterListTools) > 0) {
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

// namesTTL is how long the global tool names read with ListTools are used.
const namesTTL = time.Second

// knownGlobal reports whether name is a global tool: in the names read
// less than namesTTL ago (as a timer tells, so that no call asks the
// clock), or, for any other name and whenever those are older, by GetTool.
// A known call thus never waits for ListTools (which copies every tool);
// once the names are old, the first call starts reading them again in the
// background. GetTool copies the tool it finds, which is what the names
// spare a known call.
func (t *ToolSet) knownGlobal(name string) bool {
	g := t.global.Load()
	if !g.old.Load() {
		if _, ok := g.set[name]; ok {
			return true
		}
	} else if t.reading.CompareAndSwap(false, true) {
		go func() {
			defer t.reading.Store(false)
			t.mu.Lock()
			defer t.mu.Unlock()
			if t.global.Load().old.Load() {
				t.readGlobal()
			}
		}()
	}
	return t.s.GetTool(name) != nil
}

// hasGlobal reports whether the server has had a global tool, from the
// names as last read, however old: mcp-go takes the tools capability with
// its first tool and never drops it, so a tools/call reaches its lookup
// from then on, whatever tools come and go.
func (t *ToolSet) hasGlobal() bool { return len(t.global.Load().names) > 0 }

// globalNames returns the server's global tool names, sorted, read less
// than namesTTL ago: read now if they are older. Only the list of an
// answer before the server uses them, and it waits for that read; callers
// that find the names old together wait for one read.
func (t *ToolSet) globalNames() []string {
	if g := t.global.Load(); !g.old.Load() {
		return g.names
	}
	asked := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	g := t.global.Load()
	if g.old.Load() && g.read.Before(asked) {
		g = t.readGlobal()
	}
	return g.names
}

// readGlobal reads the server's global tool names and keeps them; t.mu is
// held, so reads are kept in the order they were made. A read that finds
// the names unchanged keeps the slice read before, so the guard matches
// the list with the last one by identity.
func (t *ToolSet) readGlobal() *globalTools {
	start := time.Now()
	tools := t.s.ListTools()
	g := &globalTools{names: make([]string, 0, len(tools)), set: make(map[string]struct{}, len(tools)), read: start}
	for n := range tools {
		g.names = append(g.names, n)
		g.set[n] = struct{}{}
	}
	slices.Sort(g.names)
	if old := t.global.Load(); old != nil && slices.Equal(old.names, g.names) {
		g.names = old.names
	}
	if left := namesTTL - time.Since(start); left > 0 {
		time.AfterFunc(left, func() { g.old.Store(true) })
	} else {
		g.old.Store(true)
	}
	t.global.Store(g)
	return g
}
