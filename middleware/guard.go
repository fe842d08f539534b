package toolguard

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/toolguard/toolguard/internal/mcpwire"
)

// Defaults for [Options].
const (
	DefaultMaxBodyBytes  = 4 << 20
	DefaultToolListLimit = 100
)

// Options configures a [Guard]. The zero value of every field but Tools is
// a documented default.
type Options struct {
	// Tools says which tools the server has, where they can be read in
	// process (see [ToolSet]). Nil: the server decides every call.
	Tools ToolSet

	// Skip, if set, is asked about each POST with a body before it is
	// read; when it returns true the request and its answer pass untouched.
	Skip func(r *http.Request) bool

	// MaxBodyBytes is the most the middleware reads of a body (default 4
	// MiB). A larger body passes through, streamed on, never held whole.
	MaxBodyBytes int64

	// ToolListLimit caps data.availableTools (default 100);
	// data.availableToolsTruncated marks a cut.
	ToolListLimit int

	// HideToolList leaves data.availableTools out, for servers that must
	// not enumerate their tools (SEP-2140).
	HideToolList bool

	// HideSuggestions leaves data.suggestions (the nearest names) out, and
	// out of the message. Set both Hide fields to disclose no name.
	HideSuggestions bool

	// BareMessage makes the message the spec example's, "Unknown tool: X".
	// By default it also names the nearest names and the way out, for the
	// model, which reads the message and rarely sees data.
	BareMessage bool

	// OnReject, if set, is told of every answer the guard writes, before
	// it is written; it must not use the request body.
	OnReject func(r *http.Request, rej *Rejection)

	// AnswerHeaderMismatch answers a 2026-07-28 tools/call whose Mcp-Method
	// or Mcp-Name header does not match the body with 400 and -32020, as
	// the spec asks of the server, unless its version or Accept lets the
	// server refuse it first. By default the server answers it.
	AnswerHeaderMismatch bool

	// ListTTL is how long the guard keeps the server's answer to a
	// caller's own tools/list (default 10 minutes, or the list's ttlMs if
	// shorter); list_changed, initialize and DELETE drop it sooner.
	ListTTL time.Duration

	// OnPass, if set, is told of every request the guard passes through,
	// before it reaches the next handler; it must not use the body.
	OnPass func(r *http.Request, p Pass)

	// Logger, if set, logs every pass-through (a tools/call at Info, any
	// other at Debug) and every answer the guard writes (at Info; at Warn
	// one that replaces the server's without a list kept, ErrNoList).
	Logger *slog.Logger
}

// A Guard answers a tools/call naming a tool the server does not have with
// a JSON-RPC -32602 error (AnswerHeaderMismatch: Mcp-* headers that do not
// match the body, -32020); all else passes untouched. Safe for concurrent use.
type Guard struct {
	opts Options
	seen *seenLists // the lists the server gave each caller, read as they passed
}

// New validates opts and returns a Guard.
func New(opts Options) (*Guard, error) {
	switch {
	case opts.Tools != nil && isNil(opts.Tools):
		return nil, errors.New("toolguard: Options.Tools holds a nil value (leave Tools nil to let the server decide every call)")
	case opts.MaxBodyBytes < 0:
		return nil, errors.New("toolguard: Options.MaxBodyBytes must not be negative")
	case opts.ToolListLimit < 0:
		return nil, errors.New("toolguard: Options.ToolListLimit must not be negative (use HideToolList to leave the list out)")
	case opts.ListTTL < 0:
		return nil, errors.New("toolguard: Options.ListTTL must not be negative")
	}
	if opts.MaxBodyBytes == 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.ToolListLimit == 0 {
		opts.ToolListLimit = DefaultToolListLimit
	}
	if opts.ListTTL == 0 {
		opts.ListTTL = DefaultListTTL
	}
	return &Guard{opts: opts, seen: newSeenLists(opts.ListTTL)}, nil
}

