package toolguard

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"

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
	// Tools says which tools the server has for a request. Required.
	Tools ToolSet

	// Skip, if set, is called first; when it returns true the request passes
	// through without being read.
	Skip func(r *http.Request) bool

	// MaxBodyBytes is the most the middleware reads of a body. A larger body
	// passes through: the part read is put back in front of the rest, and
	// nothing is held whole. Zero means DefaultMaxBodyBytes (4 MiB).
	MaxBodyBytes int64

	// ToolListLimit caps data.availableTools. Zero means
	// DefaultToolListLimit (100). When the list is cut,
	// data.availableToolsTruncated is true.
	ToolListLimit int

	// HideToolList leaves data.availableTools out of rejections, for servers
	// that must not enumerate their tools to whoever asks (SEP-2140).
	HideToolList bool

	// HideSuggestions leaves data.suggestions (the registered names nearest
	// the unknown one) out of rejections. Suggestions disclose names too:
	// set both Hide fields to disclose none.
	HideSuggestions bool

	// OnReject, if set, is told of every rejection the middleware writes,
	// with the request and the answer (its Name is the tool name the caller
	// asked for). Use it to log or count which names models invent. It runs
	// before the answer is written and must not use the request body.
	OnReject func(r *http.Request, rej *Rejection)

	// SafeIntegerIDs passes through requests whose integer id lies outside
	// ±(2^53−1), the range JavaScript numbers hold exactly. Turn it on in
	// front of TypeScript (or other JavaScript) servers: their SDK refuses
	// such an id as a parse error, where the guard would otherwise answer
	// -32602 with the id echoed exactly.
	SafeIntegerIDs bool

	// AnswerHeaderMismatch makes the middleware answer a 2026-07-28
	// tools/call whose Mcp-Method or Mcp-Name header is missing or does not
	// match the body with 400 and JSON-RPC error -32020, as the spec requires
	// of the server. By default such a request passes through and the server
	// answers it.
	AnswerHeaderMismatch bool

	// ModernStatus is the HTTP status of a -32602 rejection of a 2026-07-28
	// request. The released spec (2026-07-28, basic/transports/
	// streamable-http) fixes 400 for -32020 and unsupported versions and
	// 404 for -32601, but leaves -32602 to the server, so the guard sends
	// what the server behind it sends: zero means the tool set's
	// ModernStatus method when it has one (Discover, the mcp-go and go-sdk
	// tool sets), else 400, as mcp-go and go-sdk send. The TypeScript SDK
	// v2 sends 200. 2025-era rejections are always 200.
	ModernStatus int

	// OnPass, if set, is told of every request the guard passes through,
	// with the reason (see [Reason]) and, once the body was read as a
	// tools/call, the tool name and the tool set's error. It runs before
	// the request reaches the next handler and must not use its body.
	OnPass func(r *http.Request, p Pass)

	// Logger, if set, logs every pass-through: at Info for a tools/call
	// (reason, tool, and the tool set's error), at Debug for any other
	// request. A Discover pointed at the wrong upstream shows up here as
	// reason=list-failed with the HTTP status it got.
	Logger *slog.Logger
}

// modernStatuser is implemented by tool sets that know the status their
// server sends with -32602 for a 2026-07-28 request.
type modernStatuser interface{ ModernStatus() int }

// A Guard answers a tools/call naming a tool the server does not have with
// a JSON-RPC -32602 error, and passes everything else through untouched.
// It is safe for concurrent use.
type Guard struct {
	opts         Options
	modernStatus int
	lists        listCache // the answer parts of the last lists rejected from
}

// New validates opts and returns a Guard.
func New(opts Options) (*Guard, error) {
	switch {
	case opts.Tools == nil:
		return nil, errors.New("toolguard: Options.Tools is required")
	case opts.MaxBodyBytes < 0:
		return nil, errors.New("toolguard: Options.MaxBodyBytes must not be negative")
	case opts.ToolListLimit < 0:
		return nil, errors.New("toolguard: Options.ToolListLimit must not be negative (use HideToolList to leave the list out)")
	case opts.ModernStatus != 0 && (opts.ModernStatus < 200 || opts.ModernStatus > 599):
		return nil, errors.New("toolguard: Options.ModernStatus must be an HTTP status (200-599) or zero")
	}
	if opts.MaxBodyBytes == 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.ToolListLimit == 0 {
		opts.ToolListLimit = DefaultToolListLimit
	}
	g := &Guard{opts: opts, modernStatus: opts.ModernStatus}
	if g.modernStatus == 0 {
		g.modernStatus = http.StatusBadRequest
		if ms, ok := opts.Tools.(modernStatuser); ok {
			if st := ms.ModernStatus(); st >= 200 && st <= 599 {
				g.modernStatus = st
			}
		}
	}
	return g, nil
}

