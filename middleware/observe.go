// Observing over HTTP: the answers to the caller's own tools/list requests
// are read as they pass, and the events that make a list old are watched
// for. The guard never sends a request of its own.

package toolguard

import (
	"bufio"
	"bytes"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/toolguard/toolguard/internal/mcpwire"
)

// maxListReplyBytes bounds the tools/list answer the guard reads: a
// longer one passes unread (its list is not kept).
const maxListReplyBytes = 8 << 20

// listChangedMethod is the method of a tools/list_changed notification.
const listChangedMethod = "notifications/tools/list_changed"

// listChangedStandIn is what an event too long to read is read as when
// its bytes could spell list_changed (maySpell): a client that
// reads it whole may read a changed list.
var listChangedStandIn = []byte(`{"jsonrpc":"2.0","method":"` + listChangedMethod + `"}`)

// observe notes a request that is not a tools/call before it passes: an
// initialize ends what is kept of its caller (initialized), and so does a
// body outside the strict subset that could spell one (some SDK may read
// it so); a tools/list gets its answer read; the answer to any other is
// watched for a changed list (changeWriter). It returns the observer of
// the answer, or nil.
func (g *Guard) observe(r *http.Request, body []byte, m message) observer {
	session := r.Header.Get(mcpwire.HeaderSessionID)
	switch {
	case !m.strict || m.jsonrpc.kind != kString || !strEquals(body, m.jsonrpc, "2.0") || m.method.kind != kString:
		if !m.strict && mayBeInitialize(body) {
			g.initialized(r, session, nil)
		} else if mayBe(body, "list", "tools/list") { // (a batch, say: some SDK may answer it)
			g.seen.forget(callerKey(r, nil))
		}
		return (*answers)(g)
	case strEquals(body, m.method, "initialize"):
		g.initialized(r, session, callerMeta(m.meta.raw(body)))
		return nil
	case !strEquals(body, m.method, "tools/list"):
		// With no session, a changed list drops every list kept without
		// one (2026-07-28's subscriptions/listen stream, say).
		return (*answers)(g)
	}
	key := callerKey(r, callerMeta(m.meta.raw(body)))
	cursor, ok := listCursor(body, m)
	if ok = ok && (m.id.kind == kString || m.id.kind == kInt); !ok || cursor == "" {
		// The caller may get another list, read or not: the one kept is
		// no longer what it holds (its names still guard their calls).
		g.seen.forget(key)
	}
	if !ok {
		return (*answers)(g)
	}
	return &listWatch{g: g, id: bytes.Clone(m.id.raw(body)), key: key, cursor: cursor, session: session, mark: g.seen.mark(session)}
}

// initialized notes an initialize (meta: its _meta as the key reads it):
// it drops the lists of its session, or without one only the lists of its
// own caller, whose names still guard their calls (another's are not its):
// asked with any Mcp-Protocol-Version, which an initialize does not carry.
func (g *Guard) initialized(r *http.Request, session string, meta []byte) {
	if session != "" {
		g.seen.dropSession(session, true)
		return
	}
	var c caller
	c.take(r)
	for _, v := range append([]string{""}, mcpwire.Versions...) {
		g.seen.forget(c.keyAs(meta, v))
	}
}

// session notes a request whose body is not read: DELETE ends a session
// and drops its lists; any other has its answer watched for a changed
// list (a GET opens the session's event stream).
func (g *Guard) session(r *http.Request) observer {
	session := r.Header.Get(mcpwire.HeaderSessionID)
	if r.Method == http.MethodDelete {
		if session != "" {
			g.seen.dropSession(session, true)
		}
		return nil
	}
	return (*answers)(g)
}

// A listWatch is a caller's tools/list on its way to the server.
type listWatch struct {
	g       *Guard
	id      []byte
	key     string // the caller's
	cursor  string
	session string
	mark    listMark
}

func (l *listWatch) watch(w http.ResponseWriter, _ *http.Request) responseWatch {
	return &listWriter{passWriter: passWriter{w: w}, l: l}
}

// passWriter passes everything to the writer beneath at once.
type passWriter struct {
	w      http.ResponseWriter
	status int
}

func (pw *passWriter) Header() http.Header { return pw.w.Header() }

// Unwrap lets http.ResponseController reach the writer beneath.
func (pw *passWriter) Unwrap() http.ResponseWriter { return pw.w }

func (pw *passWriter) WriteHeader(code int) {
	if pw.status == 0 && (code < 100 || code >= 200 || code == http.StatusSwitchingProtocols) {
		pw.status = code
	}
	pw.w.WriteHeader(code)
}

// FlushError flushes the writer beneath, with its error (as Flush cannot).
func (pw *passWriter) FlushError() error {
	if pw.status == 0 {
		pw.status = http.StatusOK
	}
	return http.NewResponseController(pw.w).Flush()
}
func (pw *passWriter) Flush() { _ = pw.FlushError() }