// Handler returns next guarded: a tools/call for a tool the tool set knows
// the server does not have is answered here; every other request reaches
// next with its body byte for byte. For a tools/call the tool set does not
// know, next gets a ResponseWriter that passes its answer through byte for
// byte, except the server's own not-found answer, which the guard replaces
// (see the package doc). Any other answer passes as written, read only for
// a changed list; a DELETE, an initialize and a skipped request get w
// itself.
//
// Unlike Check, Handler hands next the request itself: while next runs,
// r.Body yields the bytes the guard read and then the rest of the body, as
// a middleware that wraps r.Body (http.MaxBytesReader) does; when next
// returns, r.Body is the original body again, unless next replaced it.
//
// It panics if g was not made by New or next is nil.
func (g *Guard) Handler(next http.Handler) http.Handler {
	g.mustBeMade()
	if next == nil {
		panic("toolguard: Handler needs the handler to guard (next is nil)")
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		read, rej := g.check(r)
		if rej != nil {
			_ = rej.Write(w)
			return
		}
		if read.obs != nil {
			ww := read.obs.watch(w, r)
			defer func() {
				if p := recover(); p != nil {
					// The server's handler did not end its answer: what it
					// wrote goes out as it is, as without the guard.
					ww.abort()
					panic(p)
				}
				ww.finish()
			}()
			w = ww
		}
		if read.buf == nil {
			next.ServeHTTP(w, r)
			return
		}
		orig := r.Body
		body := &replayBody{buf: read.buf, data: read.buf.b, err: read.err, eof: read.eof, rest: orig}
		r.Body = body
		next.ServeHTTP(w, r)
		if r.Body == io.ReadCloser(body) {
			r.Body = orig
		}
		body.end()
	})
}

// Check is the framework-neutral decision. It returns either the request to
// hand on (r, or a shallow copy of r that tells Watch what to watch and
// whose body yields the bytes read) or the rejection to write with
// [Rejection.Write]. Exactly one of the two is non-nil. r keeps its fields,
// but its body may have been read: hand on the returned request, never r.
//
// A request handed on must be served with the ResponseWriter that
// [Guard.Watch] returns for it, so that the server's own not-found answer
// is translated as Handler translates it.
func (g *Guard) Check(r *http.Request) (*http.Request, *Rejection) {
	g.mustBeMade()
	read, rej := g.check(r)
	if rej != nil {
		return nil, rej
	}
	req := r
	// Watch is told of any observer but a plain one, and of none (a DELETE,
	// a request Skip skips, an initialize: its answer goes on untouched).
	if _, plain := read.obs.(*answers); !plain {
		req = r.WithContext(&watchContext{Context: r.Context(), g: g, obs: read.obs})
	}
	if read.buf != nil {
		if req == r {
			cp := *r // a shallow copy, whose body replays what was read
			req = &cp
		}
		req.Body = &replayBody{buf: read.buf, data: read.buf.b, err: read.err, eof: read.eof, rest: r.Body}
	}
	return req, nil
}

type watchKey struct{}

// watchContext marks a request Check handed on whose answer is watched.
type watchContext struct {
	context.Context
	g   *Guard
	obs observer
}

func (c *watchContext) Value(key any) any {
	if _, ok := key.(watchKey); ok {
		return c
	}
	return c.Context.Value(key)
}

// An observer watches the answer to a request that passes: a call whose
// server may answer not found, a tools/list whose answer is read, or a
// session's event stream that may announce a changed list.
type observer interface {
	watch(w http.ResponseWriter, r *http.Request) responseWatch
}

// A responseWatch is the ResponseWriter an observer gives the server.
type responseWatch interface {
	http.ResponseWriter
	finish() // the handler has returned
	abort()  // the handler panicked: what is held goes out as it is
}

// Watch returns, once for a request r that [Guard.Check] handed on (a
// second call passes w through), the ResponseWriter to serve r with and the
// function to call when the handler has returned (it writes a held answer).
func (g *Guard) Watch(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, func()) {
	g.mustBeMade()
	if c, ok := r.Context().Value(watchKey{}).(*watchContext); ok && c.g == g {
		if c.obs == nil {
			return w, noFinish
		}
		ww := c.obs.watch(w, r)
		c.obs = nil // (a second Watch of r passes through)
		return ww, ww.finish
	}
	return (*answers)(g).watch(w, r), noFinish // (a changeWriter's finish does nothing)
}

func noFinish() {}

