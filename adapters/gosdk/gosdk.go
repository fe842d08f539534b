// Package toolguardgosdk is the toolguard tool set for servers built with
// github.com/modelcontextprotocol/go-sdk.
//
// The package is named after the kit and the SDK, so it needs no alias next
// to the SDK's mcp package:
//
//	handler := mcp.NewStreamableHTTPHandler(getServer, nil)
//	tools, err := toolguardgosdk.Tools(handler, toolguardgosdk.Options{})
//	if err != nil {
//		log.Fatal(err)
//	}
//	guard, err := toolguard.New(toolguard.Options{Tools: tools})
//	if err != nil {
//		log.Fatal(err)
//	}
//	http.Handle("/mcp", guard.Handler(handler))
//
// go-sdk exposes no registry of tools, and may serve a different *Server
// per request, so the tool set asks the handler itself: tools/list as the
// caller (same session, same headers, same URL), the way toolguard.Discover
// does, which is exact in stateful, JSON-response and stateless modes.
// On top of that it knows what go-sdk v1.8 refuses before tool dispatch,
// and passes those requests through for the SDK to answer:
//
//   - a POST whose Accept header does not admit both application/json and
//     text/event-stream (go-sdk answers 400);
//   - a 2026-07-28 request whose Mcp-Name header uses the =?base64?...?=
//     form: go-sdk compares the header undecoded and answers -32020.
//
// # Names-only lists
//
// A rejection is confirmed with a tools/list fetched after the call
// arrived, and by default that list carries every tool's input and output
// schemas: go-sdk encodes them all and the guard reads past them, which
// with many tools costs far more than go-sdk's own answer to an unknown
// tool. Give the tool set the *mcp.Server values the handler serves
// (Options.Servers, or ToolSet.Attach for a server made later, say one per
// request in getServer) and its own fetches skip that work:
//
//	tools, err := toolguardgosdk.Tools(handler, toolguardgosdk.Options{Servers: []*mcp.Server{server}})
//
// Names-only lists need the handler given to Tools to be the
// *mcp.StreamableHTTPHandler itself: the names are taken inside go-sdk, so
// an HTTP handler between the tool set and go-sdk that filters, renames or
// caches tools/list replies would not apply to them. Through any other
// handler the lists stay whole. Put HTTP middleware around the guard
// instead, or accept whole lists.
//
// The fetch still goes through the handler as the caller, so go-sdk picks
// the server (the session's own, or getServer's per request), checks the
// request and runs every receiving middleware exactly as before. Attach
// adds one more receiving middleware to the server, around all that were
// added before it. For one of the tool set's own fetches (its HTTP request
// carries the X-Toolguard-List header with a 128-bit random token the tool
// set made for that one fetch, valid while the fetch runs), and only when
// go-sdk itself called it (no middleware wraps it, so every other one has
// had the full list), it takes the names from the final result and hands
// go-sdk an empty list marked with the token in its _meta instead. When
// go-sdk's reply carries exactly that marked empty list, the tool set
// gives the guard a plain JSON reply with the names, go-sdk's nextCursor
// and ttlMs and the reply's id. Any other reply (an error, a refusal, a
// server that was not attached) is given to the guard as go-sdk wrote it;
// one made from the marked list but changed on the way out (by an HTTP
// handler between the guard and go-sdk) is thrown away and the list
// fetched again in full, and so is a reply that carries a marked list the
// fetch did not make.
//
// Attach a server after your own receiving middleware: a middleware added
// later wraps the tool set's, whose lists for that server then stay whole
// (exact, only as slow as without Attach). Every other request, a
// caller's own tools/list included, is left alone; a caller that sends the
// header gains nothing, as no token outlives its fetch.
package toolguardgosdk

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
	"weak"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolguard/toolguard/internal/capture"
	"github.com/toolguard/toolguard/internal/mcpwire"
	"github.com/toolguard/toolguard/internal/sse"
	toolguard "github.com/toolguard/toolguard/middleware"
)

// Options configures Tools.
type Options struct {
	// Discover configures the tools/list fetches (see
	// toolguard.DiscoverOptions; its ModernStatus is ignored: go-sdk sends
	// 400 with its own -32602 for 2026-07-28 requests, and so does the
	// guard).
	Discover toolguard.DiscoverOptions

	// Servers are go-sdk servers the handler serves. When any is given,
	// the tool set's own tools/list fetches skip the schemas (see the
	// package documentation); servers made later can be added with
	// ToolSet.Attach. Without Servers or Attach, nothing changes.
	Servers []*mcp.Server
}

