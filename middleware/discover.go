package toolguard

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolguard/toolguard/internal/sse"
)

// DiscoverOptions configures [Discover]. Every zero field has a default.
type DiscoverOptions struct {
	// TTL is how long a fetched list answers Lookup. A list that carries
	// ttlMs (2026-07-28) uses that instead. It only speeds up known names:
	// a rejection is always confirmed by a list fetched after the call
	// arrived. Default 10s.
	TTL time.Duration

	// MinInterval is the least time between two fetches for one caller,
	// so a flood of unknown calls cannot become a flood of tools/list.
	// Default 10ms.
	MinInterval time.Duration

	// MaxWait bounds how long a call waits for a fresh list; past it the
	// call passes through. Default 2s.
	MaxWait time.Duration

	// Timeout bounds one fetch (every page). Default 5s.
	Timeout time.Duration

	// MaxPages bounds how many nextCursor pages are followed; a longer
	// list is "cannot tell". Default 50.
	MaxPages int

	// MaxBodyBytes bounds one tools/list reply. Default 8 MiB.
	MaxBodyBytes int64

	// Key returns the cache key of the caller of r: requests with the same
	// key share cached and fetched lists. The default is CallerKey.
	// Return "" to share nothing for a request.
	Key func(r *http.Request) string

	// MaxKeys bounds how many callers are cached. Default 10000.
	MaxKeys int
}

// Discover returns a ToolSet that asks h, the MCP server behind the guard
// (or a reverse proxy in front of any server), for tools/list, forwarding
// the caller's headers (session, authorization, protocol version). It works
// for any server in any language: 2025-era and 2026-07-28 requests, JSON
// and SSE replies, nextCursor pages.
//
// Lookup answers from a cached list. List always returns a list fetched
// after the call arrived; concurrent calls share one fetch, and fetches for
// one caller are at least MinInterval apart. Any failure (an unknown
// session, an error reply, a timeout) is "cannot tell".
func Discover(h http.Handler, opts DiscoverOptions) (*Discovery, error) {
	if h == nil {
		return nil, errors.New("toolguard: Discover needs a handler")
	}
	if opts.TTL < 0 || opts.MinInterval < 0 || opts.MaxWait < 0 || opts.Timeout < 0 || opts.MaxPages < 0 || opts.MaxBodyBytes < 0 || opts.MaxKeys < 0 {
		return nil, errors.New("toolguard: DiscoverOptions must not be negative")
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&opts.TTL, 10*time.Second)
	def(&opts.MinInterval, 10*time.Millisecond)
	def(&opts.MaxWait, 2*time.Second)
	def(&opts.Timeout, 5*time.Second)
	if opts.MaxPages == 0 {
		opts.MaxPages = 50
	}
	if opts.MaxBodyBytes == 0 {
		opts.MaxBodyBytes = 8 << 20
	}
	if opts.MaxKeys == 0 {
		opts.MaxKeys = 10000
	}
	if opts.Key == nil {
		opts.Key = CallerKey
	}
	return &Discovery{h: h, opts: opts, entries: map[string]*entry{}}, nil
}

// Discovery is the ToolSet returned by [Discover].
type Discovery struct {
	h       http.Handler
	opts    DiscoverOptions
	fetches atomic.Int64

	mu      sync.Mutex
	entries map[string]*entry
}

// Fetches reports how many tools/list fetches the set has made.
func (d *Discovery) Fetches() int64 { return d.fetches.Load() }

// entry is the cached state for one caller key.
type entry struct {
	mu        sync.Mutex
	names     map[string]struct{}
	list      []string
	listStart time.Time // when the fetch that produced list started
	expires   time.Time
	lastStart time.Time
	inflight  *fetch
}

type fetch struct {
	start time.Time
	done  chan struct{}
	list  []string
	err   error
}

func (d *Discovery) entry(key string) *entry {
	d.mu.Lock()
	defer d.mu.Unlock()
	e := d.entries[key]
	if e == nil {
		if len(d.entries) >= d.opts.MaxKeys {
			d.evict()
		}
		e = &entry{}
		d.entries[key] = e
	}
	return e
}

// evict drops expired entries, or all of them when none has expired.
func (d *Discovery) evict() {
	now := time.Now()
	for k, e := range d.entries {
		e.mu.Lock()
		idle := e.inflight == nil && now.After(e.expires)
		e.mu.Unlock()
		if idle {
			delete(d.entries, k)
		}
	}
	if len(d.entries) >= d.opts.MaxKeys {
		clear(d.entries)
	}
}

