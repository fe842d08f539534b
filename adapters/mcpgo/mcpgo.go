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
// How it knows what is registered:
//
//   - A global tool is known at once, from the server's own registry.
//   - Every other name (session tools, task tools, tools hidden by tool
//     filters, unknown names) is settled by the server itself: the tool set
//     asks the handler for tools/list as the caller (same session, same
//     headers, same protocol version), so sessions, task tools, tool
//     filters and the HTTP context function apply exactly as for the call.
//   - Callers without a session (stateless servers, 2026-07-28 requests)
//     reuse that list until the server's tool list changes: the tool set
//     registers an in-process watcher session with the server and drops
//     the list on notifications/tools/list_changed. This needs the
//     listChanged capability (on by default once tools are added); without
//     it, or with a session, every rejection is confirmed with a fresh list.
package toolguardmcpgo

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
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

	// MaxAge bounds how long a list is reused for callers without a session
	// while no list_changed notification arrives; it covers tool filters
	// whose answer changes with time. Default 1s.
	MaxAge time.Duration
}

// Tools returns the tool set of s, served over HTTP by h (the
// *server.StreamableHTTPServer of s, or whatever handler the guard wraps).
// Call it after registering the server's tools. Close stops the watcher.
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
	d, err := toolguard.Discover(h, opts.Discover)
	if err != nil {
		return nil, err
	}
	key := opts.Discover.Key
	if key == nil {
		key = toolguard.CallerKey
	}
	t := &ToolSet{s: s, d: d, key: key, maxAge: opts.MaxAge, cache: map[string]*cached{}}
	t.watch = &watcher{id: "toolguard-watch-" + strconv.FormatInt(time.Now().UnixNano(), 36),
		ch: make(chan mcp.JSONRPCNotification, 64)}
	if err := s.RegisterSession(context.Background(), t.watch); err != nil {
		return nil, err
	}
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

	mu    sync.Mutex
	cache map[string]*cached
	// globals holds the server's global tool names as of a version, kept
	// while the server announces its changes; read without locking.
	globals  atomic.Pointer[globalNames]
	draining atomic.Bool // a notification is being taken off the channel
}

type globalNames struct {
	version int64
	names   map[string]struct{}
}

type cached struct {
	names   []string
	version int64
	at      time.Time
}

const maxCached = 10000

// Lookup reports a global tool Present at once; anything else is Present
// only if the caller's current list has it.
func (t *ToolSet) Lookup(r *http.Request, name string) toolguard.Presence {
	if t.isGlobal(name) {
		return toolguard.Present
	}
	if c := t.reusable(r); c != nil {
		if _, ok := slices.BinarySearch(c.names, name); ok {
			return toolguard.Present
		}
		return toolguard.Absent
	}
	return t.d.Lookup(r, name)
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

// List returns the caller's tools/list: reused while the server's tool list
// has not changed (callers without a session), otherwise fetched after the
// call arrived.
func (t *ToolSet) List(r *http.Request) ([]string, error) {
	if c := t.reusable(r); c != nil {
		return c.names, nil
	}
	t.mu.Lock()
	t.drain()
	t.mu.Unlock()
	v, at := t.version.Load(), time.Now()
	names, err := t.d.List(r)
	if err != nil || !t.cacheable(r) {
		return names, err
	}
	key := t.key(r)
	t.mu.Lock()
	if old := t.cache[key]; old != nil && slices.Equal(old.names, names) {
		// The same list again (MaxAge passed): keep the strings the
		// guard's precomputed answer was built from, so that it is
		// recognized by address rather than byte by byte.
		names = old.names
	}
	if len(t.cache) >= maxCached {
		clear(t.cache)
	}
	t.cache[key] = &cached{names: names, version: v, at: at}
	t.mu.Unlock()
	return names, nil
}

// reusable returns the caller's cached list if it is still current.
func (t *ToolSet) reusable(r *http.Request) *cached {
	if !t.cacheable(r) {
		return nil
	}
	t.mu.Lock()
	t.drain()
	c := t.cache[t.key(r)]
	t.mu.Unlock()
	if c == nil || c.version != t.version.Load() || time.Since(c.at) > t.maxAge {
		return nil
	}
	return c
}

// cacheable reports whether lists for r may be reused: the caller has no
// session (session tools change without telling the watcher) and the
// server announces list changes.
func (t *ToolSet) cacheable(r *http.Request) bool {
	if len(r.Header["Mcp-Session-Id"]) > 0 {
		return false
	}
	return t.announces()
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