// Tools returns the tool set of the go-sdk handler h (the
// *mcp.StreamableHTTPHandler, or whatever handler the guard wraps).
func Tools(h http.Handler, opts Options) (*ToolSet, error) {
	if h == nil {
		return nil, errors.New("toolguardgosdk: Tools needs a handler (h is nil)")
	}
	for _, s := range opts.Servers {
		if s == nil {
			return nil, errors.New("toolguardgosdk: Options.Servers holds a nil server")
		}
	}
	// Names are taken inside go-sdk, so they are what the caller would be
	// listed only if nothing stands between the tool set and go-sdk that
	// could filter, rename or cache the reply.
	_, bare := h.(*mcp.StreamableHTTPHandler)
	t := &ToolSet{maxBody: opts.Discover.MaxBodyBytes, bare: bare}
	if t.maxBody <= 0 {
		t.maxBody = 8 << 20 // Discover's default
	}
	d, err := toolguard.Discover(fetcher{t: t, h: h}, opts.Discover)
	if err != nil {
		return nil, err
	}
	t.d = d
	for _, s := range opts.Servers {
		t.Attach(s)
	}
	return t, nil
}

// ToolSet is the toolguard.ToolSet of a go-sdk handler.
type ToolSet struct {
	d       *toolguard.Discovery
	maxBody int64
	bare    bool // the handler is go-sdk's own: names-only lists are possible

	// attached is set once a server is attached: only then are fetches
	// marked.
	attached atomic.Bool
	servers  sync.Map // weak.Pointer[mcp.Server] of each attached server
	slots    sync.Map // token of a fetch in flight: *slot
}

// listHeader marks the tool set's own tools/list fetches once a server is
// attached: a 128-bit random token, hex-encoded, made for one fetch and
// valid only while it runs.
const listHeader = "X-Toolguard-List"

// metaKey is the _meta key of the marked empty list.
const metaKey = "io.toolguard/list"

// slot receives the names of one fetch from the middleware.
type slot struct {
	token  string
	mu     sync.Mutex
	names  []string
	taken  bool // names were taken
	closed bool // the fetch has its reply
}

// fetcher is the handler Discover asks: the go-sdk handler, with each
// fetch marked once a server is attached. Only Discover calls it.
type fetcher struct {
	t *ToolSet
	h http.Handler
}

func (f fetcher) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t := f.t
	if !t.attached.Load() || !t.bare {
		f.h.ServeHTTP(w, r)
		return
	}
	var body []byte
	if r.Body != nil {
		var err error
		if body, err = io.ReadAll(r.Body); err != nil { // Discover's own request, in memory
			http.Error(w, "toolguardgosdk: reading the list request: "+err.Error(), http.StatusBadGateway)
			return
		}
	}
	attempt := func(token string) replyWriter {
		req := r.Clone(r.Context())
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.ContentLength = int64(len(body))
		req.GetBody = nil
		// The clone's header map is its own: Set replaces whatever value
		// a caller's forwarded header had, Del drops it.
		if token != "" {
			req.Header.Set(listHeader, token)
		} else {
			req.Header.Del(listHeader)
		}
		rw := replyWriter{capture.NewWriter(t.maxBody)}
		f.h.ServeHTTP(rw, req)
		return rw
	}

	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	s := &slot{token: hex.EncodeToString(b[:])}
	t.slots.Store(s.token, s)
	rw := func() replyWriter {
		defer t.slots.Delete(s.token)
		return attempt(s.token)
	}()
	// Closed, the slot takes no names any more: what it holds now is
	// what the reply was made from.
	s.mu.Lock()
	names, taken := s.names, s.taken
	s.closed = true
	s.mu.Unlock()
	if !taken {
		// The middleware did not touch this reply: it is go-sdk's own,
		// unless it carries a marked list all the same (one made for
		// another fetch, kept by something that caches replies): then
		// ask again in full.
		if rw.carriesMark() {
			rw = attempt("")
			if rw.carriesMark() {
				// Still a marked list: whatever answers keeps it, so no
				// reply here can be trusted to be the caller's list.
				http.Error(w, "toolguardgosdk: a tools/list reply made for another fetch", http.StatusBadGateway)
				return
			}
		}
		rw.forward(w)
		return
	}
	if msg, ok := rw.marked(s.token); ok {
		if reply, ok := namesReply(msg, names); ok {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			w.Write(reply)
			return
		}
	}
	// Derived from the marked list, but not it: ask again in full.
	attempt("").forward(w)
}

