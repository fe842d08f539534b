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
// How it knows what is registered, for each call:
//
//   - A global tool is known at once, from the server's own registry.
//   - A session tool is read from the caller's session as the server reads
//     it (mcp-go's session tool store), live, on every call.
//   - Everything else (task tools, tools hidden by tool filters, unknown
//     names) is settled by the caller's own list, got in one of the two
//     ways below.
//   - That list is reused for the same caller until the server announces a
//     change (tools/list_changed, heard by an in-process watcher session),
//     the caller's session tools change, the session ends, or Options.MaxAge
//     passes; a list read in a session only in that session, and only for
//     a session mcp-go registered after Tools. This needs the listChanged
//     capability (on by default once tools are added); without it every
//     rejection is confirmed with a fresh list, with every schema.
//
// The caller's list is put together in process where that can be proven
// the same as the server's: h is mcp-go's own *server.StreamableHTTPServer,
// the server has no tool filter but the tool set's and no
// OnRequestInitialization hook, and the caller speaks a 2025 protocol
// version. The tool set then sends a ping through h as the caller (same
// session, headers and _meta), which proves that mcp-go accepts the caller
// as far as its dispatch (Host and session checks), and the list is the
// server's list (its global and task tools, as the first caller without
// session tools after each change was listed them) with the session tools
// of the session mcp-go dispatched the ping with. No tools/list runs for
// such a caller, so a new caller costs about what mcp-go's own answer
// costs, however many tools there are.
//
// Whatever the server sends the caller on the tool set's requests (mcp-go
// delivers a session's queued notifications on the session's next POST)
// goes out with the guard's answer, before it, as events.
//
// Otherwise the tool set asks the handler for the caller's tools/list, as
// the caller, so sessions, tool filters and the HTTP context function
// apply exactly as for the call. When h is mcp-go's own handler, a filter
// the tool set adds to the server (see below) takes the names from that
// list in process, so the reply carries no tool and mcp-go encodes no
// schema; through any other handler (one that might filter, rename or
// cache replies) the reply is read, whole.
//
// Tools changes the server it is given, invisibly to clients: it appends a
// tool filter that returns every tool unchanged except in the tool set's
// own tools/list requests (where the server's OnBeforeListTools and
// OnAfterListTools hooks see them, with an empty result), it adds
// OnRegisterSession, OnUnregisterSession and OnBeforePing hooks
// (installing empty Hooks if the server has none; the server's own ping
// hooks see the tool set's pings), and it registers the watcher session.
// Call Tools after the server's options, hooks and tools are set and
// before it serves: a tool filter or request hook added to the server
// after Tools would not be applied to the names the guard lists. Whether
// the server has tool filters is read once, in Tools: mcp-go offers no way
// to ask, so the tool set reads the length of the server's (unexported)
// filter list by reflection; with another mcp-go where that field is
// missing, lists are always asked of the server.
package toolguardmcpgo

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	toolguard "github.com/toolguard/toolguard/middleware"
)

// Options configures Tools.
type Options struct {
	// Discover configures the tools/list requests: Timeout, MaxBodyBytes
	// and MaxPages bound each one, Key says which callers may share a list
	// (see below), MinInterval spaces one caller's requests and MaxWait
	// bounds how long a call waits for another call's request.
	//
	// A list read in a session is only ever reused in that session, whatever
	// Key says; Key returning "" shares and reuses nothing.
	Discover toolguard.DiscoverOptions

	// MaxAge bounds how long a caller's list is reused while no
	// list_changed notification arrives and the caller's session tools do
	// not change; it covers tool filters whose answer changes with time and
	// session ids that a custom session id manager stops accepting without
	// unregistering the session. Default 1s.
	MaxAge time.Duration
}