// mustBeMade panics when g was not made by New, which would otherwise
// pass everything without a word.
func (g *Guard) mustBeMade() {
	if g == nil || g.seen == nil {
		panic("toolguard: Guard used without New (a zero or nil Guard)")
	}
}

// isNil reports whether v holds a nil pointer, map, slice, func or channel
// (a typed nil, such as a nil *T whose methods make a ToolSet).
func isNil(v any) bool {
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return rv.IsNil()
	}
	return false
}

// bodyRead is what check read of a body that passes: the buffer (nil when
// the body was not read), whether it holds the whole body, and the read
// error to hand on after it; and what watches its answer, if anything.
type bodyRead struct {
	buf *buffer
	eof bool
	err error
	obs observer
}

// check decides on r: the rejection to write, or what was read of the body
// of a request that passes (Handler and Check hand it on each their way).
func (g *Guard) check(r *http.Request) (bodyRead, *Rejection) {
	if reason := g.inspectable(r); reason != 0 {
		g.pass(r, Pass{Reason: reason})
		if reason == ReasonSkipped {
			return bodyRead{}, nil // the caller's own writer
		}
		return bodyRead{obs: g.session(r)}, nil
	}
	buf, eof, readErr := readBody(r.Body, g.opts.MaxBodyBytes, r.ContentLength)
	if !eof || int64(len(buf.b)) > g.opts.MaxBodyBytes {
		g.pass(r, Pass{Reason: ReasonTooLarge})
		return bodyRead{buf: buf, eof: eof, err: readErr, obs: g.session(r)}, nil
	}
	d := g.decide(r, buf.b)
	if d.rej == nil {
		g.pass(r, d.pass)
		return bodyRead{buf, eof, readErr, d.obs}, nil
	}
	putBuffer(buf)
	g.rejected(r, d.rej)
	return bodyRead{}, d.rej
}

// inspectable returns why the request is not worth reading, or zero.
func (g *Guard) inspectable(r *http.Request) Reason {
	if r.Method != http.MethodPost || r.Body == nil || r.Body == http.NoBody {
		return ReasonNotPost
	}
	if g.opts.Skip != nil && g.opts.Skip(r) {
		return ReasonSkipped
	}
	if ct := r.Header["Content-Type"]; len(ct) != 1 || mcpwire.MediaType(ct[0]) != "application/json" {
		return ReasonContentType
	}
	if ce := r.Header["Content-Encoding"]; len(ce) > 0 && (len(ce) > 1 || !strings.EqualFold(strings.TrimSpace(ce[0]), "identity")) {
		return ReasonContentEncoding
	}
	if r.ContentLength > g.opts.MaxBodyBytes {
		return ReasonTooLarge
	}
	return 0
}

// A decision is what decide made of a request: the rejection to write,
// or the reason it passes (with the tool name and the tool set's error,
// when there are) and, for a call the server decides, the call whose
// answer is watched.
type decision struct {
	rej  *Rejection
	pass Pass // its Method set only when someone listens
	obs  observer
}

// decide reads body and applies the rules of docs/RULES.md §3, one exit
// each, in the order of the Reason constants: only a call for a tool the
// tool set says is Absent, which no server refuses before its lookup
// (mayRefuse), is answered now (answerBefore).
func (g *Guard) decide(r *http.Request, body []byte) decision {
	m := readMessage(body)
	if reason := notACall(body, m); reason != 0 {
		return decision{pass: Pass{Reason: reason, Method: g.method(body, m)}, obs: g.observe(r, body, m)}
	}
	var scratch [128]byte
	nameBytes := decoded(scratch[:0], body, m.name)
	name := string(nameBytes)
	modern, eraOK := era(r.Header, body, m)
	if g.opts.AnswerHeaderMismatch && modern && eraOK {
		if rej := headerMismatch(r.Header, m.id.raw(body), nameBytes); rej != nil {
			return decision{rej: rej}
		}
	}
	p := Unsure
	if g.opts.Tools != nil {
		p = g.opts.Tools.Lookup(r, name)
	}
	if p == Present {
		// Its answer is read only for a changed list (in an event stream).
		return decision{pass: Pass{Reason: ReasonKnown, Tool: name}, obs: g.session(r)}
	}
	c := newWatched(g, r, m.id.raw(body), name, callerMeta(m.meta.raw(body)), modern)
	if p != Absent {
		return decision{pass: Pass{Reason: ReasonToServer, Tool: name}, obs: c}
	}
	if reason := mayRefuse(r.Header, body, m, nameBytes, c, eraOK); reason != 0 {
		return decision{pass: Pass{Reason: reason, Tool: name}, obs: c}
	}
	return g.answerBefore(r, c)
}