func (pw *passWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(pw.w).Hijack()
}

func (pw *passWriter) abort() {}

// listWriter passes a tools/list answer through as it is written, and
// keeps the caller's page in it before the bytes that complete it go on
// (docs/RULES.md §5 says when).
type listWriter struct {
	passWriter
	l       *listWatch
	mode    int         // listUndecided, listJSON, listRead, listStream or listSkip
	buf     []byte      // listJSON: the answer so far
	events  eventReader // listStream
	length  int         // listJSON: the stated Content-Length, or -1
	tries   int         // listJSON: reads at a write that ends an object
	replied bool        // the reply was read: no more to keep
	paged   bool        // a page of it was read
}

// listWriter modes.
const (
	listUndecided = iota
	listJSON
	listRead // a JSON answer read whole before its end: more than white space after it unkeeps it
	listStream
	listSkip
)

// maxEarlyReads bounds the reads of a JSON answer of no stated length
// before its end (each reads all of it so far).
const maxEarlyReads = 4

func (lw *listWriter) Write(p []byte) (int, error) {
	if lw.status == 0 {
		lw.status = http.StatusOK
	}
	lw.decide()
	switch lw.mode {
	case listStream:
		lw.events.write(p, maxListReplyBytes, lw.message)
	case listJSON:
		if len(lw.buf)+len(p) > maxListReplyBytes {
			lw.release(listSkip)
			break
		}
		lw.buf = append(lw.buf, p...)
		switch {
		case len(lw.buf) == lw.length:
			lw.keepJSON(true)
		case lw.length < 0 && lw.tries < maxEarlyReads && bytes.HasSuffix(bytes.TrimRight(p, " \t\r\n"), []byte("}")):
			lw.tries++
			lw.keepJSON(false)
		}
	case listRead:
		if len(bytes.TrimSpace(p)) > 0 {
			// Not one JSON value after all: what a client reads of it
			// depends on the client.
			lw.mode = listSkip
			lw.l.g.seen.forget(lw.l.key)
		}
	}
	return lw.w.Write(p)
}

// WriteHeader and FlushError send the header (but a 1xx one).
func (lw *listWriter) WriteHeader(code int) { lw.passWriter.WriteHeader(code); lw.decide() }
func (lw *listWriter) FlushError() error    { err := lw.passWriter.FlushError(); lw.decide(); return err }
func (lw *listWriter) Flush()               { _ = lw.FlushError() }

// decide reads the header once it has gone out, as net/http sends it
// (what is set later is not sent): only a 200 answer, JSON or an event
// stream, not encoded, is read.
func (lw *listWriter) decide() {
	if lw.status == 0 || lw.mode != listUndecided {
		return
	}
	lw.mode = listSkip
	h := lw.w.Header()
	lw.l.g.readableStream(h, lw.l.session) // (an encoded one drops the lists)
	if lw.status != http.StatusOK || len(h["Content-Encoding"]) > 0 {
		return
	}
	switch mcpwire.MediaType(h.Get("Content-Type")) {
	case "application/json":
		lw.mode, lw.length = listJSON, -1
		if b, ok := listBuffers.Get().(*[]byte); ok {
			lw.buf = (*b)[:0]
		}
		if n, err := strconv.Atoi(h.Get("Content-Length")); err == nil {
			lw.length = n
			lw.buf = slices.Grow(lw.buf, min(n, maxListReplyBytes))
		}
	case "text/event-stream":
		lw.mode = listStream
	}
}

// An eventReader follows an event stream as it is written, so that each
// event is read before the bytes that end it go on. Each byte is searched
// about once; an event longer than the reader's limit is not held (only
// what the search for its end needs is kept), and it is not read: its
// bytes are searched for what could spell list_changed as they pass.
type eventReader struct {
	buf     []byte // what has not ended: an event begun (its last bytes once long), or the start of a BOM
	from    int    // where in buf the search for its end goes on
	started bool   // a leading BOM is gone
	long    bool   // the event grew past the limit: it is not read
	spell   spellWatch
}