// Handler returns next guarded: a tools/call for an unknown tool is answered
// here, every other request reaches next with its body byte for byte.
// The ResponseWriter is not wrapped, unless the tool set's own requests
// took messages the server meant for the caller: then next's answer
// carries them (see the package doc).
//
// Unlike Check, Handler hands next the request itself: while next runs,
// r.Body yields the bytes the guard read and then the rest of the body, as
// a middleware that wraps r.Body (http.MaxBytesReader) does; when next
// returns, r.Body is the original body again, unless next replaced it.
func (g *Guard) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		read, rej := g.check(r)
		if rej != nil {
			rej.Write(w)
			return
		}
		if read.relayed != nil {
			rw := &relayWriter{ResponseWriter: w, msgs: read.relayed}
			defer rw.finish()
			w = rw
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
		body.release()
	})
}

// Check is the framework-neutral decision. It returns either the request to
// hand on (r itself when the body was not read, otherwise a shallow copy
// whose body yields the same bytes) or the rejection to write with
// [Rejection.Write]. Exactly one of the two is non-nil. The caller's r is not
// modified.
func (g *Guard) Check(r *http.Request) (*http.Request, *Rejection) {
	read, rej := g.check(r)
	if rej != nil {
		return nil, rej
	}
	if read.buf == nil {
		return r, nil
	}
	p := newPassRequest(r, read.buf, read.eof, read.err)
	return &p.req, nil
}

// bodyRead is what check read of a body that passes: the buffer (nil when
// the body was not read), whether it holds the whole body, and the read
// error to hand on after it.
type bodyRead struct {
	buf *buffer
	eof bool
	err error
	// relayed: messages for the caller to deliver with the server's answer
	// (Handler does; Check cannot, as the framework writes the answer).
	relayed [][]byte
}

// check decides on r: the rejection to write, or what was read of the body
// of a request that passes (Handler and Check hand it on each their way).
func (g *Guard) check(r *http.Request) (bodyRead, *Rejection) {
	if reason := g.inspectable(r); reason != 0 {
		if g.reporting() {
			g.pass(r, reason, "", nil)
		}
		return bodyRead{}, nil
	}
	buf, eof, readErr := readBody(r.Body, g.opts.MaxBodyBytes, r.ContentLength)
	if !eof || int64(len(buf.b)) > g.opts.MaxBodyBytes {
		if g.reporting() {
			g.pass(r, ReasonTooLarge, "", nil)
		}
		return bodyRead{buf: buf, eof: eof, err: readErr}, nil
	}
	var undelivered [][]byte
	rej, reason, tool, err := g.decide(r, buf.b, &undelivered)
	if rej == nil {
		if g.reporting() {
			g.pass(r, reason, tool, err)
		}
		return bodyRead{buf, eof, readErr, undelivered}, nil
	}
	putBuffer(buf)
	if g.opts.OnReject != nil {
		g.opts.OnReject(r, rej)
	}
	return bodyRead{}, rej
}