// notACall returns why m is not a tools/call read with certainty, or zero.
func notACall(body []byte, m message) Reason {
	switch {
	case !m.strict:
		return ReasonNotStrict
	case m.jsonrpc.kind != kString || !strEquals(body, m.jsonrpc, "2.0") || (m.id.kind != kString && m.id.kind != kInt):
		return ReasonNotRequest
	case m.method.kind != kString || !strEquals(body, m.method, "tools/call") || !m.paramsObject || m.name.kind != kString:
		return ReasonNotToolsCall
	}
	return 0
}

// headerMismatch returns the -32020 answer to a 2026-07-28 call whose
// Mcp-Method or Mcp-Name header does not match; nil otherwise, and for a
// repeated header or an Accept a server refuses first (acceptsBoth).
func headerMismatch(h http.Header, id, name []byte) *Rejection {
	hdr, single := mismatchedHeader(h, name)
	if hdr == "" || !single || !acceptsBoth(h["Accept"]) {
		return nil
	}
	return &Rejection{Name: string(name), Code: CodeHeaderMismatch, Status: http.StatusBadRequest, id: bytes.Clone(id), header: hdr}
}

// mayRefuse returns why a server may refuse the call c before it looks
// the tool up, or zero: the guard then leaves the call to the server.
// eraOK is era's ok.
func mayRefuse(h http.Header, body []byte, m message, name []byte, c *watched, eraOK bool) Reason {
	switch {
	case m.id.kind == kInt && !jsSafeInteger(m.id.raw(body)):
		return ReasonUnsafeID
	case !eraOK:
		return ReasonProtocolVersion
	case len(h[mcpwire.HeaderLastEventID]) > 0:
		return ReasonLastEventID
	case !acceptsBoth(h["Accept"]):
		return ReasonAccept
	}
	if !c.modern {
		return 0
	}
	if hdr, _ := mismatchedHeader(h, name); hdr != "" || mcpwire.Encoded(h.Get(mcpwire.HeaderName)) {
		return ReasonHeaderMismatch // (go-sdk v1.8 compares an encoded Mcp-Name undecoded)
	}
	if c.meta == nil || !acceptableClientMeta(c.meta) {
		return ReasonClientMeta
	}
	return 0
}

// acceptsBoth reports whether Accept headers take both application/json
// and text/event-stream, as a server asks of a POST before it looks a
// tool up: go-sdk parses the media ranges (400 otherwise), the TypeScript
// SDKs look for both names, letter case and all, in the header (406
// otherwise). A range of quality zero does not count.
func acceptsBoth(values []string) bool {
	if json, stream := mcpwire.Accepts(values); len(values) == 0 || !json || !stream {
		return false
	}
	// (Neither name holds a comma, so none spans two joined values.)
	var jsonNamed, streamNamed bool
	for _, v := range values {
		jsonNamed = jsonNamed || strings.Contains(v, "application/json")
		streamNamed = streamNamed || strings.Contains(v, "text/event-stream")
	}
	return jsonNamed && streamNamed
}