// Attach adds to s the receiving middleware that answers the tool set's
// own tools/list fetches without schemas (see the package documentation).
// It is for servers made after Tools, such as one per request in
// getServer. Attaching a server again does nothing; the tool set holds s
// only weakly, so a server no longer used is collected as before. Attach
// a server after your own receiving middleware.
func (t *ToolSet) Attach(s *mcp.Server) {
	if s == nil {
		return
	}
	wp := weak.Make(s)
	if _, dup := t.servers.LoadOrStore(wp, struct{}{}); dup {
		return
	}
	runtime.AddCleanup(s, func(wp weak.Pointer[mcp.Server]) { t.servers.Delete(wp) }, wp)
	t.attached.Store(true)
	s.AddReceivingMiddleware(t.namesOnly)
}

// namesOnly is the receiving middleware of Attach. It runs the request
// through the rest of the server (go-sdk's own handler and every
// middleware added before it) untouched, and only then, for one of the
// tool set's own fetches, takes the names and returns the marked empty
// list.
func (t *ToolSet) namesOnly(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || method != "tools/list" {
			return res, err
		}
		list, ok := res.(*mcp.ListToolsResult)
		if !ok || list == nil {
			return res, err
		}
		s := t.slot(req)
		if s == nil || !calledByGoSDK() {
			return res, err
		}
		if tok, _ := list.Meta[metaKey].(string); tok == s.token {
			return res, err // already the marked list (Attach adds this once per server)
		}
		names := make([]string, len(list.Tools))
		for i, tl := range list.Tools {
			if tl == nil {
				return res, err // go-sdk sends null, which the guard refuses
			}
			names[i] = tl.Name
		}
		s.mu.Lock()
		if s.taken || s.closed {
			s.mu.Unlock()
			return res, err
		}
		s.names, s.taken = names, true
		s.mu.Unlock()
		out := *list
		out.Tools = []*mcp.Tool{}
		out.Meta = mcp.Meta{metaKey: s.token}
		return &out, nil
	}
}

// calledByGoSDK reports whether the middleware (its caller) was called by
// go-sdk itself, the function that runs a server's receiving chain, and
// not by another middleware: then it is the outermost, every other
// receiving middleware has had the full list, and go-sdk encodes what it
// returns as it is. A middleware added after Attach wraps it, and the
// lists of that server stay full. Should a go-sdk release rename the
// function, lists stay full; the tests of this package then fail.
func calledByGoSDK() bool {
	var pcs [4]uintptr
	n := runtime.Callers(2, pcs[:]) // from the middleware closure up
	frames := runtime.CallersFrames(pcs[:n])
	self, more := frames.Next()
	if !more || !strings.HasSuffix(self.Function, "(*ToolSet).namesOnly.func1") {
		return false
	}
	caller, _ := frames.Next()
	return strings.HasPrefix(caller.Function, "github.com/modelcontextprotocol/go-sdk/mcp.handleReceive[")
}

// slot returns the slot of the fetch whose token req carries, or nil.
func (t *ToolSet) slot(req mcp.Request) *slot {
	if req == nil {
		return nil
	}
	extra := req.GetExtra()
	if extra == nil {
		return nil
	}
	vs := extra.Header.Values(listHeader)
	if len(vs) != 1 || len(vs[0]) != 32 {
		return nil
	}
	s, _ := t.slots.Load(vs[0])
	sl, _ := s.(*slot)
	return sl
}

// replyWriter holds go-sdk's reply to one fetch, up to MaxBodyBytes.
type replyWriter struct{ *capture.Writer }

// forward writes the reply as go-sdk wrote it; one over the limit is
// refused (the guard then passes the call through, as it would have).
func (w replyWriter) forward(to http.ResponseWriter) {
	r := w.Reply()
	if r.Over {
		http.Error(to, "toolguardgosdk: tools/list reply larger than MaxBodyBytes", http.StatusBadGateway)
		return
	}
	for k, vs := range r.Header {
		to.Header()[k] = vs
	}
	if r.Status == 0 {
		r.Status = http.StatusOK
	}
	to.WriteHeader(r.Status)
	to.Write(r.Body)
}

