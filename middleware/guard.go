package toolguard

import (
	"bytes"
	"encoding/base64"
	"errors"
	"mime"
	"net/http"
	"strconv"
	"strings"
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
}

// A Guard answers a tools/call naming a tool the server does not have with
// a JSON-RPC -32602 error, and passes everything else through untouched.
// It is safe for concurrent use.
type Guard struct {
	opts Options
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
	}
	if opts.MaxBodyBytes == 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.ToolListLimit == 0 {
		opts.ToolListLimit = DefaultToolListLimit
	}
	return &Guard{opts: opts}, nil
}

// Handler returns next guarded: a tools/call for an unknown tool is answered
// here, every other request reaches next with its body byte for byte.
// The ResponseWriter is never wrapped.
func (g *Guard) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pass, p, rej := g.check(r)
		if rej != nil {
			rej.Write(w)
			return
		}
		next.ServeHTTP(w, pass)
		if p != nil {
			p.body.release()
		}
	})
}

// Check is the framework-neutral decision. It returns either the request to
// hand on (r itself when the body was not read, otherwise a shallow copy
// whose body yields the same bytes) or the rejection to write with
// [Rejection.Write]. Exactly one of the two is non-nil. The caller's r is not
// modified.
func (g *Guard) Check(r *http.Request) (*http.Request, *Rejection) {
	pass, _, rej := g.check(r)
	return pass, rej
}

// check is Check, also returning the copy it made (if any) so that Handler
// can recycle its buffer once the next handler is done.
func (g *Guard) check(r *http.Request) (*http.Request, *passRequest, *Rejection) {
	if !g.inspectable(r) {
		return r, nil, nil
	}
	buf, eof, err := readBody(r.Body, g.opts.MaxBodyBytes, r.ContentLength)
	p := &passRequest{req: *r}
	p.body = replayBody{buf: buf, data: buf.b, err: err, eof: eof, rest: r.Body}
	p.req.Body = &p.body
	if !eof || int64(len(buf.b)) > g.opts.MaxBodyBytes {
		return &p.req, p, nil
	}
	rej := g.decide(r, buf.b)
	if rej == nil {
		return &p.req, p, nil
	}
	putBuffer(buf)
	if g.opts.OnReject != nil {
		g.opts.OnReject(r, rej)
	}
	return nil, nil, rej
}

// inspectable reports whether the request is worth reading at all.
func (g *Guard) inspectable(r *http.Request) bool {
	if r.Method != http.MethodPost || r.Body == nil || r.Body == http.NoBody {
		return false
	}
	if g.opts.Skip != nil && g.opts.Skip(r) {
		return false
	}
	if r.ContentLength > g.opts.MaxBodyBytes {
		return false
	}
	if ct, ok := single(r.Header, "Content-Type"); !ok || !isJSONMediaType(ct) {
		return false
	}
	if ce := r.Header["Content-Encoding"]; len(ce) > 0 && (len(ce) > 1 || !strings.EqualFold(strings.TrimSpace(ce[0]), "identity")) {
		return false
	}
	return true
}

// decide reads body and returns the rejection to write, or nil to pass.
func (g *Guard) decide(r *http.Request, body []byte) *Rejection {
	m := readMessage(body)
	if !m.strict || m.jsonrpc.kind != kString || !strEquals(body, m.jsonrpc, "2.0") ||
		(m.id.kind != kString && m.id.kind != kInt) ||
		m.method.kind != kString || !strEquals(body, m.method, "tools/call") ||
		!m.paramsObject || m.name.kind != kString {
		return nil
	}
	if g.opts.SafeIntegerIDs && m.id.kind == kInt && !jsSafeInteger(m.id.raw(body)) {
		return nil
	}
	var scratch [128]byte
	nameBytes := decoded(scratch[:0], body, m.name)

	modern, ok := g.era(r, body, m)
	if !ok {
		return nil
	}
	accept, ok := negotiate(r.Header["Accept"])
	if !ok {
		return nil
	}
	if modern {
		if hdr, ok := mismatchedHeader(r.Header, nameBytes); hdr != "" {
			if !ok || !g.opts.AnswerHeaderMismatch {
				return nil
			}
			return newHeaderMismatch(m.id.raw(body), string(nameBytes), hdr, accept)
		}
	}

	name := string(nameBytes)
	tools := g.opts.Tools
	if tools.Lookup(r, name) != Absent {
		return nil
	}
	names, err := tools.List(r)
	if err != nil {
		return nil
	}
	for _, n := range names {
		if n == name {
			return nil // the authoritative list has it after all
		}
	}
	return g.newUnknownTool(m.id.raw(body), name, names, modern, accept)
}

