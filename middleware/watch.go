package toolguard

import (
	"bufio"
	"bytes"
	"errors"
	"maps"
	"net"
	"net/http"
	"slices"
	"strconv"

	"github.com/toolguard/toolguard/internal/mcpwire"
)

// A watched call is a tools/call the guard handed to the server: what it
// needs to recognise the server's not-found answer to it, and to write its
// own. It is allocated once, with its writer and room for a short id.
type watched struct {
	g       *Guard
	r       *http.Request
	id      []byte // the call's id, as sent
	name    string
	meta    []byte // the call's params._meta as callerMeta reads it
	modern  bool
	caller  caller // taken before the server's handler runs (it may change r)
	key     string // caller's key, once digested
	session string

	seen   *seenList // the caller's list, as the last answer read found it (looked)
	looked bool

	ww    watchWriter
	idBuf [24]byte
}

// newWatched returns the watched call of id (copied: it lies in the
// request's pooled body) and name.
func newWatched(g *Guard, r *http.Request, id []byte, name string, meta []byte, modern bool) *watched {
	c := &watched{g: g, r: r, name: name, meta: meta, modern: modern,
		session: r.Header.Get(mcpwire.HeaderSessionID)}
	c.caller.take(r)
	c.id = append(c.idBuf[:0], id...)
	return c
}

// Writer modes.
const (
	modeUndecided = iota // nothing but 1xx written yet
	modeHold             // a JSON answer, held until it is settled, ends or grows past the bound
	modeStream           // an event stream: each event held until it ends
	modePass             // anything else: written through
)

// watchWriter is the ResponseWriter the server gets for a call the guard
// handed on: it passes every answer through byte for byte, with its status
// and headers, except the server's own not-found answer to the call,
// which it replaces with the guard's -32602 answer (keeping the status),
// as docs/RULES.md §2 ("How the answer is watched") has it.
type watchWriter struct {
	passWriter // its status is the answer's, once decided
	c          *watched
	mode       int
	sse        bool        // modeHold: the held answer is an event stream with a Content-Length
	buf        []byte      // modeHold: the answer so far; modeStream: the event being held
	events     eventReader // modeStream
	done       bool        // the call's answer was seen (stream): no more to watch
	lf         bool        // its event, replaced, ended at a CR that may be half a CRLF
	later      bool        // modeStream: past the stream's first event (where a BOM may be)
	err        error       // modeStream: the first write error: nothing more is written
	flushed    bool        // the handler flushed: what it wrote would be on the wire
	tries      int         // modeHold: reads at a write that ends an object
	notFoundAt int         // modeHold: the length of buf settled read as the not-found answer
	limit      int

	// modeHold: the header as it was when the handler wrote its status,
	// which is what net/http sends (what is set later goes out only as
	// declared trailers): its entries, sharing their value slices (a
	// handler that writes into one of them is not undone).
	sent []keyedValues
}

// watch returns the writer of c, which passes through to w.
func (c *watched) watch(w http.ResponseWriter, _ *http.Request) responseWatch {
	c.ww = watchWriter{passWriter: passWriter{w: w}, c: c, limit: maxNotFoundBytes(c.name)}
	return &c.ww
}

// asSent puts the header back as it was when the handler wrote its status,
// if the handler has changed it since, and returns what puts the changes
// back (nil when there were none). The map stays the same one: references
// to it the handler holds stay good.
func (ww *watchWriter) asSent() (restore func()) {
	h := ww.w.Header()
	if ww.sent == nil || unchanged(h, ww.sent) {
		return nil
	}
	now := maps.Clone(h) // shallow: the handler's own value slices go back
	clear(h)
	for _, kv := range ww.sent {
		h[kv.name] = kv.values
	}
	return func() {
		clear(h)
		maps.Copy(h, now)
	}
}

// hold notes the header as the handler wrote its status, for asSent.
func (ww *watchWriter) hold(h http.Header) {
	ww.sent = make([]keyedValues, 0, len(h))
	for k, v := range h {
		ww.sent = append(ww.sent, keyedValues{k, v})
	}
}

// unchanged reports whether h holds exactly the entries of sent.
func unchanged(h http.Header, sent []keyedValues) bool {
	if len(h) != len(sent) {
		return false
	}
	for _, kv := range sent {
		if v, ok := h[kv.name]; !ok || !slices.Equal(v, kv.values) {
			return false
		}
	}
	return true
}

