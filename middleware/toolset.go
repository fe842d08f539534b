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
// Present only lets a call pass unwatched, which is always safe.
//
// List returns every name the caller could call, read in process, for
// the data of an answer before the server: it is asked only after Lookup
// said Absent, and an error passes the call to the server. (After the
// server, the list is the server's answer to the caller's own tools/list.)
// The middleware does not modify the returned slice, and the tool set must
// not change it after returning it (return a new slice for a new list;
// returning the same slice again is cheapest).
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
// cheap; an error means "cannot tell": the server decides.
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