// era reports whether the request is a 2026-07-28 (or later) request, and
// ok false when its protocol version is stated in a way the server will
// refuse or that the kit cannot read with certainty.
func (g *Guard) era(r *http.Request, body []byte, m message) (modern, ok bool) {
	hv, ok := single(r.Header, "Mcp-Protocol-Version")
	if !ok && len(r.Header["Mcp-Protocol-Version"]) > 0 {
		return false, false
	}
	var mv string
	switch m.version.kind {
	case kString:
		var scratch [32]byte
		mv = string(decoded(scratch[:0], body, m.version))
	case absent:
	default:
		return false, false
	}
	modern = isModernVersion(hv) || isModernVersion(mv)
	if !modern {
		return false, true
	}
	// A modern request states its version in the header and in _meta, and
	// the two agree; Last-Event-ID has no meaning any more. Anything else is
	// the server's to answer.
	if hv != mv || len(r.Header["Last-Event-Id"]) > 0 {
		return true, false
	}
	return true, true
}

// jsSafeInteger reports whether an integer literal is within ±(2^53−1).
func jsSafeInteger(b []byte) bool {
	if len(b) < 16 {
		return true
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	return err == nil && n <= 1<<53-1 && n >= -(1<<53-1)
}

// isModernVersion reports whether v names protocol 2026-07-28 or later
// (versions are dates, so they compare as strings).
func isModernVersion(v string) bool { return len(v) == 10 && v >= "2026-07-28" }

// mismatchedHeader checks Mcp-Method and Mcp-Name against a tools/call for
// name. It returns the header at fault, if any; ok is false when the header
// is present more than once (ambiguous: never answered).
func mismatchedHeader(h http.Header, name []byte) (header string, ok bool) {
	if vs := h["Mcp-Method"]; len(vs) != 1 || vs[0] != "tools/call" {
		return "Mcp-Method", len(vs) <= 1
	}
	// An empty value counts as missing, as servers read it.
	vs := h["Mcp-Name"]
	if len(vs) != 1 || vs[0] == "" || !headerNameEquals(vs[0], name) {
		return "Mcp-Name", len(vs) <= 1
	}
	return "", true
}

// headerNameEquals compares an Mcp-Name header with the body's name,
// decoding the =?base64?...?= sentinel first.
func headerNameEquals(v string, name []byte) bool {
	if enc, ok := strings.CutPrefix(v, "=?base64?"); ok {
		if enc, ok = strings.CutSuffix(enc, "?="); ok {
			dec, err := base64.StdEncoding.DecodeString(enc)
			return err == nil && bytes.Equal(dec, name)
		}
	}
	return v == string(name)
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

// isJSONMediaType reports whether a Content-Type is application/json, with
// or without parameters, parsed as the SDKs parse it (mime.ParseMediaType):
// a malformed parameter list is not JSON to them, so not to the guard.
func isJSONMediaType(ct string) bool {
	if strings.EqualFold(ct, "application/json") {
		return true // the common case, without allocating
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}

// negotiate picks the media type of the answer from the Accept header
// values: JSON unless only an event stream is acceptable. ok is false when
// neither is.
func negotiate(accept []string) (sse, ok bool) {
	if len(accept) == 0 {
		return false, true
	}
	var json, stream bool
	for _, v := range accept {
		for v != "" {
			var rng string
			rng, v, _ = strings.Cut(v, ",")
			mt, params, _ := strings.Cut(rng, ";")
			mt = strings.ToLower(strings.TrimSpace(mt))
			if zeroQuality(params) {
				continue
			}
			switch mt {
			case "*/*":
				json, stream = true, true
			case "application/json", "application/*":
				json = true
			case "text/event-stream", "text/*":
				stream = true
			}
		}
	}
	return stream && !json, json || stream
}

// zeroQuality reports whether media-range parameters carry q=0.
func zeroQuality(params string) bool {
	for params != "" {
		var p string
		p, params, _ = strings.Cut(params, ";")
		k, v, _ := strings.Cut(p, "=")
		if strings.EqualFold(strings.TrimSpace(k), "q") {
			v = strings.TrimSpace(v)
			return strings.Trim(v, "0.") == "" && v != ""
		}
	}
	return false
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