func (ww *watchWriter) WriteHeader(code int) {
	if ww.mode != modeUndecided {
		if ww.mode == modePass {
			ww.w.WriteHeader(code) // net/http reports the superfluous call
		}
		return
	}
	if code >= 100 && code < 200 && code != http.StatusSwitchingProtocols {
		ww.w.WriteHeader(code) // informational: not the answer
		return
	}
	ww.status = code
	h := ww.w.Header()
	mt := mcpwire.MediaType(h.Get("Content-Type"))
	switch {
	case mt == "application/json" && len(h["Content-Encoding"]) == 0:
		ww.mode = modeHold
		ww.hold(h)
	case mt == "text/event-stream" && len(h["Content-Encoding"]) == 0 && len(h["Content-Length"]) == 0:
		ww.mode = modeStream
		ww.w.WriteHeader(code)
	case mt == "text/event-stream" && len(h["Content-Encoding"]) == 0:
		// An event stream of a stated length (the TypeScript SDK's JSON-less
		// answers): held whole, like a JSON answer, so that its length
		// can be stated again if its not-found event is replaced.
		ww.mode, ww.sse = modeHold, true
		ww.hold(h)
	default:
		ww.mode = modePass
		ww.c.g.readableStream(h, ww.c.session) // (an encoded one drops the lists)
		ww.w.WriteHeader(code)
	}
}