// Tools returns the tool set of s, served over HTTP by h (the
// *server.StreamableHTTPServer of s, or whatever handler the guard wraps).
// Call it after the server's tools and options are set, before it serves.
// Close stops the watcher.
func Tools(s *server.MCPServer, h http.Handler, opts Options) (*ToolSet, error) {
	if s == nil {
		return nil, errors.New("toolguardmcpgo: Tools needs the MCPServer (s is nil)")
	}
	if h == nil {
		return nil, errors.New("toolguardmcpgo: Tools needs a handler (h is nil)")
	}
	if opts.MaxAge < 0 {
		return nil, errors.New("toolguardmcpgo: Options.MaxAge must not be negative")
	}
	if opts.MaxAge == 0 {
		opts.MaxAge = time.Second
	}
	key := opts.Discover.Key
	if key == nil {
		key = toolguard.CallerKey
	}
	// The tool set's own list requests (marked in their context) skip the
	// Discovery's cache and sharing: their reply is empty, the names come
	// through the capture. The tool set shares and reuses them itself.
	dopts := opts.Discover
	dopts.Key = func(r *http.Request) string {
		if r.Context().Value(captureKey{}) != nil {
			return ""
		}
		return key(r)
	}
	d, err := toolguard.Discover(h, dopts)
	if err != nil {
		return nil, err
	}
	// Names are taken inside mcp-go, so they are what the caller would be
	// listed only if nothing stands between the tool set and mcp-go that
	// could filter, rename or cache the reply.
	_, bare := h.(*server.StreamableHTTPServer)
	t := &ToolSet{s: s, d: d, key: key, maxAge: opts.MaxAge, bare: bare,
		minInterval: opts.Discover.MinInterval, maxWait: opts.Discover.MaxWait,
		callers: map[string]*caller{}, sessions: map[string]*life{}}
	if t.minInterval == 0 {
		t.minInterval = 10 * time.Millisecond
	}
	if t.maxWait == 0 {
		t.maxWait = 2 * time.Second
	}
	t.watch = &watcher{id: "toolguard-watch-" + rand.Text(), ch: make(chan mcp.JSONRPCNotification, 64)}
	hooks := s.GetHooks()
	if hooks == nil {
		hooks = &server.Hooks{}
		server.WithHooks(hooks)(s)
	}
	hooks.AddOnRegisterSession(t.sessionStarted)
	hooks.AddOnUnregisterSession(t.sessionEnded)
	hooks.AddBeforePing(t.pinged)
	server.WithToolFilter(t.capture)(s)
	t.lean = bare && onlyFilter(s)
	if err := s.RegisterSession(context.Background(), t.watch); err != nil {
		return nil, err
	}
	return t, nil
}

// ToolSet is the toolguard.ToolSet of an mcp-go server.
type ToolSet struct {
	s           *server.MCPServer
	d           *toolguard.Discovery
	key         func(*http.Request) string
	maxAge      time.Duration
	minInterval time.Duration
	maxWait     time.Duration
	watch       *watcher
	bare        bool // h is mcp-go's own handler: lists can be captured
	// lean: h is mcp-go's own handler and the server has no tool filter
	// but the tool set's, so a caller's list is the server's tools plus
	// the caller's session tools, and can be put together in process.
	lean bool

	version   atomic.Int64 // bumped on every list_changed the watcher hears
	checkOnce sync.Once
	notifies  bool        // the server sends list_changed
	closed    atomic.Bool // Close was called: nothing is reused any more

	mu       sync.Mutex
	callers  map[string]*caller // by caller key and session id
	sessions map[string]*life   // the sessions registered since Tools, by id
	recent   [4]*internedList   // the last lists read, shared by callers listed the same
	next     int                // where the next list goes in recent

	// globals holds the server's global tool names as of a version, kept
	// while the server announces its changes; read without locking.
	globals  atomic.Pointer[globalNames]
	draining atomic.Bool // a notification is being taken off the channel

	// base holds the server's list as a caller without session tools
	// gets it (global and task tools) as of a version, for lean lists.
	base atomic.Pointer[baseList]
	// sessionless reads the session tools of callers without a session.
	sessionless server.SessionWithTools

	// last remembers the list the last Absent of Lookup was read from, so
	// that the List the guard makes next for the same call finds it without
	// computing the caller's key again.
	last atomic.Pointer[lastAbsent]
}

type baseList struct {
	version int64
	names   []string
}

type globalNames struct {
	version int64
	names   map[string]struct{}
}

// caller is what the tool set keeps for one caller. t.mu guards it.
type caller struct {
	list    *list     // the caller's last list that may be reused, or nil
	flight  *flight   // the request for the caller's list in progress, or nil
	lastEnd time.Time // when the last request ended
	// session is the caller's session as mcp-go gave it to the last
	// request, for Redeliver (a session the tool set did not see
	// registered has no life).
	session server.ClientSession
}

// list is one caller's tools/list as the tool set keeps it.
type list struct {
	names   []string // as the server listed them
	sorted  []string // the same, sorted, for lookups
	version int64    // t.version when the request started
	at      time.Time
	// session is the caller's session as mcp-go gave it to its tool
	// filters or its ping, nil without one; sessionTools its session tools
	// at that moment; life ends when mcp-go unregisters it.
	session      server.SessionWithTools
	sessionTools []sessionTool
	life         *life
}

