package toolguard

import (
	"maps"
	"net/http"
	"slices"
)

// Presence is a tool set's answer about one tool name, before the server.
type Presence int

const (
	Unsure  Presence = iota // it cannot prove the server will not find the tool: the server decides
	Present                 // the caller can call the tool: the call passes unwatched
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
	s.sorted = slices.Sorted(maps.Keys(s.set))
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
