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
//     names) is settled by the caller's own tools/list: the tool set asks
//     the handler for it as the caller (same session, headers, protocol
//     version and _meta), so sessions, tool filters and the HTTP context
//     function apply exactly as for the call. A filter the tool set adds to
//     the server (see below) takes the names from that list in process, so
//     the reply carries no tool and mcp-go encodes no schema.
//   - That list is reused for the same caller until the server announces a
//     change (tools/list_changed, heard by an in-process watcher session),
//     the caller's session tools change, the session ends, or Options.MaxAge
//     passes. This needs the listChanged capability (on by default once
//     tools are added); without it every rejection is confirmed with a
//     fresh list, with every schema.
//
// Tools changes the server it is given in two ways, both invisible to
// clients: it appends a tool filter that returns every tool unchanged
// except in the tool set's own tools/list requests, and it adds an
// OnUnregisterSession hook (installing empty Hooks if the server has none).
// Call Tools after the server's options and tools are set and before it
// serves: a tool filter added to the server after Tools would not be
// applied to the names the guard lists.
package toolguardmcpgo

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	toolguard "github.com/toolguard/toolguard/middleware"
)

// Options configures Tools.
type Options struct {
	// Discover configures the tools/list fetches.
	Discover toolguard.DiscoverOptions

	// MaxAge bounds how long a caller's list is reused while no
	// list_changed notification arrives and the caller's session tools do
	// not change; it covers tool filters whose answer changes with time and
	// session ids a custom session id manager stops accepting. Default 1s.
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
	// through the capture. The tool set shares and caches them itself.
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
	t := &ToolSet{s: s, d: d, key: key, maxAge: opts.MaxAge,
		cache: map[string]*cached{}, flights: map[string]*flight{}, lives: map[string]*life{}}
	t.watch = &watcher{id: "toolguard-watch-" + strconv.FormatInt(time.Now().UnixNano(), 36),
		ch: make(chan mcp.JSONRPCNotification, 64)}
	if err := s.RegisterSession(context.Background(), t.watch); err != nil {
		return nil, err
	}
	server.WithToolFilter(capture)(s)
	hooks := s.GetHooks()
	if hooks == nil {
		hooks = &server.Hooks{}
		server.WithHooks(hooks)(s)
	}
	hooks.AddOnUnregisterSession(t.sessionEnded)
	return t, nil
}

// ToolSet is the toolguard.ToolSet of an mcp-go server.
type ToolSet struct {
	s      *server.MCPServer
	d      *toolguard.Discovery
	key    func(*http.Request) string
	maxAge time.Duration
	watch  *watcher

	version   atomic.Int64 // bumped on every list_changed the watcher hears
	checkOnce sync.Once
	notifies  bool // the server sends list_changed

	mu         sync.Mutex
	cache      map[string]*cached
	flights    map[string]*flight
	lives      map[string]*life // by session id: ended when the server unregisters it
	recent     [4]*internedList
	nextRecent int
	// globals holds the server's global tool names as of a version, kept
	// while the server announces its changes; read without locking.
	globals  atomic.Pointer[globalNames]
	draining atomic.Bool // a notification is being taken off the channel
	// last is the entry the last Absent from Lookup was read from, so that
	// the List the guard makes next for the same request finds it without
	// computing the caller's key again.
	last atomic.Pointer[lastAbsent]
}

type globalNames struct {
	version int64
	names   map[string]struct{}
}

// cached is one caller's list.
type cached struct {
	names   []string // as the server listed them
	sorted  []string // the same, sorted, for lookups
	version int64
	at      time.Time
	// session is the caller's session as the server handed it to its tool
	// filters, nil without one; sessionNames the names of its session
	// tools then, sorted.
	session      server.SessionWithTools
	sessionNames []string
	life         *life
	// reusable is false for a session caller whose list came without the
	// capture (a context function that drops the request's context, a
	// handler that is not this server's): its session tools cannot be
	// watched, so each rejection asks again.
	reusable bool
}

// life is a session's: ended is set when the server unregisters it.
type life struct{ ended atomic.Bool }

type flight struct {
	done chan struct{}
	c    *cached
	err  error
}

type lastAbsent struct {
	req *http.Request
	c   *cached
}

const maxCached = 10000

