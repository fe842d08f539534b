package toolguard

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
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
	// lists (a list of 1,000 tools with schemas can cost the server as
	// much as hundreds of its not-found answers). A fetch starts only
	// while the time spent stays within Budget a second (and a second's
	// worth at once); past it List fails at once (ErrBudget), and the
	// guard's answer goes out without data.availableTools.
	//
	// A fetch is charged at most Budget: one slow list (a server far away,
	// or one past its Timeout) then keeps lists from every caller for
	// about a second, not for as long as it took times 1/Budget. The
	// price: where a single list takes longer than Budget, one starts
	// about once a second, so the server may spend up to that list's time
	// (at most Timeout) a second. Default DefaultListBudget (20ms a
	// second: 2%).
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
	// Return "" to share nothing for a request. Keys are kept as their
	// SHA-256 digests, so a long key (every forwarded header) costs the
	// cache 32 bytes.
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
	// Budget a second, up to Budget, and each fetch takes what it took, at
	// most Budget), and what the last fetch took, charged when one starts.
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
	// ownerGone: the fetch failed once the request that started it had
	// ended (its client left, or its ListTimeout passed), not for a cause
	// of its own. Set before done is closed.
	ownerGone bool
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
		took = min(max(took, time.Nanosecond), d.opts.Budget)
		d.allowance += reserved - took
		d.lastCost = took
	}
	d.mu.Unlock()
}

// charged is fetch, charged to the budget reserved for it: however it
// ends, even by a panic, what it took is charged.
func (d *Discovery) charged(r *http.Request, reserved time.Duration) ([]string, time.Duration, error) {
	start := time.Now()
	defer func() { d.spent(reserved, time.Since(start)) }()
	return d.fetch(r)
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
		reserved, ok := d.spend()
		if !ok {
			return nil, ErrBudget
		}
		list, _, err := d.charged(r, reserved)
		return list, err
	}
	sum := sha256.Sum256([]byte(key)) // kept as a digest: a key holds every forwarded header
	key = string(sum[:])
	for {
		// A caller seen before: its list, or the fetch under way for it.
		d.mu.Lock()
		e := d.entries[key]
		d.mu.Unlock()
		if e != nil {
			if list, f, ok := e.current(); ok {
				return list, nil
			} else if f != nil {
				list, err := f.wait(r.Context())
				if err != nil && r.Context().Err() == nil && f.ownerGone {
					// The call that started the fetch ended, this one has
					// time left: it asks again.
					continue
				}
				return list, err
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
		if e.inflight != nil || e.fresh() {
			// Another call of this caller got there first.
			e.mu.Unlock()
			d.spent(reserved, -1)
			continue
		}
		f := &fetch{done: make(chan struct{})}
		e.inflight = f
		e.mu.Unlock()
		return d.fetchFor(r, e, f, reserved)
	}
}

// errFetchPanicked is what the waiters of a fetch that panicked get.
var errFetchPanicked = errors.New("toolguard: tools/list: the fetch panicked")

// fetchFor makes the fetch f of e's caller. However it ends, even by a
// panic, e no longer waits for it and its waiters are told.
func (d *Discovery) fetchFor(r *http.Request, e *entry, f *fetch, reserved time.Duration) ([]string, error) {
	var ttl time.Duration
	f.err = errFetchPanicked // until the fetch returns
	defer func() {
		e.mu.Lock()
		e.inflight = nil
		if f.err == nil {
			if ttl <= 0 {
				ttl = d.opts.TTL
			}
			e.list, e.expires = f.list, time.Now().Add(ttl)
		}
		e.mu.Unlock()
		close(f.done)
	}()
	f.list, ttl, f.err = d.charged(r, reserved)
	f.ownerGone = f.err != nil && r.Context().Err() != nil
	return f.list, f.err
}

// current returns e's list when it is fresh, or the fetch under way.
func (e *entry) current() (list []string, f *fetch, ok bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.fresh() {
		return e.list, nil, true
	}
	return nil, e.inflight, false
}

// fresh reports whether e holds a list within its TTL; e.mu is held.
func (e *entry) fresh() bool { return e.list != nil && time.Now().Before(e.expires) }

// wait waits for the fetch, or for ctx.
func (f *fetch) wait(ctx context.Context) ([]string, error) {
	select {
	case <-f.done:
		return f.list, f.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

var listIDs atomic.Int64

// asCaller returns the _meta and era of the requests Discovery makes as
// the caller of r: the call's own, or, asked without a call (not by the
// guard), those of a client of its own in the era of r's header.
func asCaller(r *http.Request) (meta []byte, modern bool) {
	if c, ok := CallFromContext(r.Context()); ok {
		return c.Meta, c.Sessionless
	}
	v, _ := single(r.Header, mcpwire.HeaderProtocolVersion)
	if modern = mcpwire.Sessionless(v); modern {
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
			return sortedList(names), ttl, nil
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
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "/", bytes.NewReader(body))
	if err != nil {
		return nil, false, err
	}
	// The caller's URL as it is: through String and back, a path that
	// begins with // would be read as a host.
	if r.URL != nil {
		u := *r.URL
		req.URL = &u
	}
	req.RemoteAddr, req.Host, req.TLS, req.RequestURI = r.RemoteAddr, r.Host, r.TLS, r.RequestURI
	req.Proto, req.ProtoMajor, req.ProtoMinor = r.Proto, r.ProtoMajor, r.ProtoMinor
	for k, vs := range r.Header {
		if forwarded(k) {
			req.Header[k] = slices.Clone(vs) // the handler may append to its own
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