// inspectable returns why the request is not worth reading, or zero.
func (g *Guard) inspectable(r *http.Request) Reason {
	if r.Method != http.MethodPost || r.Body == nil || r.Body == http.NoBody {
		return ReasonNotPost
	}
	if g.opts.Skip != nil && g.opts.Skip(r) {
		return ReasonSkipped
	}
	if ct, ok := single(r.Header, "Content-Type"); !ok || !mcpwire.IsJSON(ct) {
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

// decide reads body and returns the rejection to write, or the reason to
// pass (with the tool name and the tool set's error, when there are). The
// checks run in the order of the Reason constants.
//
// undelivered receives the messages the server sent the caller on the tool
// set's requests for a call that passes, when the tool set cannot give them
// back to the server: Handler delivers them with the server's answer.
func (g *Guard) decide(r *http.Request, body []byte, undelivered *[][]byte) (rej *Rejection, reason Reason, tool string, err error) {
	m := readMessage(body)
	if !m.strict {
		return nil, ReasonNotStrict, "", nil
	}
	if m.jsonrpc.kind != kString || !strEquals(body, m.jsonrpc, "2.0") || (m.id.kind != kString && m.id.kind != kInt) {
		return nil, ReasonNotRequest, "", nil
	}
	if m.method.kind != kString || !strEquals(body, m.method, "tools/call") || !m.paramsObject || m.name.kind != kString {
		return nil, ReasonNotToolsCall, "", nil
	}
	var scratch [128]byte
	nameBytes := decoded(scratch[:0], body, m.name)
	// The name is materialized only when someone listens or a tool set
	// needs it, below.
	named := func() string {
		if g.reporting() {
			return string(nameBytes)
		}
		return ""
	}
	if g.opts.SafeIntegerIDs && m.id.kind == kInt && !jsSafeInteger(m.id.raw(body)) {
		return nil, ReasonUnsafeID, named(), nil
	}
	modern, ok := era(r.Header, body, m)
	if !ok {
		return nil, ReasonProtocolVersion, named(), nil
	}
	if len(r.Header[mcpwire.HeaderLastEventID]) > 0 {
		return nil, ReasonLastEventID, named(), nil
	}
	// A request without Accept: go-sdk (400) and the TypeScript SDKs (406)
	// refuse it before the lookup.
	if len(r.Header["Accept"]) == 0 {
		return nil, ReasonAccept, named(), nil
	}
	json, stream := mcpwire.Accepts(r.Header["Accept"])
	if modern {
		if hdr, single := mismatchedHeader(r.Header, nameBytes); hdr != "" {
			if !single || !g.opts.AnswerHeaderMismatch {
				return nil, ReasonHeaderMismatch, named(), nil
			}
			if !json && !stream {
				return nil, ReasonAccept, named(), nil
			}
			return newHeaderMismatch(m.id.raw(body), string(nameBytes), hdr, stream && !json), 0, "", nil
		}
	}
	if !json && !stream {
		return nil, ReasonAccept, named(), nil
	}

	name := string(nameBytes)
	tools := g.opts.Tools
	// A 2026-07-28 caller is known by its _meta as much as by its headers:
	// the tool set sees the call from Lookup on. A 2025-era call's _meta
	// (rare, and never what servers list by) is added for List only.
	// params._meta is where the reader found it (paramsMeta's walk, done
	// by the reader in the same pass).
	var meta []byte
	if m.meta.kind != absent {
		meta = m.meta.raw(body)
	}
	var c *Call
	lr := r
	if modern {
		lr, c = withCall(r, Call{Name: name, Meta: forwardedMeta(meta), Modern: true})
	}
	if p := tools.Lookup(lr, name); p != Absent {
		if c != nil {
			// Lookup saw the call and may have asked the server.
			*undelivered = redeliver(tools, lr)
		}
		if p == Present {
			return nil, ReasonKnown, name, nil
		}
		return nil, ReasonUnsure, name, nil
	}
	if c == nil {
		lr, _ = withCall(r, Call{Name: name, Meta: forwardedMeta(meta)})
	} else if c.Meta == nil || !acceptableClientMeta(c.Meta) {
		return nil, ReasonClientMeta, name, nil
	}
	names, err := tools.List(lr)
	if err != nil {
		*undelivered = redeliver(tools, lr)
		return nil, ReasonListFailed, name, err
	}
	// A list rejected from before is searched in its sorted copy; a new
	// one name by name, before its answer parts are built (a list that
	// has the name after all is never precomputed).
	la := g.cachedAnswer(names)
	if la != nil {
		if _, found := slices.BinarySearch(la.sorted, name); found {
			*undelivered = redeliver(tools, lr)
			return nil, ReasonListed, name, nil // the authoritative list has it after all
		}
	} else {
		if slices.Contains(names, name) {
			*undelivered = redeliver(tools, lr)
			return nil, ReasonListed, name, nil
		}
		la = g.addAnswer(names)
	}
	status := http.StatusOK
	if modern {
		status = g.modernStatus
	}
	// Messages the server sent the caller on the tool set's requests go
	// out with the answer, as events before it: the server sent them as an
	// event stream to a request with the caller's own Accept header.
	call, _ := CallFromContext(lr.Context())
	relayed := call.settle(tools, lr, false)
	rj := g.unknownTool(m.id.raw(body), name, la, status, stream && !json || len(relayed) > 0)
	rj.relayed = relayed
	return rj, 0, "", nil
}

// redeliver hands the messages the server sent the caller on the tool
// set's requests for the call of lr back to a tool set that can give them
// to the server, as the call passes through. It returns them when it
// cannot.
func redeliver(tools ToolSet, lr *http.Request) [][]byte {
	call, ok := CallFromContext(lr.Context())
	if !ok {
		return nil
	}
	return call.settle(tools, lr, true)
}

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
	modern = mcpwire.IsModern(hv) || mcpwire.IsModern(mv)
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

// single returns the header's only value; ok is false when it is absent or
// repeated.
func single(h http.Header, key string) (string, bool) {
	vs := h[key]
	if len(vs) != 1 {
		return "", false
	}
	return vs[0], true
}

// strEquals reports whether the string at sp decodes to want.
func strEquals(body []byte, sp span, want string) bool {
	if !sp.escaped {
		return string(body[sp.start+1:sp.end-1]) == want
	}
	var scratch [64]byte
	return string(decoded(scratch[:0], body, sp)) == want
}

// decoded returns the decoded string at sp, using dst when it can.
func decoded(dst, body []byte, sp span) []byte {
	if !sp.escaped {
		return body[sp.start+1 : sp.end-1]
	}
	return unquote(dst, sp.raw(body))
}