// sessionTool is one of a session's tools: the key mcp-go finds it by in a
// call, and the name it lists it under (a server setting a session's tools
// directly may give them other keys).
type sessionTool struct{ key, name string }

// life is a registered session's: ended is set when mcp-go unregisters it.
type life struct {
	ended   atomic.Bool
	session server.ClientSession
}

type flight struct {
	done chan struct{}
	l    *list
	err  error
}

type lastAbsent struct {
	req *http.Request
	l   *list
}

type internedList struct{ names, sorted []string }

const maxCallers = 10000

var errBusy = errors.New("toolguardmcpgo: no list for this caller within MinInterval or MaxWait")

// Lookup reports a global tool, a session tool of the caller and any name
// in the caller's current list Present; any other name Absent.
func (t *ToolSet) Lookup(r *http.Request, name string) toolguard.Presence {
	if t.isGlobal(name) {
		return toolguard.Present
	}
	if !t.watching() || !t.bare {
		// No capture of the session's tools here: mcp-go finds a session
		// tool by its key, which a list (names) may not show.
		if t.sessionToolKey(r, name) {
			return toolguard.Present
		}
	}
	if !t.watching() {
		return t.d.Lookup(r, name)
	}
	// A global tool added since the names were read, whose list_changed
	// has not reached the watcher yet (mcp-go registers a tool, then tells
	// the sessions one by one): ask the registry itself.
	if t.s.GetTool(name) != nil {
		return toolguard.Present
	}
	key := t.callerKey(r)
	if key == "" {
		return toolguard.Absent // List asks the server
	}
	l, sessionTools := t.current(key)
	if l == nil {
		return toolguard.Absent // List asks the server
	}
	if _, ok := slices.BinarySearch(l.sorted, name); ok {
		return toolguard.Present
	}
	if _, ok := sessionTools[name]; ok {
		return toolguard.Present
	}
	t.last.Store(&lastAbsent{req: r, l: l})
	return toolguard.Absent
}

// List returns the caller's tools/list: the one Lookup read while it is
// current, otherwise one asked for now. Without list_changed announcements
// every list is asked for after the call arrived, through the Discovery.
func (t *ToolSet) List(r *http.Request) ([]string, error) {
	if !t.watching() {
		return t.d.List(r)
	}
	// Lookup has just read this list, session tools and all.
	if la := t.last.Load(); la != nil && sameCall(la.req, r) && t.unchanged(la.l) {
		return la.l.names, nil
	}
	key := t.callerKey(r)
	var l *list
	var err error
	if key == "" {
		l, _, err = t.ask(r)
	} else {
		l, err = t.shared(r, key)
	}
	if err != nil {
		return nil, err
	}
	return l.forCall(r), nil
}

// forCall returns l's names for the call of r: with the call's name added
// when it is the key of one of the caller's session tools listed under
// another name (mcp-go finds a session tool by its key), so that the
// guard never rejects it; the names kept for later calls stay as listed.
func (l *list) forCall(r *http.Request) []string {
	c, ok := toolguard.CallFromContext(r.Context())
	if !ok {
		return l.names
	}
	for _, st := range l.sessionTools {
		if st.key == c.Name && st.name != c.Name {
			return append(slices.Clip(l.names), c.Name)
		}
	}
	return l.names
}

// sessionToolKey reports whether name is a key of the session tools of
// r's session, as mcp-go reads them for a call, for a session the tool
// set saw registered.
func (t *ToolSet) sessionToolKey(r *http.Request, name string) bool {
	id := r.Header.Get("Mcp-Session-Id")
	if id == "" {
		return false
	}
	if c, ok := toolguard.CallFromContext(r.Context()); ok && c.Modern {
		return false // mcp-go ignores Mcp-Session-Id in 2026-07-28 requests
	}
	t.mu.Lock()
	lf := t.sessions[id]
	t.mu.Unlock()
	if lf == nil || lf.ended.Load() {
		return false
	}
	st, ok := lf.session.(server.SessionWithTools)
	if !ok {
		return false
	}
	_, found := st.GetSessionTools()[name]
	return found
}

// callerKey is the key of r's caller in the tool set: the Discover key
// with the session id added, so that a list read in one session is never
// used in another, whatever the Discover key says. "" shares nothing.
func (t *ToolSet) callerKey(r *http.Request) string {
	k := t.key(r)
	if k == "" {
		return ""
	}
	if ids := r.Header["Mcp-Session-Id"]; len(ids) > 0 {
		return k + "\x00session\x00" + ids[0]
	}
	return k
}

