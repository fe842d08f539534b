package toolguard

import (
	"net/http"
	"slices"
)

// Presence is a tool set's answer about one tool name, before the server.
type Presence int

const (
	// Unsure means the tool set cannot prove, before the server, that the
	// server will not find the tool. The call goes to the server, which
	// decides; the guard replaces only the server's own not-found answer.
	Unsure Presence = iota
	// Present means the caller can call the tool. The call goes to the
	// server untouched.
	Present
	// Absent means the tool set knows, before the server, that the server
	// will not find the tool: it read the very set the server's lookup
	// uses. The guard answers at once (after [ToolSet.List] confirms),
	// unless the request is one the server may refuse before its lookup;
	// then the server decides, as for Unsure.
	Absent
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
// request. It is asked per request, never snapshotted: tools come and go at
// runtime, and sessions, authentication and filters can change what one
// caller may call.
//
// Lookup runs on every tools/call and must be fast; it must answer Absent
// only where it read, in process and at call time, the set the server's
// own lookup will use (an author-declared set, or an SDK registry with
// nothing between the guard and the SDK's lookup that could rename, load
// or refuse a tool). Anything else is Unsure, and the server decides.
// Present only lets a call pass unwatched, which is always safe, so it may
// come from what the tool set read a moment ago (the mcp-go tool set's
// names are up to about a second old): a tool removed within that moment
// then gets the server's own not-found answer, untranslated.
//
// List returns every name the caller could call, for data.availableTools:
// after Lookup said Absent, or after the server answered not found. An
// error, or no list within Options.ListTimeout, leaves the list out of the
// answer (after the server) or passes the call to the server (before it).
// The middleware does not modify the returned slice, and the tool set must
// not change it after returning it (return a new slice for a new list;
// returning the same slice again is cheapest). List must return once its request's context is done: that
// context is how the guard bounds its wait by Options.ListTimeout (a
// cached list is returned at once; a fetch is waited for only until the
// context ends). The request it is given carries the [Call].
//
// Implementations must be safe for concurrent use.
type ToolSet interface {
	Lookup(r *http.Request, name string) Presence
	List(r *http.Request) ([]string, error)
}

// StaticTools returns a ToolSet holding exactly the given names, for servers
// whose tools never change. The author asserts that these are the tools the
// server has, for every caller: the guard answers any other name before the
// server. No names assert nothing (a server without tools refuses every
// tools/call before any lookup, as mcp-go does with -32601): every call
// then goes to the server, which decides.
func StaticTools(names ...string) ToolSet {
	s := staticTools{set: make(map[string]struct{}, len(names))}
	for _, n := range names {
		s.set[n] = struct{}{}
	}
	s.sorted = make([]string, 0, len(s.set))
	for n := range s.set {
		s.sorted = append(s.sorted, n)
	}
	slices.Sort(s.sorted)
	return s
}

type staticTools struct {
	set    map[string]struct{}
	sorted []string
}

func (s staticTools) Lookup(_ *http.Request, name string) Presence {
	if _, ok := s.set[name]; ok {
		return Present
	}
	if len(s.set) == 0 {
		return Unsure
	}
	return Absent
}

func (s staticTools) List(*http.Request) ([]string, error) { return s.sorted, nil }

// ToolsFunc is a ToolSet backed by a function that returns the names the
// caller of r can call: the author asserts that these are the tools the
// server will run for that caller, and the guard answers any other name
// before the server (an empty list asserts nothing, as with StaticTools:
// the server decides). It is called for every tools/call, so it should be
// cheap (Lookup calls it with the caller's request, whose context only
// the caller ends); an error means "cannot tell": the server decides. Like
// any List, f must return once r's context is done: the guard bounds its
// wait for a list by Options.ListTimeout through that context, and waits
// for f.
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
	if len(names) == 0 {
		return Unsure
	}
	return Absent
}

// List calls f.
func (f ToolsFunc) List(r *http.Request) ([]string, error) { return f(r) }