func (ww *watchWriter) Write(p []byte) (int, error) {
	if ww.mode == modeUndecided {
		if len(ww.w.Header()["Content-Type"]) == 0 {
			// net/http would sniff the type: pass it on to do so.
			ww.mode = modePass
		} else {
			ww.WriteHeader(http.StatusOK)
		}
	}
	switch ww.mode {
	case modeHold:
		ww.buf = append(ww.buf, p...)
		if ww.settled(p) {
			if err := ww.flushHeld(); err != nil {
				return 0, err
			}
		} else if len(ww.buf) > ww.limit {
			// Longer than any not-found answer: the rest passes; an event
			// stream is still read for a changed list, as it goes.
			sse := ww.sse
			if sse {
				ww.events.write(ww.buf, ww.limit, ww.changed)
			}
			if err := ww.flushHeld(); err != nil {
				return 0, err
			}
			if sse {
				ww.mode, ww.done = modeStream, true
			}
		}
		return len(p), nil
	case modeStream:
		if ww.err != nil {
			return 0, ww.err
		}
		if ww.done {
			// Past the answer, the stream passes as it comes; a changed
			// list in it still counts.
			ww.events.write(p, ww.limit, ww.changed)
			out := p
			if ww.lf && len(p) > 0 {
				ww.lf = false
				if p[0] == '\n' { // the rest of the replaced event's blank line
					out = p[1:]
				}
			}
			n, err := ww.w.Write(out)
			return n + len(p) - len(out), err
		}
		if err := ww.stream(p); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return ww.w.Write(p)
}

// settled reports, at a write that ends an object (at most maxEarlyReads
// times), whether the held JSON answer is one whole value that is not the
// not-found answer: nothing the handler writes after it can make it one,
// so it goes on without waiting for the handler to end (an upstream may
// end long after its answer).
func (ww *watchWriter) settled(p []byte) bool {
	if ww.sse || len(ww.buf) > ww.limit || ww.tries >= maxEarlyReads || !bytes.HasSuffix(bytes.TrimRight(p, " \t\r\n"), []byte("}")) {
		return false
	}
	ww.tries++
	if ww.c.notFound(ww.buf) { // (a whole message: finish need not read it again)
		ww.notFoundAt = len(ww.buf)
		return false
	}
	end, ok := skipValue(ww.buf, skipWS(ww.buf, 0), 0)
	return ok && skipWS(ww.buf, end) == len(ww.buf)
}

// FlushError sends what can be sent: in an event stream every event that
// has ended; a held JSON answer waits until it is settled or the handler ends.
func (ww *watchWriter) FlushError() error {
	ww.flushed = true
	if ww.mode == modeUndecided {
		ww.WriteHeader(http.StatusOK) // as net/http's Flush does
	}
	if ww.mode == modeHold {
		return nil // deferred: nothing goes out yet
	}
	return ww.passWriter.FlushError()
}
func (ww *watchWriter) Flush() { _ = ww.FlushError() }

// Hijack hands over the connection when nothing of the answer is held.
func (ww *watchWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if ww.mode == modeHold || len(ww.buf) > 0 {
		return nil, nil, errors.New("toolguard: hijack after part of the answer was written")
	}
	ww.mode, ww.done = modePass, true
	return http.NewResponseController(ww.w).Hijack()
}

// stream writes out each event of the stream that ends in p, the call's
// not-found answer replaced, and holds the event that has not ended,
// unless it has grown too long to be the answer: that goes on as it comes.
// Once the answer is replaced, the rest of p goes on in one write; once a
// write fails, nothing more is written.
func (ww *watchWriter) stream(p []byte) error {
	from := 0 // p[:from] is written
	ww.events.write(p, ww.limit, func(end int, data []byte) {
		if ww.err != nil || ww.done {
			ww.changed(end, data)
			return
		}
		ev := p[from:end]
		from = end
		if len(ww.buf) > 0 {
			ev = append(ww.buf, ev...)
			ww.buf = ev[:0]
		}
		out := ev
		switch {
		case data == nil: // not a message the guard reads
		case ww.c.notFound(data):
			ww.done, ww.lf = true, end == len(p) && ev[len(ev)-1] == '\r'
			out = ww.c.g.translate(ww.c, ww.status, true).event(ev, !ww.later)
		default:
			ww.changed(end, data)
			ww.done = endsReading(readEnvelope(data, nil, nil))
		}
		ww.later = true
		_, ww.err = ww.w.Write(out)
	})
	switch {
	case ww.err != nil:
	case ww.done || ww.events.long:
		if len(ww.buf) > 0 {
			_, ww.err = ww.w.Write(ww.buf)
			ww.buf = ww.buf[:0]
		}
		if ww.err == nil {
			_, ww.err = ww.w.Write(p[from:])
		}
	default:
		ww.buf = append(ww.buf, p[from:]...)
	}
	return ww.err
}

// changed drops the caller's session's lists when data, an event's
// message, announces a changed list.
func (ww *watchWriter) changed(_ int, data []byte) {
	if isListChanged(data) {
		ww.c.g.seen.dropSession(ww.c.session, false)
	}
}

// finish ends the answer when the server's handler has returned.
func (ww *watchWriter) finish() {
	switch ww.mode {
	case modeHold:
		if ww.sse {
			ww.finishEvents()
			return
		}
		if len(ww.buf) > 0 && ww.notFoundAt == len(ww.buf) || ww.c.notFound(ww.buf) {
			rej := ww.c.g.translate(ww.c, ww.status, false)
			ww.asSent() // what the handler set later belongs to its own answer
			ww.w.Header().Del("Content-Length")
			_ = rej.Write(ww.w)
			return
		}
		_ = ww.flushHeld()
	case modeStream:
		_ = ww.flushHeld()
	}
}

// finishEvents ends a held event stream, read as a stream is (stream):
// the call's not-found event replaced, with the new length; or as the
// server wrote it.
func (ww *watchWriter) finishEvents() {
	var out []byte
	var rej *Rejection
	var events eventReader
	from, done := 0, false
	events.write(ww.buf, ww.limit, func(end int, data []byte) {
		if !done && data != nil && ww.c.notFound(data) {
			rej, done = ww.c.g.translate(ww.c, ww.status, true), true
			ev := rej.event(ww.buf[from:end], from == 0)
			out = append(append(append(make([]byte, 0, len(ww.buf)+len(ev)), ww.buf[:from]...), ev...), ww.buf[end:]...)
		} else {
			ww.changed(end, data)
			done = done || data != nil && endsReading(readEnvelope(data, nil, nil))
		}
		from = end
	})
	if out == nil {
		_ = ww.flushHeld()
		return
	}
	ww.asSent()
	ww.w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	ww.w.WriteHeader(rej.Status) // (written whole, as Write writes)
	_, _ = ww.w.Write(out)
}

// abort writes what is held as it is; flushed, as the handler flushed
// it (a reverse proxy whose upstream broke off panics with
// http.ErrAbortHandler after flushing a whole message: net/http drops
// what is buffered when it aborts).
func (ww *watchWriter) abort() {
	_ = ww.flushHeld()
	if ww.flushed {
		ww.passWriter.Flush()
	}
}

// flushHeld writes what is held as it is, untranslated (an answer that is
// not the not-found one, or that of a handler that did not end), and
// passes the rest.
func (ww *watchWriter) flushHeld() error {
	held, mode := ww.buf, ww.mode
	ww.mode, ww.buf = modePass, nil
	switch {
	case mode == modeHold:
		restore := ww.asSent()
		ww.w.WriteHeader(ww.status)
		// A writer beneath may take the header at its first Write rather
		// than at WriteHeader (gin's does): this Write, even of nothing.
		_, err := ww.w.Write(held)
		if restore != nil {
			restore() // for what net/http reads at the end: declared trailers
		}
		return err
	case mode == modeStream && len(held) > 0 && ww.err == nil:
		_, err := ww.w.Write(held)
		return err
	}
	return nil
}

// notFound reports whether msg is the server's not-found answer to c, by
// the caller's list as it is now, which its translation then shows.
func (c *watched) notFound(msg []byte) bool {
	c.looked = false
	return isNotFoundAnswer(msg, c.id, c.name, c.list)
}

// list returns the list the server gave c's caller (nil: none seen),
// looked up once an answer.
func (c *watched) list() *seenList {
	if !c.looked {
		if c.key == "" {
			c.key = c.caller.key(c.meta)
		}
		c.seen, c.looked = c.g.seen.get(c.key), true
	}
	return c.seen
}