// sameCall reports whether b stands for the call of a, the request Lookup
// saw: a itself (a 2026-07-28 call), or the shallow copy the guard makes of
// a 2025-era call to give List its call, when the call has no _meta (a
// call's _meta is part of List's key). Two requests share their URL and
// header map only when one is such a copy of the other.
func sameCall(a, b *http.Request) bool {
	if a == b {
		return true
	}
	if a.URL != b.URL || reflect.ValueOf(a.Header).UnsafePointer() != reflect.ValueOf(b.Header).UnsafePointer() {
		return false
	}
	c, ok := toolguard.CallFromContext(b.Context())
	return ok && !c.Modern && c.Meta == nil
}

// watching reports whether lists may be reused: the server announces its
// changes and the watcher that hears them runs.
func (t *ToolSet) watching() bool { return t.announces() && !t.closed.Load() }

// current returns the caller's list if it is still current, with the
// session tools fresh read.
func (t *ToolSet) current(key string) (*list, map[string]server.ServerTool) {
	t.mu.Lock()
	t.drain()
	var l *list
	if c := t.callers[key]; c != nil {
		l = c.list
	}
	t.mu.Unlock()
	if l == nil {
		return nil, nil
	}
	ok, sessionTools := t.fresh(l)
	if !ok {
		return nil, nil
	}
	return l, sessionTools
}

// fresh reports whether l is still the caller's list: no announced change,
// not older than MaxAge, its session alive with the same session tools. It
// returns the session tools it read, nil without a session.
func (t *ToolSet) fresh(l *list) (bool, map[string]server.ServerTool) {
	if !t.unchanged(l) {
		return false, nil
	}
	if l.session == nil {
		return true, nil
	}
	now := l.session.GetSessionTools()
	if len(now) != len(l.sessionTools) {
		return false, nil
	}
	for _, st := range l.sessionTools {
		if tool, ok := now[st.key]; !ok || tool.Tool.Name != st.name {
			return false, nil
		}
	}
	return true, now
}

// unchanged is fresh without the session tools: the cheap part.
func (t *ToolSet) unchanged(l *list) bool {
	return l.version == t.version.Load() && time.Since(l.at) <= t.maxAge &&
		!t.closed.Load() && (l.life == nil || !l.life.ended.Load())
}

// shared returns a list for the caller of r: the current one, the one a
// request in progress brings (calls that arrive together share it), or a
// new one. One caller's requests are at least MinInterval apart (end of
// one to start of the next) and a call waits at most MaxWait for another
// call's; when neither allows a list, the call passes through.
func (t *ToolSet) shared(r *http.Request, key string) (*list, error) {
	deadline := time.Now().Add(t.maxWait)
	t.mu.Lock()
	t.drain()
	arrived := t.version.Load() // the changes this call came after
	c := t.callers[key]
	if c == nil {
		if len(t.callers) >= maxCallers {
			clear(t.callers)
		}
		c = &caller{}
		t.callers[key] = c
	}
	if l := c.list; l != nil {
		if ok, _ := t.fresh(l); ok {
			t.mu.Unlock()
			return l, nil
		}
	}
	f := c.flight
	if f == nil {
		if next := c.lastEnd.Add(t.minInterval); time.Now().Before(next) {
			t.mu.Unlock()
			return nil, errBusy
		}
		f = &flight{done: make(chan struct{})}
		c.flight = f
		go t.fly(r, c, f)
	}
	t.mu.Unlock()
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case <-f.done:
	case <-timer.C:
		return nil, errBusy
	case <-r.Context().Done():
		return nil, r.Context().Err()
	}
	if f.err != nil {
		return nil, f.err
	}
	// A call that joined a request started before a change it came after
	// cannot be decided by that request's list.
	if f.l.version < arrived {
		return nil, errBusy
	}
	return f.l, nil
}

// settled takes the notifications the server has sent and returns the
// version they make.
func (t *ToolSet) settled() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.drain()
	return t.version.Load()
}

// fly asks for the caller's list and hands it to every call waiting for
// it; it runs on its own, so a call waits at most MaxWait even for its own
// request (which keeps going for the calls after it, up to Timeout).
func (t *ToolSet) fly(r *http.Request, c *caller, f *flight) {
	var reuse bool
	f.l, reuse, f.err = t.ask(r)
	t.mu.Lock()
	c.flight, c.lastEnd = nil, time.Now()
	if f.err == nil && reuse {
		c.list = f.l
	}
	if f.err == nil {
		if s, ok := f.l.session.(server.ClientSession); ok && s.SessionID() != "" && s.SessionID() == r.Header.Get("Mcp-Session-Id") {
			c.session = s
		}
	}
	t.mu.Unlock()
	close(f.done)
}