// Lookup reports Present when the cached list for the caller has name, and
// Absent otherwise (List then confirms with a fresh list).
func (d *Discovery) Lookup(r *http.Request, name string) Presence {
	key := d.opts.Key(r)
	if key == "" {
		return Absent
	}
	d.mu.Lock()
	e := d.entries[key]
	d.mu.Unlock()
	if e == nil {
		return Absent
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.names[name]; ok && time.Now().Before(e.expires) {
		return Present
	}
	return Absent
}

var errBusy = errors.New("toolguard: no fresh tool list within MaxWait")

// List returns the caller's tools from a tools/list fetched after the call.
func (d *Discovery) List(r *http.Request) ([]string, error) {
	arrival := time.Now()
	key := d.opts.Key(r)
	if key == "" {
		list, _, err := d.fetch(r)
		return list, err
	}
	e := d.entry(key)
	deadline := arrival.Add(d.opts.MaxWait)
	for {
		e.mu.Lock()
		if e.list != nil && !e.listStart.Before(arrival) {
			list := e.list
			e.mu.Unlock()
			return list, nil
		}
		if f := e.inflight; f != nil {
			e.mu.Unlock()
			if err := waitUntil(r.Context(), f.done, deadline); err != nil {
				return nil, err
			}
			if !f.start.Before(arrival) {
				return f.list, f.err
			}
			continue // that fetch began before this call: wait for a newer one
		}
		now := time.Now()
		if next := e.lastStart.Add(d.opts.MinInterval); now.Before(next) {
			e.mu.Unlock()
			if next.After(deadline) {
				return nil, errBusy
			}
			if err := waitUntil(r.Context(), nil, next); err != nil {
				return nil, err
			}
			continue
		}
		f := &fetch{start: now, done: make(chan struct{})}
		e.inflight, e.lastStart = f, now
		e.mu.Unlock()

		list, ttl, err := d.fetch(r)
		f.list, f.err = list, err
		e.mu.Lock()
		e.inflight = nil
		if err == nil {
			e.list, e.listStart = list, f.start
			e.names = make(map[string]struct{}, len(list))
			for _, n := range list {
				e.names[n] = struct{}{}
			}
			if ttl <= 0 {
				ttl = d.opts.TTL
			}
			e.expires = time.Now().Add(ttl)
		}
		e.mu.Unlock()
		close(f.done)
		return list, err
	}
}

// waitUntil waits for done (if not nil) or until t, whichever comes first;
// reaching t while done is pending is errBusy.
func waitUntil(ctx context.Context, done <-chan struct{}, t time.Time) error {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-done:
		return nil
	case <-timer.C:
		if done == nil {
			return nil
		}
		return errBusy
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Headers the fetch never forwards: they describe the caller's body or
// connection, or the fetch sets its own.
var notForwarded = map[string]bool{
	"Accept": true, "Accept-Encoding": true, "Connection": true, "Content-Encoding": true,
	"Content-Length": true, "Content-Type": true, "Expect": true, "Keep-Alive": true,
	"Last-Event-Id": true, "Mcp-Method": true, "Mcp-Name": true, "Te": true,
	"Trailer": true, "Transfer-Encoding": true, "Upgrade": true,
}

// Tracing headers change with every request and grant nothing: they are
// forwarded but not part of the default cache key.
var volatile = map[string]bool{
	"Traceparent": true, "Tracestate": true, "Baggage": true, "X-Request-Id": true,
	"X-Amzn-Trace-Id": true, "Sentry-Trace": true, "X-B3-Traceid": true, "X-B3-Spanid": true,
	"X-B3-Parentspanid": true, "X-B3-Sampled": true, "X-Cloud-Trace-Context": true,
}

// CallerKey identifies the caller of r for caching: the URL and every
// request header a tools/list fetch forwards (session, authorization,
// protocol version, cookies, custom headers), except tracing headers.
func CallerKey(r *http.Request) string {
	keys := make([]string, 0, len(r.Header))
	for k := range r.Header {
		if !notForwarded[k] && !volatile[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(r.URL.Path)
	b.WriteByte('?')
	b.WriteString(r.URL.RawQuery)
	for _, k := range keys {
		b.WriteByte('\n')
		b.WriteString(k)
		for _, v := range r.Header[k] {
			b.WriteByte('\x00')
			b.WriteString(v)
		}
	}
	return b.String()
}

var listIDs atomic.Int64

// fetch asks the handler for the whole tool list, as the caller of r.
func (d *Discovery) fetch(r *http.Request) ([]string, time.Duration, error) {
	d.fetches.Add(1)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), d.opts.Timeout)
	defer cancel()
	version, _ := single(r.Header, "Mcp-Protocol-Version")
	modern := isModernVersion(version)
	var names []string
	var ttl time.Duration
	cursor := ""
	for page := 0; page < d.opts.MaxPages; page++ {
		id := "toolguard-list-" + strconv.FormatInt(listIDs.Add(1), 10)
		res, err := d.page(ctx, r, id, cursor, version, modern)
		if err != nil {
			return nil, 0, err
		}
		for _, t := range res.Tools {
			if t.Name == nil {
				return nil, 0, errors.New("toolguard: tools/list: a tool has no name")
			}
			names = append(names, *t.Name)
		}
		if res.TTLMs != nil && (page == 0 || time.Duration(*res.TTLMs)*time.Millisecond < ttl) {
			ttl = time.Duration(*res.TTLMs) * time.Millisecond
		}
		if res.NextCursor == nil || *res.NextCursor == "" {
			slices.Sort(names)
			return slices.Compact(names), ttl, nil
		}
		cursor = *res.NextCursor
	}
	return nil, 0, fmt.Errorf("toolguard: tools/list has more than %d pages", d.opts.MaxPages)
}

type listResult struct {
	Tools []struct {
		Name *string `json:"name"`
	} `json:"tools"`
	NextCursor *string `json:"nextCursor"`
	TTLMs      *int64  `json:"ttlMs"`
}

func (d *Discovery) page(ctx context.Context, r *http.Request, id, cursor, version string, modern bool) (*listResult, error) {
	params := map[string]any{}
	if cursor != "" {
		params["cursor"] = cursor
	}
	if modern {
		params["_meta"] = map[string]any{
			"io.modelcontextprotocol/protocolVersion":    version,
			"io.modelcontextprotocol/clientInfo":         map[string]string{"name": "toolguard", "version": "1"},
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		}
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": params})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.URL.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.RemoteAddr, req.Host, req.TLS, req.RequestURI = r.RemoteAddr, r.Host, r.TLS, r.RequestURI
	for k, vs := range r.Header {
		if !notForwarded[k] {
			req.Header[k] = vs
		}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if modern {
		req.Header.Set("Mcp-Method", "tools/list")
	}
	w := &captureWriter{header: http.Header{}, limit: d.opts.MaxBodyBytes}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if p := recover(); p != nil && p != http.ErrAbortHandler {
				w.panicked = fmt.Sprint(p)
			}
		}()
		d.h.ServeHTTP(w, req)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		return nil, fmt.Errorf("toolguard: tools/list: %w", ctx.Err())
	}
	if w.panicked != "" {
		return nil, fmt.Errorf("toolguard: tools/list: handler panicked: %s", w.panicked)
	}
	if w.status != http.StatusOK {
		return nil, fmt.Errorf("toolguard: tools/list: HTTP %d", w.status)
	}
	if w.over {
		return nil, errors.New("toolguard: tools/list: reply too large")
	}
	msg := w.buf.Bytes()
	if ct := w.header.Get("Content-Type"); strings.HasPrefix(strings.ToLower(strings.TrimSpace(ct)), "text/event-stream") {
		if msg = findSSEReply(msg, id); msg == nil {
			return nil, errors.New("toolguard: tools/list: no reply in the event stream")
		}
	}
	var reply struct {
		ID     json.RawMessage `json:"id"`
		Result *listResult     `json:"result"`
		Error  *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(msg, &reply); err != nil {
		return nil, fmt.Errorf("toolguard: tools/list: %w", err)
	}
	if reply.Error != nil {
		return nil, fmt.Errorf("toolguard: tools/list: JSON-RPC error %d", reply.Error.Code)
	}
	if string(reply.ID) != strconv.Quote(id) || reply.Result == nil || reply.Result.Tools == nil {
		return nil, errors.New("toolguard: tools/list: no tool list in the reply")
	}
	return reply.Result, nil
}

// findSSEReply returns the data of the event stream message whose id is id.
func findSSEReply(stream []byte, id string) []byte {
	want := strconv.Quote(id)
	for _, data := range sse.Messages(stream) {
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(data, &m) == nil && string(m.ID) == want {
			return data
		}
	}
	return nil
}

// captureWriter is the ResponseWriter of an in-process tools/list.
type captureWriter struct {
	header   http.Header
	status   int
	buf      bytes.Buffer
	limit    int64
	over     bool
	panicked string
	mu       sync.Mutex
}

func (w *captureWriter) Header() http.Header { return w.header }

func (w *captureWriter) WriteHeader(status int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.status == 0 {
		w.status = status
	}
}

func (w *captureWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if int64(w.buf.Len()+len(p)) > w.limit {
		w.over = true
		return 0, errors.New("toolguard: reply too large")
	}
	return w.buf.Write(p)
}

func (w *captureWriter) Flush() {}