// write adds p to the stream and calls read for each event that ends in
// p, with the length of p up to the event's end and, for a message event
// no longer than limit, its data; for a longer event of any kind whose
// bytes could spell list_changed, listChangedStandIn; nil otherwise. An event the stream's
// end leaves unfinished is not read, as a client does not dispatch it:
// the end of the stream adds nothing to read.
func (e *eventReader) write(p []byte, limit int, read func(end int, data []byte)) {
	b := p // what has not been read: the event begun before, then p
	if len(e.buf) > 0 {
		e.buf = append(e.buf, p...)
		b = e.buf
	}
	if !e.started {
		if len(b) < len(bom) && bytes.HasPrefix(bom, b) {
			e.buf = append(e.buf[:0], b...)
			return // perhaps the start of a BOM
		}
		b, e.from, e.started = bytes.TrimPrefix(b, bom), 0, true
	}
	for {
		// A CR at the end that is a blank line ends the event, as a client
		// dispatches it then; one that ends a line of the event waits
		// for the next byte, which may make it a CRLF (resumeAt keeps it).
		n := mcpwire.EventEnd(b[e.from:])
		if n < 0 {
			break
		}
		n += e.from
		data, ok := mcpwire.EventMessage(b[:n])
		if e.long || n > limit { // however the event was cut into writes
			e.spell.add(b[:n])
			data, ok = listChangedStandIn, e.spell.maybe
			e.spell.reset()
		}
		if !ok {
			data = nil
		}
		// What follows the end came in p: an event ends in new bytes.
		read(len(p)-(len(b)-n), data)
		b, e.from, e.long = b[n:], 0, false
	}
	e.from = resumeAt(b)
	if len(b) > limit {
		e.spell.add(b[:e.from]) // the rest is searched again with the next write
		b, e.from, e.long = b[e.from:], 0, true
	}
	e.buf = append(e.buf[:0], b...) // (b may lie in e.buf: append moves it down)
}

// resumeAt returns where in b, an event that has not ended, the search
// for its end can go on when more is written: at b's last byte, which
// keeps a line that has begun begun; past a final LF, at the next line's
// start; at a final CR, which may be half a CRLF, from the byte before it
// unless that ends a line too. What lies before it is not needed.
func resumeAt(b []byte) int {
	n := len(b)
	switch {
	case n == 0:
		return 0
	case b[n-1] == '\n':
		return n
	case b[n-1] == '\r' && n >= 2 && b[n-2] != '\r' && b[n-2] != '\n':
		return n - 2
	}
	return n - 1
}

// bom is the byte order mark an event stream may start with.
var bom = []byte("\xef\xbb\xbf")

// message reads one message of an event stream answer: a changed list
// drops the session's lists; the reply's page is kept.
func (lw *listWriter) message(_ int, data []byte) {
	l := lw.l
	if data == nil { // not a message the guard reads
		return
	}
	if !lw.replied {
		p, done, ok := readListReply(data, l.id)
		if lw.replied = done; ok {
			lw.paged = true
			l.g.seen.page(l.key, l.session, l.cursor, l.mark, p)
			return // the reply, not a notification
		}
	}
	if isListChanged(data) {
		l.g.seen.dropSession(l.session, false)
	}
}

// keepJSON reads the JSON answer written so far, and keeps its page when
// it is the reply; final: there is no more to come.
func (lw *listWriter) keepJSON(final bool) {
	l := lw.l
	p, _, ok := readListReply(lw.buf, l.id)
	switch {
	case ok:
		lw.release(listRead) // the page holds copies
		lw.paged = true
		l.g.seen.page(l.key, l.session, l.cursor, l.mark, p)
	case final:
		lw.release(listSkip)
	}
}

// listBuffers holds the buffers JSON list answers were read in, of up to
// maxPooledList bytes, for the next: a list of 1,000 tools (some 200 KiB)
// is otherwise grown anew each time.
var listBuffers sync.Pool

const maxPooledList = 1 << 20

// release ends the reading of a JSON answer, whose buffer goes back.
func (lw *listWriter) release(mode int) {
	if b := lw.buf[:0]; cap(b) > 0 && cap(b) <= maxPooledList {
		listBuffers.Put(&b)
	}
	lw.mode, lw.buf = mode, nil
}

func (lw *listWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if lw.mode == listJSON {
		lw.release(listSkip)
	}
	lw.mode, lw.events = listSkip, eventReader{}
	return lw.passWriter.Hijack()
}

// finish reads a JSON answer of no stated length when the handler returns
// (an event stream was read as it passed, an answer of a stated length
// when it reached it: one shorter is cut, and no client reads it whole).
// A 200 answer of which no page was read may be a list the caller now
// holds: the one kept (a reply to an earlier tools/list, say) is gone.
func (lw *listWriter) finish() {
	switch {
	case lw.mode == listJSON && lw.length < 0:
		lw.keepJSON(true)
	case lw.mode == listJSON:
		lw.release(listSkip)
	}
	if lw.status == http.StatusOK && !lw.paged {
		lw.l.g.seen.forget(lw.l.key)
	}
}

// isListChanged reports whether msg is a notifications/tools/list_changed
// message, read as a client decodes it (an escaped method too). One
// outside the strict subset that could spell it counts as one: some client
// may read it so, and dropping a list is never wrong (whatever the id).
func isListChanged(msg []byte) bool { return mayBe(msg, "list_changed", listChangedMethod) }