// ask finds the caller's list and reports whether later calls may be
// decided by it (a session caller's session must be one the tool set can
// watch).
//
// Where it can (see leanCaller) and the server's own list is known for the
// current version, it sends a ping through the handler, as the caller: it
// proves that the server accepts the caller's requests as far as its
// dispatch, where the tool set's ping hook records the session mcp-go gave
// it, and the list is the server's list with that session's tools.
//
// Otherwise it sends the caller's tools/list through the handler with a
// capture in its context: the tool set's filter, last in the server's
// chain, takes the names there and empties the reply (or, when the capture
// does not reach mcp-go, the reply is read). Where lists could be put
// together, a list without session tools is the server's list: it is kept
// for the next callers.
func (t *ToolSet) ask(r *http.Request) (l *list, reuse bool, err error) {
	at := time.Now()
	lean := t.leanCaller(r)
	cp := &captured{owner: t}
	var v int64
	if b := t.base.Load(); lean && b != nil && b.version == t.settled() {
		if err := t.d.Ping(withCapture(r, cp)); err != nil {
			return nil, false, err
		}
		// The server's list must still be current once mcp-go dispatched
		// the ping; after a change the caller's list is asked for.
		if cp.isDone() && b.version == t.settled() {
			v = b.version
			cp.mu.Lock()
			cp.names = withSessionTools(b.names, cp.sessionTools)
			cp.mu.Unlock()
		} else {
			cp = &captured{owner: t}
		}
	}
	if !cp.isDone() {
		v = t.settled()
		lr := r
		if t.bare {
			lr = withCapture(r, cp)
		}
		names, err := t.d.List(lr)
		if err != nil {
			return nil, false, err
		}
		cp.mu.Lock()
		if !cp.done {
			cp.names = names
		} else if lean && len(cp.sessionTools) == 0 {
			t.keepBase(v, cp.names)
		}
		cp.mu.Unlock()
	}
	l = &list{version: v, at: at}
	sessionID := ""
	if call, ok := toolguard.CallFromContext(r.Context()); !ok || !call.Modern {
		// mcp-go ignores Mcp-Session-Id in 2026-07-28 requests.
		sessionID = r.Header.Get("Mcp-Session-Id")
	}
	cp.mu.Lock()
	done := cp.done
	l.names, l.session, l.sessionTools = cp.names, cp.session, cp.sessionTools
	capturedID := cp.sessionID
	cp.mu.Unlock()
	switch {
	case !done:
		// No capture (a handler that is not mcp-go's own, a context
		// function that replaced the request's context): the reply had
		// the list. A session caller's session tools cannot be watched
		// then, so only a caller without one may reuse it.
		reuse = sessionID == ""
	case sessionID == "":
		// mcp-go serves a caller without a session id with a session of
		// id "": one a GET stream registered, or a throwaway one per
		// request. Either reads the session tools mcp-go keeps under "",
		// which are watched through one handle shared by every such
		// caller (a throwaway session per caller would hold its buffers).
		if l.session != nil {
			l.session = t.sessionlessHandle(l.session)
		}
		reuse = capturedID == ""
	default:
		// Reused only in a session mcp-go registered after Tools and has
		// not unregistered since, and only if the capture saw that session.
		t.mu.Lock()
		l.life = t.sessions[sessionID]
		t.mu.Unlock()
		reuse = capturedID == sessionID && l.life != nil && !l.life.ended.Load()
	}
	l.names, l.sorted = t.intern(l.names)
	return l, reuse, nil
}

func withCapture(r *http.Request, cp *captured) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), captureKey{}, cp))
}

// leanCaller reports whether the caller's list may be put together in
// process: lean (mcp-go's own handler, no tool filter but the tool set's),
// a 2025-era caller (only those have a ping, and mcp-go checks a
// 2026-07-28 request's headers per method after its hooks), and no
// OnRequestInitialization hook on the server as it is now: that hook is
// the one place a server refuses a request by its method before
// dispatching it, and a ping must be accepted exactly where the call is.
func (t *ToolSet) leanCaller(r *http.Request) bool {
	if !t.lean {
		return false
	}
	if h := t.s.GetHooks(); h == nil || len(h.OnRequestInitialization) > 0 {
		return false
	}
	c, ok := toolguard.CallFromContext(r.Context())
	return ok && !c.Modern
}