// carriesMark reports whether the reply holds the _meta key of a marked
// list, whatever its token.
func (w replyWriter) carriesMark() bool {
	return bytes.Contains(w.Reply().Body, []byte(`"`+metaKey+`"`))
}

// listReply is the part of a reply message marked checks.
type listReply struct {
	ID     json.RawMessage `json:"id"`
	Error  json.RawMessage `json:"error"`
	Result *struct {
		Meta       map[string]json.RawMessage `json:"_meta"`
		Tools      []json.RawMessage          `json:"tools"`
		NextCursor json.RawMessage            `json:"nextCursor"`
		TTLMs      json.RawMessage            `json:"ttlMs"`
	} `json:"result"`
}

// marked returns the reply message that carries the marked empty list of
// token, if the reply is a 200 whose one response is exactly that.
func (w replyWriter) marked(token string) (listReply, bool) {
	r := w.Reply()
	if r.Over || r.Status != http.StatusOK {
		return listReply{}, false
	}
	msgs := [][]byte{r.Body}
	if mcpwire.IsEventStream(r.Header.Get("Content-Type")) {
		msgs = sse.Messages(r.Body)
	}
	want := strconv.Quote(token)
	var found listReply
	n := 0
	for _, m := range msgs {
		var rep listReply
		if json.Unmarshal(m, &rep) != nil || rep.Result == nil && rep.Error == nil {
			continue // not a response (a notification, a request)
		}
		n++
		found = rep
		if rep.Error != nil || rep.Result == nil || rep.Result.Tools == nil || len(rep.Result.Tools) != 0 ||
			string(rep.Result.Meta[metaKey]) != want {
			return listReply{}, false
		}
	}
	return found, n == 1
}

// plain reports whether n is valid UTF-8 with nothing JSON must escape,
// so that it can be written between quotes as it is.
func plain(n string) bool {
	for i := 0; i < len(n); i++ {
		if c := n[i]; c < 0x20 || c == '"' || c == '\\' {
			return false
		}
	}
	return utf8.ValidString(n)
}

// namesReply is the JSON reply the guard gets for a marked list: the
// names, and go-sdk's id, nextCursor and ttlMs as it wrote them.
func namesReply(rep listReply, names []string) ([]byte, bool) {
	b := make([]byte, 0, 64+len(rep.ID)+24*len(names))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, rep.ID...)
	b = append(b, `,"result":{"tools":[`...)
	for i, n := range names {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		if plain(n) {
			b = append(b, '"')
			b = append(b, n...)
			b = append(b, '"')
		} else {
			// As go-sdk writes it: escaped, invalid UTF-8 as U+FFFD.
			q, err := json.Marshal(n)
			if err != nil {
				return nil, false
			}
			b = append(b, q...)
		}
		b = append(b, '}')
	}
	b = append(b, ']')
	if len(rep.Result.NextCursor) > 0 {
		b = append(b, `,"nextCursor":`...)
		b = append(b, rep.Result.NextCursor...)
	}
	if len(rep.Result.TTLMs) > 0 {
		b = append(b, `,"ttlMs":`...)
		b = append(b, rep.Result.TTLMs...)
	}
	return append(b, "}}"...), true
}

// Lookup is Unsure for what go-sdk refuses before tool dispatch, and
// otherwise answers from the caller's last list.
func (t *ToolSet) Lookup(r *http.Request, name string) toolguard.Presence {
	json, stream := mcpwire.Accepts(r.Header.Values("Accept"))
	if !json || !stream || mcpwire.IsEncodedName(r.Header.Get(mcpwire.HeaderName)) {
		return toolguard.Unsure
	}
	return t.d.Lookup(r, name)
}

// List returns the caller's tools/list, asked of the handler as the caller.
func (t *ToolSet) List(r *http.Request) ([]string, error) { return t.d.List(r) }

// ModernStatus is the HTTP status go-sdk sends with -32602 for a
// 2026-07-28 request: 400.
func (t *ToolSet) ModernStatus() int { return http.StatusBadRequest }