// Lookup reports a global tool, a session tool of the caller and any name
// in the caller's current list Present, anything else Absent once the
// caller's list is known, and leaves it to List otherwise.
func (t *ToolSet) Lookup(r *http.Request, name string) toolguard.Presence {
	if t.isGlobal(name) {
		return toolguard.Present
	}
	if !t.announces() {
		return t.d.Lookup(r, name)
	}
	c := t.current(t.key(r))
	if c == nil {
		return toolguard.Absent // List fetches it
	}
	if _, ok := slices.BinarySearch(c.sorted, name); ok {
		return toolguard.Present
	}
	if c.session != nil {
		if _, ok := c.session.GetSessionTools()[name]; ok {
			return toolguard.Present
		}
	}
	// A global tool added since the names were read (its list_changed not
	// taken yet) is Present: ask the registry itself before saying Absent.
	if t.s.GetTool(name) != nil {
		return toolguard.Present
	}
	t.last.Store(&lastAbsent{req: r, c: c})
	return toolguard.Absent
}

// isGlobal reports whether name is a global tool of the server. While the
// server announces list changes, the names are kept and refreshed after
// each announcement, which spares a lock and a copy of the tool per call;
// otherwise the registry is asked every time.
func (t *ToolSet) isGlobal(name string) bool {
	if !t.announces() {
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

// List returns the caller's tools/list: the one Lookup read while it is
// current, otherwise one fetched now. Without list_changed announcements
// it is always fetched after the call arrived.
func (t *ToolSet) List(r *http.Request) ([]string, error) {
	if !t.announces() {
		return t.d.List(r)
	}
	if l := t.last.Load(); l != nil && sameRequest(l.req, r) && t.fresh(l.c) {
		return l.c.names, nil
	}
	key := t.key(r)
	if c := t.current(key); c != nil {
		return c.names, nil
	}
	c, err := t.fetch(r, key)
	if err != nil {
		return nil, err
	}
	return c.names, nil
}

// sameRequest reports whether b stands for the same caller as a, the
// request Lookup saw: a itself, or the shallow copy the guard makes of a
// 2025-era call to give List its call, when the call has no _meta (a
// call's _meta is part of List's key).
func sameRequest(a, b *http.Request) bool {
	if a == b {
		return true
	}
	if a.URL != b.URL || reflect.ValueOf(a.Header).UnsafePointer() != reflect.ValueOf(b.Header).UnsafePointer() {
		return false
	}
	c, ok := toolguard.CallFromContext(b.Context())
	return ok && !c.Modern && c.Meta == nil
}

// current returns the caller's cached list if it is still current.
func (t *ToolSet) current(key string) *cached {
	t.mu.Lock()
	t.drain()
	c := t.cache[key]
	t.mu.Unlock()
	if c == nil || !t.fresh(c) {
		return nil
	}
	return c
}

// fresh reports whether c still is the caller's list: no announced change,
// not older than MaxAge, its session alive with the same session tools.
func (t *ToolSet) fresh(c *cached) bool {
	if c.version != t.version.Load() || time.Since(c.at) > t.maxAge {
		return false
	}
	if c.life != nil && c.life.ended.Load() {
		return false
	}
	if c.session != nil {
		now := c.session.GetSessionTools()
		if len(now) != len(c.sessionNames) {
			return false
		}
		for _, n := range c.sessionNames {
			if _, ok := now[n]; !ok {
				return false
			}
		}
	}
	return true
}

// fetch asks the server for the caller's list, sharing one request among
// concurrent callers with the same key.
func (t *ToolSet) fetch(r *http.Request, key string) (*cached, error) {
	t.mu.Lock()
	if f := t.flights[key]; f != nil {
		t.mu.Unlock()
		select {
		case <-f.done:
		case <-r.Context().Done():
			return nil, r.Context().Err()
		}
		if f.err == nil && f.c.reusable && t.fresh(f.c) {
			return f.c, nil
		}
		t.mu.Lock()
	}
	f := &flight{done: make(chan struct{})}
	t.flights[key] = f
	t.mu.Unlock()

	f.c, f.err = t.ask(r)
	t.mu.Lock()
	delete(t.flights, key)
	if f.err == nil && f.c.reusable {
		if len(t.cache) >= maxCached {
			clear(t.cache)
			clear(t.lives)
		}
		t.cache[key] = f.c
	}
	t.mu.Unlock()
	close(f.done)
	return f.c, f.err
}

// ask sends the caller's tools/list through the handler with a capture in
// its context: the tool set's filter, last in the server's chain, takes
// the names there and empties the reply.
func (t *ToolSet) ask(r *http.Request) (*cached, error) {
	v, at := t.version.Load(), time.Now()
	cp := &captured{}
	names, err := t.d.List(r.WithContext(context.WithValue(r.Context(), captureKey{}, cp)))
	if err != nil {
		return nil, err
	}
	c := &cached{names: names, version: v, at: at, reusable: len(r.Header["Mcp-Session-Id"]) == 0}
	cp.mu.Lock()
	if cp.done {
		c.reusable = true
		c.names, c.session, c.sessionNames = cp.names, cp.session, cp.sessionNames
		if cp.sessionID != "" {
			c.life = t.lifeOf(cp.sessionID)
		}
	}
	cp.mu.Unlock()
	c.names, c.sorted = t.intern(c.names)
	return c, nil
}

// intern returns a list equal to names that an earlier caller got, if one
// of the last few is, so that callers with the same list (the common case)
// share one slice: memory stays flat with many callers, and the guard
// recognizes the list it built its answer from by address.
func (t *ToolSet) intern(names []string) (list, sorted []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, l := range t.recent {
		if l != nil && slices.Equal(l.names, names) {
			return l.names, l.sorted
		}
	}
	l := &internedList{names: names, sorted: names}
	if !slices.IsSorted(names) {
		l.sorted = slices.Sorted(slices.Values(names))
	}
	t.recent[t.nextRecent%len(t.recent)] = l
	t.nextRecent++
	return l.names, l.sorted
}

type internedList struct{ names, sorted []string }

func (t *ToolSet) lifeOf(id string) *life {
	t.mu.Lock()
	defer t.mu.Unlock()
	l := t.lives[id]
	if l == nil {
		l = &life{}
		t.lives[id] = l
	}
	return l
}

// sessionEnded is the server's OnUnregisterSession hook: lists read in
// that session are no longer reused.
func (t *ToolSet) sessionEnded(_ context.Context, s server.ClientSession) {
	id := s.SessionID()
	t.mu.Lock()
	if l := t.lives[id]; l != nil {
		l.ended.Store(true)
		delete(t.lives, id)
	}
	t.mu.Unlock()
}

type captureKey struct{}

// captured is what the filter saw in one of the tool set's own requests.
type captured struct {
	mu           sync.Mutex
	done         bool
	names        []string
	session      server.SessionWithTools
	sessionID    string
	sessionNames []string
}

// capture is the tool filter the tool set appends to the server. In the
// tool set's own tools/list it records the names the caller would be
// listed, after every other filter, with the caller's session, and
// returns none, so the reply encodes no tool; for everyone else it returns
// the tools unchanged.
func capture(ctx context.Context, tools []mcp.Tool) []mcp.Tool {
	cp, ok := ctx.Value(captureKey{}).(*captured)
	if !ok {
		return tools
	}
	names := make([]string, len(tools))
	for i := range tools {
		names[i] = tools[i].Name
	}
	var (
		swt    server.SessionWithTools
		id     string
		snames []string
	)
	if s := server.ClientSessionFromContext(ctx); s != nil {
		id = s.SessionID()
		if w, ok := s.(server.SessionWithTools); ok {
			swt = w
			for n := range w.GetSessionTools() {
				snames = append(snames, n)
			}
			slices.Sort(snames)
		}
	}
	cp.mu.Lock()
	cp.done, cp.names, cp.session, cp.sessionID, cp.sessionNames = true, names, swt, id, snames
	cp.mu.Unlock()
	return tools[:0]
}

// announces reports, asking the server once, whether it sends
// tools/list_changed, which every reuse of a list relies on.
func (t *ToolSet) announces() bool {
	t.checkOnce.Do(func() { t.notifies = announcesListChanges(t.s) })
	return t.notifies
}

// announcesListChanges asks the server, in-process, whether it declares
// tools.listChanged.
func announcesListChanges(s *server.MCPServer) bool {
	msg := json.RawMessage(`{"jsonrpc":"2.0","id":"toolguard-capabilities","method":"initialize","params":` +
		`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"toolguard","version":"1"}}}`)
	resp, ok := s.HandleMessage(context.Background(), msg).(mcp.JSONRPCResponse)
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

// Close unregisters the watcher session.
func (t *ToolSet) Close() error {
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
