package toolguard

import (
	"maps"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"

	"github.com/toolguard/toolguard/internal/mcpwire"
)

// Presence is a tool set's answer about one tool name, before the server.
type Presence int

const (
	Unsure  Presence = iota // it cannot prove the server will not find the tool: the server decides
	Present                 // the caller can call the tool: the call passes, its answer read only for a changed list
	Absent                  // it read the very set the server's lookup uses, without the tool
)

// String returns "Present", "Absent" or "Unsure".
func (p Presence) String() string {
	switch p {
	case Present:
		return "Present"
	case Absent:
		return "Absent"
	}
	return "Unsure"
}

// A ToolSet knows which tools the server behind the middleware has for a
// request. It is asked per request, never snapshotted. Lookup runs on
// every tools/call and must be fast; it may answer Absent only where it
// read, in process and at call time, the set the server's own lookup will
// use, with nothing between the guard and that lookup that could rename,
// load or refuse a tool. Anything else is Unsure, and the server decides.
// List returns every name the caller could call, for the data of an answer
// before the server; it is asked only after Lookup said Absent, an error
// passes the call to the server, and the returned slice must not change
// afterwards. Implementations must be safe for concurrent use.
type ToolSet interface {
	Lookup(r *http.Request, name string) Presence
	List(r *http.Request) ([]string, error)
}

// StaticTools returns a ToolSet holding exactly the given names: the author
// asserts they are the tools of a stateless server, for every caller, and
// the guard answers any other name before the server. No names assert
// nothing (a server without tools refuses tools/call before any lookup).
// A call naming a session, a browser's, or one go-sdk or mcp-go may turn
// away by Host or path goes to the server; no other refusal is seen
// (docs/RULES.md §1): in front of another server, leave Options.Tools nil.
func StaticTools(names ...string) ToolSet {
	s := staticTools{set: make(map[string]struct{}, len(names))}
	for _, n := range names {
		s.set[n] = struct{}{}
	}
	s.sorted = slices.Sorted(maps.Keys(s.set))
	return s
}

type staticTools struct {
	set    map[string]struct{}
	sorted []string
}

func (s staticTools) Lookup(r *http.Request, name string) Presence {
	if _, ok := s.set[name]; ok {
		return Present
	}
	return notDeclared(len(s.set) == 0, r)
}

// notDeclared is a declared set's answer for a name it does not hold:
// Absent, unless it holds none (asserting nothing) or unseenRefusal(r).
func notDeclared(empty bool, r *http.Request) Presence {
	if empty || unseenRefusal(r) {
		return Unsure
	}
	return Absent
}

// unseenRefusal reports a request a declared set cannot see the server
// accept: one that names a session (the server may not know it, and
// answers 404); one from a browser (Origin, Sec-Fetch-Site: go-sdk's
// CrossOriginProtection may refuse it, and mcp-go's CORS adds headers to
// its answer); a POST under /.well-known/ (mcp-go's resource metadata
// refuses it); or one that reached a loopback address naming a Host that
// is not loopback (go-sdk and mcp-go refuse it with 403, against DNS
// rebinding).
func unseenRefusal(r *http.Request) bool {
	h := r.Header
	if len(h[mcpwire.HeaderSessionID]) > 0 || len(h["Origin"]) > 0 || len(h["Sec-Fetch-Site"]) > 0 || strings.Contains(r.URL.Path, "/.well-known/") {
		return true
	}
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return ok && local != nil && loopback(local.String()) && !loopback(r.Host)
}

// loopback reports whether addr (host, or host:port) names a loopback
// host as every SDK reads it: "localhost" (go-sdk takes no other letter
// case) or a loopback IP.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.Trim(addr, "[]")
	}
	ip, err := netip.ParseAddr(host)
	return host == "localhost" || err == nil && ip.IsLoopback()
}

func (s staticTools) List(*http.Request) ([]string, error) { return s.sorted, nil }

// ToolsFunc is a ToolSet backed by a function that returns the names the
// caller of r can call, asserted as with StaticTools (which calls it leaves
// to the server, and an empty list). It is called for every tools/call, so
// it should be cheap; an error means "cannot tell": the server decides.
type ToolsFunc func(r *http.Request) ([]string, error)

// Lookup calls f and reports whether name is among its names.
func (f ToolsFunc) Lookup(r *http.Request, name string) Presence {
	names, err := f(r)
	if err != nil {
		return Unsure
	}
	if slices.Contains(names, name) {
		return Present
	}
	return notDeclared(len(names) == 0, r)
}

// List calls f.
func (f ToolsFunc) List(r *http.Request) ([]string, error) { return f(r) }
