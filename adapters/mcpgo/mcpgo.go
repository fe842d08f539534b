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
// gave the caller's own tools/list. The tool set only reads: it adds
// nothing to the server and reads nothing in the background. With
// Options.AnswerBeforeServer the author asserts more, and an unknown name
// in a call without a session can be answered before the server. Only
// public mcp-go API is used.
package toolguardmcpgo

import (
	"errors"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	toolguard "github.com/toolguard/toolguard/middleware"
)

// Options configures Tools.
type Options struct {
	// AnswerBeforeServer lets the guard answer a tools/call without a
	// session (2026-07-28, or one without Mcp-Session-Id to a Stateless
	// server) and from no browser (no Origin or Sec-Fetch-Site) for a name
	// the server does not have without sending it to mcp-go, where mcp-go's
	// public API, read at call time, shows the name absent and nothing
	// between the guard and mcp-go's lookup can load, rename or refuse a
	// tool. mcp-go cannot show all of that, so setting it is an assertion
	// by the author: docs/RULES.md §1 ("AnswerBeforeServer") lists what is
	// checked at call time and what is asserted (no task tools or tool
	// filters, no session tools on the sessionless session, no refusal or
	// tool loading between the guard and mcp-go, guard.Handler(h) with h
	// itself, AllowedHosts as given to mcp-go, MaxBodyBytes no more than
	// mcp-go's body limit). Where an assertion is false the guard may
	// answer -32602 where mcp-go would have run the tool or refused the
	// call. A call in a session always goes to mcp-go (v1.6 refuses an id
	// already in flight in its session). Leave it unset when unsure.
	AnswerBeforeServer bool

	// Stateless asserts that h was built with server.WithStateLess(true),
	// so that mcp-go serves a 2025-era call without Mcp-Session-Id (its
	// default session manager refuses one with 404). Read only with
	// AnswerBeforeServer: with it, such a call can be answered before the
	// server.
	Stateless bool

	// AllowedHosts, read only with AnswerBeforeServer, are the hosts given
	// to mcp-go's WithAllowedHosts (v1.6), which has no getter: a call
	// whose Host is neither loopback nor one of them exactly is left to
	// mcp-go, which refuses it with 403.
	AllowedHosts []string
}

// ToolSet is the toolguard.ToolSet of an mcp-go server.
type ToolSet struct {
	s    *server.MCPServer
	own  *server.StreamableHTTPServer // the handler, when it is mcp-go's own
	opts Options

	// hadTool: the server has had a global tool. mcp-go takes the tools
	// capability with its first tool and never drops it, so this fact,
	// once true, stays true: it is not a copy of the registry.
	hadTool atomic.Bool
}

// Tools returns the tool set of s, served over HTTP by h. It adds
// nothing to s.
func Tools(s *server.MCPServer, h http.Handler, opts Options) (*ToolSet, error) {
	if s == nil || h == nil {
		return nil, errors.New("toolguardmcpgo: Tools needs the server and its handler")
	}
	t := &ToolSet{s: s, opts: opts}
	t.own, _ = h.(*server.StreamableHTTPServer)
	return t, nil
}

// Lookup reports a global tool as Present; any other name as Absent where
// AnswerBeforeServer lets the guard answer before the server, and
// otherwise as Unsure: mcp-go decides.
func (t *ToolSet) Lookup(r *http.Request, name string) toolguard.Presence {
	if t.s.GetTool(name) != nil {
		if !t.hadTool.Load() {
			t.hadTool.Store(true)
		}
		return toolguard.Present
	}
	if t.before(r) && t.hasGlobal() {
		return toolguard.Absent
	}
	return toolguard.Unsure
}

// List returns the server's global tools, read in process at call time.
// The guard asks it only where Lookup said Absent and it has seen no
// tools/list answer for the caller (the list it shows is the one mcp-go
// gave the caller, when there is one); ListTools copies every tool, so
// that read costs (about 0.6 ms at 1,000 tools here).
func (t *ToolSet) List(*http.Request) ([]string, error) {
	names := slices.Collect(maps.Keys(t.s.ListTools()))
	slices.Sort(names)
	return names, nil
}

// before reports whether the guard may answer r before the server (see
// Options.AnswerBeforeServer), the name not being a global tool.
func (t *ToolSet) before(r *http.Request) bool {
	if !t.opts.AnswerBeforeServer || t.own == nil {
		return false
	}
	v := r.Header.Get(mcp.HeaderProtocolVersion)
	if !mcp.IsModernProtocol(v) && (!t.opts.Stateless || r.Header.Get(server.HeaderKeySessionID) != "") {
		return false // a session: mcp-go decides
	}
	if h := t.s.GetHooks(); h != nil && (len(h.OnBeforeAny) > 0 || len(h.OnRequestInitialization) > 0 ||
		len(h.OnBeforeCallTool) > 0 || len(h.OnBeforeListTools) > 0 || len(h.OnAfterListTools) > 0) {
		return false
	}
	if v != "" && !t.own.SupportsProtocolVersion(v) {
		return false
	}
	if strings.Contains(r.URL.Path, "/.well-known/") || strings.Contains(r.URL.RawPath, "/.well-known/") {
		return false // mcp-go's protected resource metadata, which refuses a POST
	}
	if len(r.Header["Origin"]) > 0 || len(r.Header["Sec-Fetch-Site"]) > 0 {
		return false // a browser's: mcp-go's CORS headers belong on its answer
	}
	return t.hostServed(r)
}

// hostServed reports whether mcp-go serves r's Host: a loopback one, or,
// with AllowedHosts, one of them exactly; without, any Host unless r came
// to a loopback address (mcp-go's DNS-rebinding protection).
func (t *ToolSet) hostServed(r *http.Request) bool {
	if loopback(r.Host) {
		return true
	}
	if len(t.opts.AllowedHosts) > 0 {
		return r.Host != "" && slices.Contains(t.opts.AllowedHosts, r.Host)
	}
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return !ok || local == nil || !loopback(local.String())
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