// mayBeInitialize reports whether msg, a client message, could be an
// initialize for some SDK (a response, with no method, is not).
func mayBeInitialize(msg []byte) bool { return mayBe(msg, "initialize", "initialize") }

// mayBe reports whether msg could be, for some client, a message with the
// method whose last word is word: it could spell word, and readEnvelope reads
// that method of it or cannot read it (names).
func mayBe(msg []byte, word, method string) bool {
	if !maySpell(msg, word) {
		return false
	}
	r, ok := readEnvelope(msg, nil, nil)
	return names(msg, r.method, ok, method)
}

// names reports whether the method that readEnvelope read of msg is method,
// or readEnvelope could not read msg (ok false): some client may read it so.
func names(msg []byte, m span, ok bool, method string) bool {
	return !ok || m.kind == kString && strEquals(msg, m, method)
}

// maySpell reports whether msg, JSON, could hold word in a string: it
// holds it as it is, or a \u escape of one of its letters (the slashes of
// a method may be escaped, \/: word has none).
func maySpell(msg []byte, word string) bool {
	if bytes.Contains(msg, []byte(word)) {
		return true
	}
	for {
		i := bytes.Index(msg, []byte(`\u`))
		if i < 0 {
			return false
		}
		if r, ok := hex4(msg, i+2); ok && r < utf8.RuneSelf && strings.IndexByte(word, byte(r)) >= 0 {
			return true
		}
		msg = msg[i+2:]
	}
}

// A spellWatch follows the bytes of a message too long to read as they
// pass, in pieces: maybe reports whether they could spell list_changed.
type spellWatch struct {
	tail  [spellOverlap]byte // the last bytes, which such a spelling may straddle
	n     int                // of tail
	maybe bool
}

// spellOverlap is how many bytes of a piece a spelling of list_changed
// may straddle into the next: fewer than "list_changed" or \u006c.
const spellOverlap = len("list_changed") - 1

// add searches p, the next piece, with the bytes before it.
func (w *spellWatch) add(p []byte) {
	var join [2 * spellOverlap]byte
	head := append(append(join[:0], w.tail[:w.n]...), p[:min(len(p), spellOverlap)]...)
	w.maybe = w.maybe || maySpell(head, "list_changed") || maySpell(p, "list_changed")
	if len(p) >= spellOverlap {
		head = p[len(p)-spellOverlap:]
	}
	w.n = copy(w.tail[:], head[max(0, len(head)-spellOverlap):])
}

func (w *spellWatch) reset() { w.n, w.maybe = 0, false }

// A changeWriter watches the answer to a request of a session (its
// standalone GET stream, a subscriptions/listen stream, or any other
// request's answer, where mcp-go sends a notification it queued): it
// passes the answer through as it is written and, in an event stream,
// drops the session's lists when an event announces a changed list,
// before the bytes that end that event go on.
type changeWriter struct {
	passWriter
	g       *Guard
	session string
	events  eventReader
	decided bool
	read    bool // an event stream, not encoded
}

// answers is the observer of an answer watched only for a changed list:
// the guard itself, so that marking a request costs nothing.
type answers Guard

func (a *answers) watch(w http.ResponseWriter, r *http.Request) responseWatch {
	return &changeWriter{passWriter: passWriter{w: w}, g: (*Guard)(a), session: r.Header.Get(mcpwire.HeaderSessionID)}
}

// maxNotificationBytes bounds the event a changeWriter reads.
const maxNotificationBytes = 4 << 10

// decide reads the header as it goes out with the status code.
func (cw *changeWriter) decide(code int) {
	if cw.decided || code >= 100 && code < 200 {
		return
	}
	cw.decided = true
	cw.read = cw.g.readableStream(cw.w.Header(), cw.session)
}

// readableStream reports whether h announces an event stream the guard
// can read; one it cannot (encoded) may carry a list_changed, and drops
// the session's lists.
func (g *Guard) readableStream(h http.Header, session string) bool {
	if mcpwire.MediaType(h.Get("Content-Type")) != "text/event-stream" {
		return false
	}
	if len(h["Content-Encoding"]) > 0 {
		g.seen.dropSession(session, false)
		return false
	}
	return true
}

func (cw *changeWriter) WriteHeader(code int) {
	cw.decide(code)
	cw.passWriter.WriteHeader(code)
}

func (cw *changeWriter) FlushError() error {
	cw.decide(http.StatusOK)
	return cw.passWriter.FlushError()
}
func (cw *changeWriter) Flush() { _ = cw.FlushError() }

func (cw *changeWriter) Write(p []byte) (int, error) {
	cw.decide(http.StatusOK)
	if cw.read {
		cw.events.write(p, maxNotificationBytes, func(_ int, data []byte) {
			if isListChanged(data) {
				cw.g.seen.dropSession(cw.session, false)
			}
		})
	}
	return cw.w.Write(p)
}

func (cw *changeWriter) finish() {}
