package toolguard

import (
	"net/http"
	"slices"
)

// Presence is a tool set's fast answer about one tool name.
type Presence int

const (
	// Unsure means the tool set cannot tell (an error, a timeout, a session
	// it does not know). The request passes through to the server.
	Unsure Presence = iota
	// Present means the caller can call the tool. The request passes through.
	Present
	// Absent means the tool set believes the tool is not callable. The
	// middleware then asks [ToolSet.List] for the authoritative list and
	// rejects only if the name is not in it.
	Absent
)

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
// Lookup runs on every tools/call and must be fast. List runs only when
// Lookup said [Absent]; it returns every name the caller could call, and
// an error when it cannot tell, which passes the request through. The
// middleware does not modify the returned slice.
//
// Implementations must be safe for concurrent use.
type ToolSet interface {
	Lookup(r *http.Request, name string) Presence
	List(r *http.Request) ([]string, error)
}

// A Redeliverer is a ToolSet whose own requests to the server may take
// messages the server meant for the caller (mcp-go hands a session's
// queued notifications to whichever of the session's POSTs runs next).
// The guard carries such messages in its answer when it rejects the call;
// when the call passes through instead, it hands them to Redeliver, which
// gives them back to the server to deliver with the call.
type Redeliverer interface {
	Redeliver(r *http.Request, msgs [][]byte)
}

// StaticTools returns a ToolSet holding exactly the given names, for servers
// whose tools never change.
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
	return Absent
}

func (s staticTools) List(*http.Request) ([]string, error) { return s.sorted, nil }

// ToolsFunc is a ToolSet backed by a function that returns the names the
// caller of r can call. It is called for every tools/call, so it should be
// cheap; an error means "cannot tell" and passes the request through.
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
	return Absent
}

// List calls f.
func (f ToolsFunc) List(r *http.Request) ([]string, error) { return f(r) }