// keepBase keeps names as the server's list (global and task tools) as of
// version v, unless a later one is kept.
func (t *ToolSet) keepBase(v int64, names []string) {
	b := &baseList{version: v, names: names}
	for {
		old := t.base.Load()
		if old != nil && old.version >= v || t.base.CompareAndSwap(old, b) {
			return
		}
	}
}

// withSessionTools returns the list mcp-go gives a session with tools
// whose server list is base: each session tool replaces the tool listed
// under its key and is listed under its name. base itself when there are
// none.
func withSessionTools(base []string, tools []sessionTool) []string {
	if len(tools) == 0 {
		return base
	}
	byKey := make(map[string]string, len(base)+len(tools))
	for _, n := range base {
		byKey[n] = n
	}
	for _, st := range tools {
		byKey[st.key] = st.name
	}
	names := make([]string, 0, len(byKey))
	for _, n := range byKey {
		names = append(names, n)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// sessionlessHandle returns the handle through which the session tools
// of callers without a session are read: s, if it is the first.
func (t *ToolSet) sessionlessHandle(s server.SessionWithTools) server.SessionWithTools {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sessionless == nil {
		t.sessionless = s
	}
	return t.sessionless
}

// intern returns a list equal to names that an earlier caller got, if one
// of the last few is, so that callers listed the same (the common case)
// share one slice and memory stays flat with many callers.
func (t *ToolSet) intern(names []string) (list, sorted []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, il := range t.recent {
		if il != nil && slices.Equal(il.names, names) {
			return il.names, il.sorted
		}
	}
	il := &internedList{names: names, sorted: names}
	if !slices.IsSorted(names) {
		il.sorted = slices.Sorted(slices.Values(names))
	}
	t.recent[t.next%len(t.recent)] = il
	t.next++
	return il.names, il.sorted
}

// sessionStarted is the server's OnRegisterSession hook.
func (t *ToolSet) sessionStarted(_ context.Context, s server.ClientSession) {
	id := s.SessionID()
	if id == t.watch.id {
		return
	}
	t.mu.Lock()
	if len(t.sessions) < maxCallers {
		t.sessions[id] = &life{session: s} // past that, new sessions are never reused
	}
	t.mu.Unlock()
}

// sessionEnded is the server's OnUnregisterSession hook: lists read in
// that session are no longer reused. If the watcher itself was
// unregistered (a client can DELETE any session id in mcp-go's default
// mode), it registers again and every list is dropped.
func (t *ToolSet) sessionEnded(ctx context.Context, s server.ClientSession) {
	id := s.SessionID()
	if id == t.watch.id {
		if !t.closed.Load() {
			t.s.RegisterSession(ctx, t.watch)
			t.version.Add(1)
		}
		return
	}
	t.mu.Lock()
	if l := t.sessions[id]; l != nil {
		l.ended.Store(true)
		delete(t.sessions, id)
	}
	t.mu.Unlock()
}

// Redeliver gives the caller's session back the notifications the server
// sent it on the tool set's own requests for a call that passes through:
// mcp-go delivers them with the call, as it would have without the guard.
// Requests and responses among them, and messages for a session the tool
// set does not know, cannot be given back.
func (t *ToolSet) Redeliver(r *http.Request, msgs [][]byte) {
	id := r.Header.Get("Mcp-Session-Id")
	if id == "" {
		return
	}
	var s server.ClientSession
	t.mu.Lock()
	if lf := t.sessions[id]; lf != nil {
		if !lf.ended.Load() {
			s = lf.session
		}
	} else if key := t.callerKey(r); key != "" && t.callers[key] != nil {
		s = t.callers[key].session
	}
	t.mu.Unlock()
	if s == nil {
		return
	}
	// The forwarder of the tool set's own request, answered a moment ago,
	// may not have ended yet: one that takes a message now drops it (its
	// POST is over). Let it end first.
	for range 8 {
		runtime.Gosched()
	}
	ch := s.NotificationChannel()
	for _, m := range msgs {
		n, ok := notification(m)
		if !ok {
			continue
		}
		select {
		case ch <- n:
		default: // a full queue: mcp-go would have dropped it too
		}
	}
}

// notification reads a JSON-RPC notification into mcp-go's type with its
// params kept as they came (raw values, so numbers keep every digit and
// nothing is added when mcp-go writes it out again). ok is false for
// anything else (a request or a response).
func notification(msg []byte) (mcp.JSONRPCNotification, bool) {
	var m struct {
		ID     json.RawMessage            `json:"id"`
		Method string                     `json:"method"`
		Params map[string]json.RawMessage `json:"params"`
	}
	if json.Unmarshal(msg, &m) != nil || m.ID != nil || m.Method == "" {
		return mcp.JSONRPCNotification{}, false
	}
	n := mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{Method: m.Method}}
	if m.Params != nil && len(m.Params) == 0 {
		// "params":{} stays: mcp-go omits params only when it has none.
		n.Params.AdditionalFields = map[string]any{}
	}
	for k, v := range m.Params {
		if k == "_meta" {
			var meta map[string]json.RawMessage
			if json.Unmarshal(v, &meta) != nil {
				return mcp.JSONRPCNotification{}, false
			}
			n.Params.Meta = make(map[string]any, len(meta))
			for mk, mv := range meta {
				n.Params.Meta[mk] = mv
			}
			continue
		}
		if n.Params.AdditionalFields == nil {
			n.Params.AdditionalFields = make(map[string]any, len(m.Params))
		}
		n.Params.AdditionalFields[k] = v
	}
	return n, true
}

type captureKey struct{}

// captured is what the filter saw in one of the tool set's own requests.
type captured struct {
	owner        *ToolSet
	mu           sync.Mutex
	done         bool
	names        []string
	session      server.SessionWithTools
	sessionID    string
	sessionTools []sessionTool
}

// capture is the tool filter the tool set appends to the server. In the
// tool set's own tools/list it records the names the caller would be
// listed, after every filter before it, with the caller's session, and
// returns none, so the reply encodes no tool; for everyone else it returns
// the tools unchanged.
func (t *ToolSet) capture(ctx context.Context, tools []mcp.Tool) []mcp.Tool {
	cp, ok := ctx.Value(captureKey{}).(*captured)
	if !ok || cp.owner != t {
		return tools
	}
	names := make([]string, len(tools))
	for i := range tools {
		names[i] = tools[i].Name
	}
	cp.record(ctx, names)
	return tools[:0]
}

// pinged is the server's OnBeforePing hook. In the tool set's own ping it
// records the caller's session as mcp-go dispatched the ping with it.
func (t *ToolSet) pinged(ctx context.Context, _ any, _ *mcp.PingRequest) {
	if cp, ok := ctx.Value(captureKey{}).(*captured); ok && cp.owner == t {
		cp.record(ctx, nil)
	}
}

// record keeps names and the session of ctx, with its session tools.
// Before it returns (and mcp-go answers the tool set's request), it lets
// the request's notification forwarder take what is queued for the
// session: mcp-go hands a session's queued notifications to whichever of
// its POSTs runs, and drops one taken off the queue after that POST was
// answered. The tool set's requests are quick; the wait is what keeps
// them from losing the caller's notifications (which the guard's answer
// then carries).
func (cp *captured) record(ctx context.Context, names []string) {
	defer letForwarderTake(ctx)
	var (
		swt    server.SessionWithTools
		id     string
		stools []sessionTool
	)
	if s := server.ClientSessionFromContext(ctx); s != nil {
		id = s.SessionID()
		if w, ok := s.(server.SessionWithTools); ok {
			swt = w
			for k, tool := range w.GetSessionTools() {
				stools = append(stools, sessionTool{key: k, name: tool.Tool.Name})
			}
		}
	}
	cp.mu.Lock()
	cp.done, cp.names, cp.session, cp.sessionID, cp.sessionTools = true, names, swt, id, stools
	cp.mu.Unlock()
}

// letForwarderTake waits, at most a millisecond, until the notifications
// queued for the session of ctx are taken, and then lets the taker run.
func letForwarderTake(ctx context.Context) {
	s := server.ClientSessionFromContext(ctx)
	if s == nil {
		return
	}
	ch := s.NotificationChannel()
	if len(ch) == 0 {
		return
	}
	for deadline := time.Now().Add(time.Millisecond); len(ch) > 0 && time.Now().Before(deadline); {
		runtime.Gosched()
	}
	for range 4 {
		runtime.Gosched()
	}
}

func (cp *captured) isDone() bool {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	return cp.done
}

// onlyFilter reports whether the tool filter Tools has just appended is
// the server's only one. mcp-go offers no way to ask, so the length of
// its filter list is read, once, by reflection (read only); when the
// field is not there (another mcp-go), the answer is no, and every list
// is asked of the server.
func onlyFilter(s *server.MCPServer) bool {
	f := reflect.ValueOf(s).Elem().FieldByName("toolFilters")
	return f.IsValid() && f.Kind() == reflect.Slice && f.Len() == 1
}

// isGlobal reports whether name is a global tool of the server. While the
// server announces list changes, the names are kept and refreshed after
// each announcement, which spares a lock and a copy of the tool per call;
// otherwise the registry is asked every time.
func (t *ToolSet) isGlobal(name string) bool {
	if !t.watching() {
		return t.s.GetTool(name) != nil
	}
	// Fast path: nothing announced since the names were read. A pending
	// or half-taken notification sends the call down the locked path.
	if g := t.globals.Load(); g != nil && len(t.watch.ch) == 0 && !t.draining.Load() && g.version == t.version.Load() {
		_, ok := g.names[name]
		return ok
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.drain()
	g := t.globals.Load()
	if v := t.version.Load(); g == nil || g.version != v {
		tools := t.s.ListTools()
		g = &globalNames{version: v, names: make(map[string]struct{}, len(tools))}
		for n := range tools {
			g.names[n] = struct{}{}
		}
		t.globals.Store(g)
	}
	_, ok := g.names[name]
	return ok
}

// announces reports, asking the server once, whether it sends
// tools/list_changed, which every reuse of a list relies on.
func (t *ToolSet) announces() bool {
	t.checkOnce.Do(func() { t.notifies = announcesListChanges(t.s, t.watch) })
	return t.notifies
}

// announcesListChanges asks the server, in process, whether it declares
// tools.listChanged: an initialize, in the watcher's session (the server's
// hooks see it; one that panics on it makes the answer no).
func announcesListChanges(s *server.MCPServer, watch *watcher) (yes bool) {
	defer func() {
		if recover() != nil {
			yes = false
		}
	}()
	msg := json.RawMessage(`{"jsonrpc":"2.0","id":"toolguard-capabilities","method":"initialize","params":` +
		`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"toolguard","version":"1"}}}`)
	resp, ok := s.HandleMessage(s.WithContext(context.Background(), watch), msg).(mcp.JSONRPCResponse)
	if !ok {
		return false
	}
	b, err := json.Marshal(resp.Result)
	if err != nil {
		return false
	}
	var res struct {
		Capabilities struct {
			Tools *struct {
				ListChanged bool `json:"listChanged"`
			} `json:"tools"`
		} `json:"capabilities"`
	}
	return json.Unmarshal(b, &res) == nil && res.Capabilities.Tools != nil && res.Capabilities.Tools.ListChanged
}

// drain reads the notifications the server has sent the watcher. It runs
// before every use of the cache, so a change the server announced before
// the call arrived is always seen (the server sends before AddTool
// returns). mcp-go drops a notification for a session whose channel is
// full, so a full channel may have lost a tools/list_changed: it
// invalidates too. Only drain reads the channel, so after a drop it stays
// full until here. t.mu is held.
func (t *ToolSet) drain() {
	t.draining.Store(true)
	defer t.draining.Store(false)
	if len(t.watch.ch) == cap(t.watch.ch) {
		t.version.Add(1)
	}
	for {
		select {
		case n := <-t.watch.ch:
			if n.Method == string(mcp.MethodNotificationToolsListChanged) {
				t.version.Add(1)
			}
		default:
			return
		}
	}
}

// ModernStatus is the HTTP status mcp-go sends with -32602 for a
// 2026-07-28 request: 400.
func (t *ToolSet) ModernStatus() int { return http.StatusBadRequest }

// Close unregisters the watcher session. From then on no list is reused:
// every rejection is confirmed with a fresh list, as for a server that
// does not announce its changes. The tool filter and hooks Tools added to
// the server stay; they do nothing for anyone else.
func (t *ToolSet) Close() error {
	t.closed.Store(true)
	t.s.UnregisterSession(context.Background(), t.watch.id)
	return nil
}

// watcher is an in-process session that hears list_changed notifications.
type watcher struct {
	id string
	ch chan mcp.JSONRPCNotification
}

func (w *watcher) Initialize()                                         {}
func (w *watcher) Initialized() bool                                   { return true }
func (w *watcher) NotificationChannel() chan<- mcp.JSONRPCNotification { return w.ch }
func (w *watcher) SessionID() string                                   { return w.id }

// The watcher takes only tools/list_changed: mcp-go drops every other
// notification before sending it, so other broadcasts never fill its
// channel (nor report it blocked to the server's OnError hooks).
func (w *watcher) SetSubscriptionFilter(mcp.SubscriptionFilter) {}
func (w *watcher) SubscriptionFilter() (mcp.SubscriptionFilter, bool) {
	return mcp.SubscriptionFilter{ToolsListChanged: true}, true
}
