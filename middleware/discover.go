package toolguard

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolguard/toolguard/mcpwire"
)

// DiscoverOptions configures [Discover]. Every zero field has a default.
type DiscoverOptions struct {
	// TTL is how long a fetched list is reused for the same caller (see
	// Key). A list that carries ttlMs (2026-07-28) uses that instead.
	// Default 10s.
	TTL time.Duration

	// Budget is how much time a second the server may spend on the
	// guard's tools/list fetches, across all callers, measured as the time
	// each fetch takes: a flood of unknown calls must not become a flood of
	// lists, however costly a list is (a list of 1,000 tools with schemas
	// can cost the server as much as hundreds of its not-found answers).
	// A fetch starts only while the time spent stays within Budget a
	// second (and a second's worth at once); past it List fails at once
	// (ErrBudget), and the guard's answer goes out without
	// data.availableTools. Default DefaultListBudget (20ms a second: 2%).
	Budget time.Duration

	// Timeout bounds one fetch (every page). Default 5s.
	Timeout time.Duration

	// MaxPages bounds how many nextCursor pages are followed; a longer
	// list is an error. Default 50.
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

// Discover returns a ToolSet for any MCP server behind h (the server's
// handler, or a reverse proxy in front of a server in any language). It
// never decides before the server: Lookup is always [Unsure], so every
// call reaches the server and the guard replaces only the server's own
// not-found answer.
//
// List, asked only then, fetches tools/list from h exactly as the caller:
// with the caller's URL, Host, remote address, context and headers
// (session, authorization, cookies, protocol version, Origin, Accept,
// anything else but the few that describe the call's own body), and with
// the call's own params._meta (clientInfo, clientCapabilities, protocol
// version, any other key; see [CallFromContext]). It reads 2025-era and
// 2026-07-28 replies, JSON and SSE, following nextCursor. Messages the
// server sends the caller on that request go out with the guard's answer.
// A list is reused for the same caller (Key) for TTL; concurrent calls of
// one caller share one fetch; the time fetches take is held to Budget.
// Any failure (a refusal, an error reply, a timeout, the budget) is the
// List error, and the answer goes out without the list.
func Discover(h http.Handler, opts DiscoverOptions) (*Discovery, error) {
	if h == nil {
		return nil, errors.New("toolguard: Discover needs a handler (h is nil)")
	}
	for _, f := range []struct {
		name     string
		negative bool
	}{
		{"TTL", opts.TTL < 0}, {"Budget", opts.Budget < 0},
		{"Timeout", opts.Timeout < 0}, {"MaxPages", opts.MaxPages < 0}, {"MaxBodyBytes", opts.MaxBodyBytes < 0},
		{"MaxKeys", opts.MaxKeys < 0},
	} {
		if f.negative {
			return nil, fmt.Errorf("toolguard: DiscoverOptions.%s must not be negative", f.name)
		}
	}
	if opts.TTL == 0 {
		opts.TTL = 10 * time.Second
	}
	if opts.Budget == 0 {
		opts.Budget = DefaultListBudget
	}
	if opts.Timeout == 0 {
		opts.Timeout = 5 * time.Second
	}
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
	d := &Discovery{h: h, opts: opts, entries: map[string]*entry{}}
	d.allowance, d.refilled = opts.Budget, time.Now()
	return d, nil
}

// Discovery is the ToolSet returned by [Discover].
type Discovery struct {
	h    http.Handler
	opts DiscoverOptions

	mu      sync.Mutex
	entries map[string]*entry
	// The budget: fetch time that may still be spent now (it grows by
	// Budget a second, up to Budget, and each fetch takes what it took),
	// and what the last fetch took, charged when one starts.
	allowance time.Duration
	refilled  time.Time
	lastCost  time.Duration
	fetching  int // fetches under way
}

// DefaultListBudget is DiscoverOptions.Budget's default.
const DefaultListBudget = 20 * time.Millisecond

// entry is the cached state for one caller key.
type entry struct {
	mu       sync.Mutex
	list     []string
	expires  time.Time
	inflight *fetch
}

type fetch struct {
	done chan struct{}
	list []string
	err  error
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

// spend reserves a fetch from the budget, charging what the last one
// took, and reports whether the budget allows one now.
func (d *Discovery) spend() (time.Duration, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := time.Now()
	d.allowance = min(d.opts.Budget, d.allowance+time.Duration(float64(now.Sub(d.refilled))*d.opts.Budget.Seconds()))
	d.refilled = now
	// Until a fetch has shown what one costs, one at a time.
	if d.allowance <= 0 || d.lastCost == 0 && d.fetching > 0 {
		return 0, false
	}
	d.allowance -= d.lastCost
	d.fetching++
	return d.lastCost, true
}

// spent settles a fetch that was charged reserved and took took; a
// negative took gives back a reservation no fetch used.
func (d *Discovery) spent(reserved, took time.Duration) {
	d.mu.Lock()
	d.fetching--
	if took < 0 {
		d.allowance += reserved
	} else {
		d.allowance += reserved - took
		d.lastCost = max(took, time.Nanosecond)
	}
	d.mu.Unlock()
}

// fetchCharged is fetch, within the budget.
func (d *Discovery) fetchCharged(r *http.Request) ([]string, time.Duration, error) {
	reserved, ok := d.spend()
	if !ok {
		return nil, 0, ErrBudget
	}
	start := time.Now()
	list, ttl, err := d.fetch(r)
	d.spent(reserved, time.Since(start))
	return list, ttl, err
}

// ErrBudget is the List error past DiscoverOptions.Budget.
var ErrBudget = errors.New("toolguard: tools/list budget spent (DiscoverOptions.Budget)")

// Lookup returns Unsure: the server decides.
func (d *Discovery) Lookup(*http.Request, string) Presence { return Unsure }

// List returns the caller's tools, from a list fetched for the same caller
// within TTL or from a new fetch.
func (d *Discovery) List(r *http.Request) ([]string, error) {
	key := d.opts.Key(r)
	if key == "" {
		list, _, err := d.fetchCharged(r)
		return list, err
	}
	for {
		// A caller seen before: its list, or the fetch under way for it.
		d.mu.Lock()
		e := d.entries[key]
		d.mu.Unlock()
		if e != nil {
			if list, f, ok := e.current(); ok {
				return list, nil
			} else if f != nil {
				return f.wait(r.Context())
			}
		}
		// A new fetch, if the budget allows one: a caller refused by the
		// budget leaves nothing behind.
		reserved, ok := d.spend()
		if !ok {
			return nil, ErrBudget
		}
		e = d.entry(key)
		e.mu.Lock()
		if e.inflight != nil || e.list != nil && time.Now().Before(e.expires) {
			// Another call of this caller got there first.
			e.mu.Unlock()
			d.spent(reserved, -1)
			continue
		}
		f := &fetch{done: make(chan struct{})}
		e.inflight = f
		e.mu.Unlock()

		start := time.Now()
		list, ttl, err := d.fetch(r)
		d.spent(reserved, time.Since(start))
		f.list, f.err = list, err
		e.mu.Lock()
		e.inflight = nil
		if err == nil {
			if ttl <= 0 {
				ttl = d.opts.TTL
			}
			e.list, e.expires = list, time.Now().Add(ttl)
		}
		e.mu.Unlock()
		close(f.done)
		return list, err
	}
}

// current returns e's list when it is fresh, or the fetch under way.
func (e *entry) current() (list []string, f *fetch, ok bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.list != nil && time.Now().Before(e.expires) {
		return e.list, nil, true
	}
	return nil, e.inflight, false
}

// wait waits for the fetch, or for ctx.
func (f *fetch) wait(ctx context.Context) ([]string, error) {
	select {
	case <-f.done:
		return f.list, f.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Headers the fetch does not copy from the call: they describe the call's
// own body or connection (Mcp-Name and Mcp-Param-* mirror its params), and
// the fetch sets its own. Everything else is forwarded as is, Accept and
// Last-Event-ID included, so the server judges the list request as it
// judges the call.
var notForwarded = map[string]bool{
	"Accept-Encoding": true, "Connection": true, "Content-Encoding": true,
	"Content-Length": true, "Expect": true, "Keep-Alive": true,
	mcpwire.HeaderMethod: true, mcpwire.HeaderName: true, "Te": true,
	"Trailer": true, "Transfer-Encoding": true, "Upgrade": true,
}

func forwarded(k string) bool {
	return !notForwarded[k] && !strings.HasPrefix(k, mcpwire.HeaderParamPrefix)
}

// Tracing headers change with every request and grant nothing: they are
// forwarded, so the list shows up in the caller's trace, but are not part
// of the default cache key. They are the only forwarded thing left out.
var volatile = map[string]bool{
	"Traceparent": true, "Tracestate": true, "Baggage": true, "X-Request-Id": true,
	"X-Amzn-Trace-Id": true, "Sentry-Trace": true, "X-B3-Traceid": true, "X-B3-Spanid": true,
	"X-B3-Parentspanid": true, "X-B3-Sampled": true, "X-Cloud-Trace-Context": true,
}

// CallerKey identifies the caller of r for caching: everything a
// tools/list fetch forwards that a server could read to decide what to
// list. That is the URL, Host, the remote IP address, the local address
// the request arrived on, TLS or not and the client certificate, every
// forwarded request header but tracing headers, and the call's
// params._meta (when r carries the call, see CallFromContext). Values that
// middleware put in the request's context are forwarded but cannot be
// keyed: derive them from what is (a header, a cookie, the certificate). Two requests
// with the same key get the same list from any server that decides by
// what it is sent.
func CallerKey(r *http.Request) string {
	// The headers to key, sorted by name; most requests have a few, held
	// on the stack.
	var arr [24]keyedValues
	keys := arr[:0]
	// The path as it is sent on (escaped): /t/a%2Fb/mcp and /t/a/b/mcp are
	// different callers to a router that matches the escaped path.
	path := r.URL.EscapedPath()
	remote := r.RemoteAddr
	if host, _, err := net.SplitHostPort(remote); err == nil {
		remote = host
	}
	local, hasLocal := "", false
	if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && la != nil {
		local, hasLocal = la.String(), true
	}
	var meta []byte
	if c, ok := CallFromContext(r.Context()); ok && c.Meta != nil {
		meta = c.Meta
	}
	size := len(path) + 1 + len(r.URL.RawQuery) + len("\nhost\x00") + len(r.Host) + len("\nremote\x00") + len(remote)
	if hasLocal {
		size += len("\nlocal\x00") + len(local)
	}
	if r.TLS != nil {
		size += len("\ntls\x00") + len(r.TLS.ServerName) + 1 + sha256.Size
	}
	if meta != nil {
		size += len("\n_meta\x00") + len(meta)
	}
	for k, vs := range r.Header {
		if keyedHeader(k) {
			keys = append(keys, keyedValues{k, vs})
			size += 1 + len(k)
			for _, v := range vs {
				size += 1 + len(v)
			}
		}
	}
	// Sorted by name through an index, so the sort moves bytes, not
	// strings and slices (no write barriers).
	var orderArr [len(arr)]uint8
	order := orderArr[:0]
	if len(keys) <= len(orderArr) {
		for i := range keys {
			order = append(order, uint8(i))
			for j := len(order) - 1; j > 0 && keys[order[j]].name < keys[order[j-1]].name; j-- {
				order[j], order[j-1] = order[j-1], order[j]
			}
		}
	} else {
		slices.SortFunc(keys, func(a, b keyedValues) int { return strings.Compare(a.name, b.name) })
	}
	var b strings.Builder
	b.Grow(size)
	b.WriteString(path)
	b.WriteByte('?')
	b.WriteString(r.URL.RawQuery)
	b.WriteString("\nhost\x00")
	b.WriteString(r.Host)
	b.WriteString("\nremote\x00")
	b.WriteString(remote)
	if hasLocal {
		b.WriteString("\nlocal\x00")
		b.WriteString(local)
	}
	if r.TLS != nil {
		b.WriteString("\ntls\x00")
		b.WriteString(r.TLS.ServerName) // a server may route by SNI
		if certs := r.TLS.PeerCertificates; len(certs) > 0 {
			// A client certificate is who the caller is, to a server
			// that authenticates with mutual TLS.
			sum := sha256.Sum256(certs[0].Raw)
			b.WriteByte(0)
			b.Write(sum[:])
		}
	}
	for i := range keys {
		k := &keys[i]
		if len(order) > 0 {
			k = &keys[order[i]]
		}
		b.WriteByte('\n')
		b.WriteString(k.name)
		for _, v := range k.values {
			b.WriteByte(0)
			b.WriteString(v)
		}
	}
	if meta != nil {
		b.WriteString("\n_meta\x00")
		b.Write(meta)
	}
	return b.String()
}

type keyedValues struct {
	name   string
	values []string
}

// keyedHeader reports whether CallerKey keys the header k: forwarded(k)
// and not volatile[k], decided by one switch instead of two map lookups
// (TestKeyedHeader holds it to the maps).
func keyedHeader(k string) bool {
	switch k {
	case "Accept-Encoding", "Connection", "Content-Encoding", "Content-Length", "Expect",
		"Keep-Alive", mcpwire.HeaderMethod, mcpwire.HeaderName, "Te", "Trailer",
		"Transfer-Encoding", "Upgrade",
		"Traceparent", "Tracestate", "Baggage", "X-Request-Id", "X-Amzn-Trace-Id",
		"Sentry-Trace", "X-B3-Traceid", "X-B3-Spanid", "X-B3-Parentspanid", "X-B3-Sampled",
		"X-Cloud-Trace-Context":
		return false
	}
	return !strings.HasPrefix(k, mcpwire.HeaderParamPrefix)
}

var listIDs atomic.Int64

// asCaller returns the _meta and era of the requests Discovery makes as
// the caller of r: the call's own, or, asked without a call (not by the
// guard), those of a client of its own in the era of r's header.
func asCaller(r *http.Request) (meta []byte, modern bool) {
	if c, ok := CallFromContext(r.Context()); ok {
		return c.Meta, c.Modern
	}
	v, _ := single(r.Header, mcpwire.HeaderProtocolVersion)
	if modern = mcpwire.IsModern(v); modern {
		meta, _ = json.Marshal(mcpwire.Meta(v, "toolguard", "1"))
	}
	return meta, modern
}

// fetch asks the handler for the whole tool list, as the caller of r.
func (d *Discovery) fetch(r *http.Request) ([]string, time.Duration, error) {
	ctx, cancel := context.WithTimeout(r.Context(), d.opts.Timeout)
	defer cancel()
	meta, modern := asCaller(r)
	var names []string
	var ttl time.Duration
	cursor := ""
	for page := 0; page < d.opts.MaxPages; page++ {
		id := "toolguard-list-" + strconv.FormatInt(listIDs.Add(1), 10)
		res, err := d.page(ctx, r, id, cursor, meta, modern)
		if err != nil {
			return nil, 0, err
		}
		names = append(names, res.Names...)
		if res.TTLMs != nil && (page == 0 || time.Duration(*res.TTLMs)*time.Millisecond < ttl) {
			ttl = time.Duration(*res.TTLMs) * time.Millisecond
		}
		if res.NextCursor == "" {
			slices.Sort(names)
			return slices.Compact(names), ttl, nil
		}
		cursor = res.NextCursor
	}
	return nil, 0, fmt.Errorf("toolguard: tools/list has more than %d pages", d.opts.MaxPages)
}

func (d *Discovery) page(ctx context.Context, r *http.Request, id, cursor string, meta []byte, modern bool) (mcpwire.Page, error) {
	body, stream, err := d.send(ctx, r, "tools/list", mcpwire.ListRequest(id, cursor, meta), modern)
	if err != nil {
		return mcpwire.Page{}, err
	}
	// Names only: schemas are skipped, never materialized.
	p, err := decodeListReply(body, stream, id)
	if err != nil {
		return mcpwire.Page{}, fmt.Errorf("toolguard: tools/list: %w", err)
	}
	return p, nil
}

// send hands the handler the request body for method as the caller of r
// (the caller's URL, Host, TLS state and forwarded headers) and returns
// the reply's body, and whether it is an event stream, when the handler
// answered 200 within MaxBodyBytes.
func (d *Discovery) send(ctx context.Context, r *http.Request, method string, body []byte, modern bool) ([]byte, bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.URL.String(), bytes.NewReader(body))
	if err != nil {
		return nil, false, err
	}
	req.RemoteAddr, req.Host, req.TLS, req.RequestURI = r.RemoteAddr, r.Host, r.TLS, r.RequestURI
	req.Proto, req.ProtoMajor, req.ProtoMinor = r.Proto, r.ProtoMajor, r.ProtoMinor
	for k, vs := range r.Header {
		if forwarded(k) {
			req.Header[k] = vs
		}
	}
	if ct, ok := single(r.Header, "Content-Type"); !ok || !mcpwire.IsJSON(ct) {
		req.Header.Set("Content-Type", "application/json")
	}
	if len(req.Header["Accept"]) == 0 {
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	if _, ok := r.Header[mcpwire.HeaderMethod]; ok || modern {
		req.Header.Set(mcpwire.HeaderMethod, method)
	}
	w := newCaptureWriter(d.opts.MaxBodyBytes)
	done := make(chan struct{})
	var panicked string // set before done is closed
	go func() {
		defer close(done)
		defer func() {
			if p := recover(); p != nil && p != http.ErrAbortHandler {
				panicked = fmt.Sprint(p)
			}
		}()
		d.h.ServeHTTP(w, req)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		// The server may already have put messages for the caller on this
		// request (mcp-go's forwarder takes a session's queued ones at
		// once): they are the caller's, now and when the handler ends.
		n := relayFrom(ctx, w, body, 0)
		go func() {
			<-done
			relayFrom(ctx, w, body, n)
		}()
		return nil, false, fmt.Errorf("toolguard: %s: %w", method, ctx.Err())
	}
	if panicked != "" {
		return nil, false, fmt.Errorf("toolguard: %s: handler panicked: %s", method, panicked)
	}
	reply := w.reply()
	if reply.Status != http.StatusOK {
		return nil, false, fmt.Errorf("toolguard: %s: HTTP %d%s", method, reply.Status, snippet(reply.Body))
	}
	if reply.Over {
		return nil, false, fmt.Errorf("toolguard: %s: reply larger than MaxBodyBytes (%d)", method, d.opts.MaxBodyBytes)
	}
	stream := mcpwire.IsEventStream(reply.Header.Get("Content-Type"))
	if stream {
		relay(ctx, otherMessages(reply.Body, body))
	}
	return reply.Body, stream, nil
}

// relayFrom relays the messages other than the reply to request that the
// event stream written to w so far holds, past the first skip of them, and
// returns how many there are.
func relayFrom(ctx context.Context, w *captureWriter, request []byte, skip int) int {
	ct, sent := w.Sent()
	if !mcpwire.IsEventStream(ct) {
		return skip
	}
	msgs := otherMessages(sent, request)
	if len(msgs) > skip {
		relay(ctx, msgs[skip:])
		return len(msgs)
	}
	return skip
}

// otherMessages returns the messages of the event stream that are not
// the reply to request (notifications and requests the server sent the
// caller's session on the way).
func otherMessages(stream, request []byte) [][]byte {
	var req struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(request, &req) != nil {
		return nil
	}
	var out [][]byte
	for _, data := range mcpwire.EventMessages(stream) {
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(data, &m) == nil && bytes.Equal(m.ID, req.ID) {
			continue
		}
		out = append(out, data)
	}
	return out
}

// snippet quotes the start of a refusal's body for the List error.
func snippet(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return ""
	}
	if len(b) > 120 {
		b = b[:120]
	}
	return ": " + strconv.Quote(string(b))
}

// findSSEReply returns the data of the event stream message whose id is id.
func findSSEReply(stream []byte, id string) []byte {
	want := strconv.Quote(id)
	for _, data := range mcpwire.EventMessages(stream) {
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(data, &m) == nil && string(m.ID) == want {
			return data
		}
	}
	return nil
}

// decodeListReply reads the reply to the tools/list with the string id:
// msg is a JSON-RPC message, or an event stream when stream is set.
//
// Names only: the reply is read by the strict reader's scanner, which
// takes the id, result.tools[].name, result.nextCursor and result.ttlMs
// and steps over every other value (input and output schemas, titles,
// annotations) without materializing it. Whenever that read fails (a
// reply outside the strict subset: a key twice or spelled in another case,
// invalid UTF-8, a number beyond float64, an error reply, a missing or
// non-string name, a reply to another id, ...), the reply is read again by
// encoding/json as before (decodeListReplyJSON), so the outcome is always
// the one encoding/json gives: the fast read only answers where the two
// agree (FuzzListReply).
func decodeListReply(msg []byte, stream bool, id string) (mcpwire.Page, error) {
	var p mcpwire.Page
	var ok bool
	if stream {
		p, ok = readStreamListReply(msg, id)
	} else {
		p, ok = readJSONListReply(msg, id)
	}
	if ok {
		return p, nil
	}
	return decodeListReplyJSON(msg, stream, id)
}

// decodeListReplyJSON reads the reply with encoding/json: the message of
// the stream whose id is id, then the page.
func decodeListReplyJSON(msg []byte, stream bool, id string) (mcpwire.Page, error) {
	if stream {
		if msg = findSSEReply(msg, id); msg == nil {
			return mcpwire.Page{}, errors.New("no reply in the event stream")
		}
	}
	return mcpwire.DecodeListReply(msg, id)
}

// readJSONListReply reads msg, the reply to the tools/list with the
// string id, with the strict scanner; ok is false when it cannot tell.
func readJSONListReply(msg []byte, id string) (mcpwire.Page, bool) {
	r, ok := readReply(msg)
	if !ok || !r.hasResult || string(r.id) != strconv.Quote(id) {
		return mcpwire.Page{}, false
	}
	return r.page, true
}

// readStreamListReply reads the event stream msg as findSSEReply and
// decodeListReply do: the first message whose id is id. Every message up
// to it must read strictly, or ok is false.
func readStreamListReply(stream []byte, id string) (mcpwire.Page, bool) {
	want := strconv.Quote(id)
	for _, data := range mcpwire.EventMessages(stream) {
		r, ok := readReply(data)
		if !ok {
			return mcpwire.Page{}, false
		}
		if string(r.id) == want {
			return r.page, r.hasResult
		}
	}
	return mcpwire.Page{}, false
}

// Keys of a tools/list reply, per level, for the scanner: a key equal to
// one of them under case folding, or twice, ends the fast read.
var (
	replyKeys  = []string{"id", "result", "error"}
	resultKeys = []string{"tools", "nextCursor", "ttlMs"}
	toolKeys   = []string{"name"}
)

// reply is what readReply takes from a JSON-RPC message.
type reply struct {
	id        []byte // the raw id, nil when absent
	hasResult bool
	page      mcpwire.Page
}

// readReply reads a JSON-RPC message in the strict subset whose error is
// absent or null and whose result, if any, is a tools/list page. ok is
// false for anything else.
func readReply(b []byte) (r reply, ok bool) {
	return readReplyWith(b, func(s *scanner, r *reply) bool { return s.listPage(&r.page) })
}

// readReplyWith is readReply with the result read by result.
func readReplyWith(b []byte, result func(*scanner, *reply) bool) (r reply, ok bool) {
	s := scanner{b: b}
	s.ws()
	if s.i >= len(b) || b[s.i] != '{' {
		return r, false
	}
	ok = s.members(replyKeys, func(k int) bool {
		switch k {
		case 0:
			start := s.i
			if !s.value() {
				return false
			}
			r.id = b[start:s.i]
			return true
		case 1:
			r.hasResult = true
			return result(&s, &r)
		case 2:
			return s.null()
		}
		return s.value()
	})
	if !ok {
		return r, false
	}
	s.ws()
	return r, s.i == len(b)
}

// null steps over a null literal at s.i.
func (s *scanner) null() bool {
	if len(s.b)-s.i >= 4 && string(s.b[s.i:s.i+4]) == "null" {
		s.i += 4
		return true
	}
	return false
}

// listPage reads a tools/list result object: tools an array of objects
// each with a string name, nextCursor a string or null, ttlMs an integer
// in int64 or null; every other value is skipped.
func (s *scanner) listPage(p *mcpwire.Page) bool {
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		return false
	}
	tools := false
	ok := s.members(resultKeys, func(k int) bool {
		switch k {
		case 0:
			tools = true
			return s.toolNames(p)
		case 1:
			if s.null() {
				return true
			}
			if s.i >= len(s.b) || s.b[s.i] != '"' {
				return false
			}
			sp, ok := s.str()
			if ok {
				var scratch [64]byte
				p.NextCursor = string(decoded(scratch[:0], s.b, sp))
			}
			return ok
		case 2:
			if s.null() {
				return true
			}
			var sp span
			if !s.capture(&sp) || sp.kind != kInt {
				return false
			}
			n, err := strconv.ParseInt(string(sp.raw(s.b)), 10, 64)
			if err != nil {
				return false
			}
			p.TTLMs = &n
			return true
		}
		return s.value()
	})
	return ok && tools
}

// toolNames reads the tools array into p.Names.
func (s *scanner) toolNames(p *mcpwire.Page) bool {
	if s.i >= len(s.b) || s.b[s.i] != '[' || !s.enter() {
		return false
	}
	s.i++
	p.Names = make([]string, 0, 16)
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		s.depth--
		return true
	}
	for {
		if s.i >= len(s.b) || s.b[s.i] != '{' {
			return false
		}
		var name span
		if !s.members(toolKeys, func(k int) bool {
			if k == 0 {
				if s.i >= len(s.b) || s.b[s.i] != '"' {
					return false
				}
				sp, ok := s.str()
				name = sp
				return ok
			}
			return s.value()
		}) || name.kind != kString {
			return false
		}
		var scratch [128]byte
		p.Names = append(p.Names, string(decoded(scratch[:0], s.b, name)))
		s.ws()
		if s.i >= len(s.b) {
			return false
		}
		switch s.b[s.i] {
		case ',':
			s.i++
			s.ws()
		case ']':
			s.i++
			s.depth--
			return true
		default:
			return false
		}
	}
}