// answerBefore answers c before the server. The list it shows is the one
// the server gave the caller, when the guard has seen one, else the tool
// set's; a list that fails or has the name after all leaves the call to
// the server.
func (g *Guard) answerBefore(r *http.Request, c *watched) decision {
	var listed []byte
	var near []string
	seen := c.list()
	if seen.state(c.name) == listHas { // (a list gone too)
		return decision{pass: Pass{Reason: ReasonListed, Tool: c.name}, obs: c}
	}
	if seen.shown() {
		// What the server listed to this caller: shown as after the
		// server, and the tool set's own list is not read.
		listed, near = seen.parts(g, c.name)
	} else {
		names, err := g.opts.Tools.List(r)
		if err != nil {
			return decision{pass: Pass{Reason: ReasonListFailed, Tool: c.name, Err: err}, obs: c}
		}
		list := sortedList(names)
		if _, found := slices.BinarySearch(list, c.name); found {
			return decision{pass: Pass{Reason: ReasonListed, Tool: c.name}, obs: c}
		}
		listed = g.listed(list)
		if !g.opts.HideSuggestions {
			near = suggest(c.name, list)
		}
	}
	status := http.StatusOK
	if c.modern {
		status = http.StatusBadRequest // as mcp-go and go-sdk answer -32602 in 2026-07-28
	}
	return decision{rej: g.unknownTool(c.id, c.name, listed, near, status, false)}
}

// ErrNoList is Rejection.ListErr when an answer that replaces the server's
// not-found answer has no data.availableTools: the guard has seen no
// tools/list answer for this caller (or the one it saw has expired or was
// dropped). The guard never asks for a list.
var ErrNoList = errors.New("toolguard: no tools/list answer kept for this caller (none seen, or it expired or was dropped)")

// translate makes the guard's answer to c, whose server answered not
// found with the given status, from the list the server gave c's caller,
// without c's name.
func (g *Guard) translate(c *watched, status int, sse bool) *Rejection {
	rej := g.translation(c.list(), c.id, c.name, status, sse)
	g.rejected(c.r, rej)
	return rej
}

// translation is the answer that replaces the server's not-found answer
// to the call of name with id, drawn from seen, the caller's list.
func (g *Guard) translation(seen *seenList, id []byte, name string, status int, sse bool) *Rejection {
	listed, near := seen.parts(g, name)
	rej := g.unknownTool(id, name, listed, near, status, sse)
	rej.Translated = true
	if !seen.shown() && g.showsList() {
		rej.ListErr = ErrNoList
	}
	return rej
}

// showsList reports whether answers show anything drawn from a list.
func (g *Guard) showsList() bool { return !g.opts.HideToolList || !g.opts.HideSuggestions }

// era reports whether the request is a 2026-07-28 request, and ok false
// when its protocol version is stated in a way a server may refuse before
// looking at the tool: a repeated, empty or unreleased header version, an
// unreleased or non-string _meta version, a _meta version the header does
// not repeat exactly, or a 2026-07-28 request without a _meta version.
func era(h http.Header, body []byte, m message) (modern, ok bool) {
	hv := ""
	if vs := h[mcpwire.HeaderProtocolVersion]; len(vs) > 0 {
		if len(vs) > 1 || !mcpwire.Known(vs[0]) {
			return false, false
		}
		hv = vs[0]
	}
	mv := ""
	switch m.version.kind {
	case kString:
		var scratch [32]byte
		mv = string(decoded(scratch[:0], body, m.version))
		if !mcpwire.Known(mv) || mv != hv {
			return false, false
		}
	case absent:
	default:
		return false, false
	}
	modern = mcpwire.Sessionless(hv) || mcpwire.Sessionless(mv)
	if modern && mv == "" {
		return true, false
	}
	return modern, true
}

// jsSafeInteger reports whether an integer literal is within ±(2^53−1).
func jsSafeInteger(b []byte) bool {
	if len(b) < 16 {
		return true
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	return err == nil && n <= 1<<53-1 && n >= -(1<<53-1)
}

// mismatchedHeader checks Mcp-Method and Mcp-Name against a tools/call for
// name. It returns the header at fault, if any; ok is false when the header
// is present more than once (ambiguous: never answered).
func mismatchedHeader(h http.Header, name []byte) (header string, ok bool) {
	if vs := h[mcpwire.HeaderMethod]; len(vs) != 1 || vs[0] != "tools/call" {
		return "Mcp-Method", len(vs) <= 1
	}
	// An empty value counts as missing, as servers read it.
	vs := h[mcpwire.HeaderName]
	if len(vs) != 1 || vs[0] == "" || !mcpwire.NameEquals(vs[0], name) {
		return "Mcp-Name", len(vs) <= 1
	}
	return "", true
}
