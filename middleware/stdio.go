package toolguard

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolguard/toolguard/internal/mcpwire"
)

// StdioOptions configures a stdio guard ([NewStdio]). Every zero field has
// a default.
type StdioOptions struct {
	// MaxLineBytes is the longest client line the guard reads (default 4
	// MiB); a longer one reaches the server all the same, untracked.
	MaxLineBytes int

	// MaxServerLineBytes is the longest server line the guard reads whole
	// (default 8 MiB); a longer one is handed on in pieces, unread.
	MaxServerLineBytes int

	// ListTTL is as in [Options]; list_changed from the server and
	// initialize from the client drop the list sooner.
	ListTTL time.Duration

	// ToolListLimit, HideToolList, HideSuggestions and BareMessage mean
	// what they mean in [Options].
	ToolListLimit   int
	HideToolList    bool // leave data.availableTools out
	HideSuggestions bool // leave data.suggestions out
	BareMessage     bool // the message is "Unknown tool: X" alone

	// OnTranslate, if set, is told of every answer the guard writes in
	// place of the server's not-found answer, before it is written (ListErr
	// says why it has no list). It must not write to the guard's Writer.
	OnTranslate func(rej *Rejection)

	// OnUntracked, if set, is told why the guard leaves something to the
	// server untouched that it would otherwise have watched: a client
	// line longer than MaxLineBytes, or a tools/call line outside the
	// strict subset (the server's answer to it is not translated).
	OnUntracked func(reason string)
}

// DefaultMaxServerLineBytes is StdioOptions.MaxServerLineBytes's default.
const DefaultMaxServerLineBytes = 8 << 20

// maxTracked bounds the requests awaiting their answer that a stdio guard
// remembers; past it, it forgets one.
const maxTracked = 1024

// A Stdio guards one MCP stdio stream: the client's side (in, out) and the
// server's ([Stdio.Reader], [Stdio.Writer]). It never speaks to the server:
// the server reads exactly the client's bytes, as they arrive. Every server
// line reaches the client byte for byte and in order, except the server's
// own not-found answer to a tools/call line the guard read (one call in the
// strict subset, as over HTTP), which is replaced in its place by the same
// -32602 answer as over HTTP, one line, with the list the server gave the
// client's own tools/list. A line the guard cannot read is only not
// tracked. docs/STDIO.md has the rules.
//
// A Stdio is for one stream. Its Reader is read by one goroutine at a
// time; its Writer may be written concurrently.
type Stdio struct {
	opts  StdioOptions
	guard *Guard // builds answers, holds the lists seen

	rd stdioReader
	wr stdioWriter

	tracked atomic.Int64 // len(waiting), read without the lock

	mu      sync.Mutex
	waiting map[string]stdioRequest // id key → a request awaiting its answer
}

// stdioRequest is a tools/call or a tools/list the guard saw go to the
// server.
type stdioRequest struct {
	id     []byte // as sent
	key    string // the caller: "" in the 2025 era, the _meta after
	list   bool   // a tools/list, asked with cursor; else a tools/call of name
	name   string
	cursor string
	mark   listMark // a tools/list's, as it passed
}

// NewStdio returns a guard for the stream whose client side reads from in
// and writes to out. Give the server [Stdio.Reader] and [Stdio.Writer]
// instead of in and out:
//
//	g, err := toolguard.NewStdio(os.Stdin, os.Stdout, toolguard.StdioOptions{})
//	server.NewStdioServer(s).Listen(ctx, g.Reader(), g.Writer())         // mcp-go
//	s.Run(ctx, &mcp.IOTransport{Reader: g.Reader(), Writer: g.Writer()}) // go-sdk
func NewStdio(in io.Reader, out io.Writer, opts StdioOptions) (*Stdio, error) {
	switch {
	case in == nil || out == nil:
		return nil, errors.New("toolguard: NewStdio needs a reader and a writer")
	case opts.MaxLineBytes < 0:
		return nil, errors.New("toolguard: StdioOptions.MaxLineBytes must not be negative")
	case opts.MaxServerLineBytes < 0:
		return nil, errors.New("toolguard: StdioOptions.MaxServerLineBytes must not be negative")
	}
	if opts.MaxLineBytes == 0 {
		opts.MaxLineBytes = DefaultMaxBodyBytes
	}
	if opts.MaxServerLineBytes == 0 {
		opts.MaxServerLineBytes = DefaultMaxServerLineBytes
	}
	g, err := New(Options{
		ToolListLimit:   opts.ToolListLimit,
		HideToolList:    opts.HideToolList,
		HideSuggestions: opts.HideSuggestions,
		BareMessage:     opts.BareMessage,
		ListTTL:         opts.ListTTL,
	})
	if err != nil {
		return nil, errors.New(strings.Replace(err.Error(), "Options.", "StdioOptions.", 1))
	}
	s := &Stdio{opts: opts, guard: g, waiting: map[string]stdioRequest{}}
	s.rd = stdioReader{s: s, in: in}
	s.wr = stdioWriter{s: s, out: out}
	return s, nil
}

// Reader returns what the server reads: exactly the client's bytes. Close
// closes in when it is an io.Closer.
func (s *Stdio) Reader() io.ReadCloser { return &s.rd }

// Writer returns what the server writes to: its lines reach out, with its
// not-found answers translated. Close forwards an unfinished last line and
// closes out when it is an io.Closer.
func (s *Stdio) Writer() io.WriteCloser { return &s.wr }

func (s *Stdio) untracked(reason string) {
	if s.opts.OnUntracked != nil {
		s.opts.OnUntracked(reason)
	}
}

// stdioReader hands the server the client's bytes as they come, and reads
// each whole line on its way.
type stdioReader struct {
	s    *Stdio
	in   io.Reader
	line []byte // the start of a line whose end has not come yet
	long bool   // the line being read is longer than MaxLineBytes
}

func (r *stdioReader) Read(p []byte) (int, error) {
	n, err := r.in.Read(p)
	r.scan(p[:n])
	return n, err
}

// scan reads the client's bytes p for whole lines, before the server gets
// them: what it records is in place before the server can answer it.
func (r *stdioReader) scan(p []byte) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			r.keep(p)
			return
		}
		switch {
		case r.long:
		case len(r.line) == 0 && i <= r.s.opts.MaxLineBytes:
			r.s.clientLine(p[:i])
		default:
			r.keep(p[:i])
			if !r.long {
				r.s.clientLine(r.line)
			}
		}
		r.line, r.long = r.line[:0], false
		p = p[i+1:]
	}
}

// keep adds part of a line to the one being read, up to MaxLineBytes.
func (r *stdioReader) keep(b []byte) {
	if r.long {
		return
	}
	if len(r.line)+len(b) > r.s.opts.MaxLineBytes {
		r.long, r.line = true, nil
		r.s.untracked("a client line is longer than MaxLineBytes: if it is a tools/call, its answer is not translated")
		return
	}
	r.line = append(r.line, b...)
}

func (r *stdioReader) Close() error {
	if c, ok := r.in.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// clientLine notes one whole client line before it reaches the server: a
// tools/call or a tools/list is recorded to read its answer, and an
// initialize drops the lists seen (a new session starts with none), as
// does a line outside the strict subset that could spell one.
func (s *Stdio) clientLine(line []byte) {
	m := readMessage(line)
	if !m.strict {
		if mayBeInitialize(line) {
			s.guard.seen.dropSession("", true)
		} else if mayBe(line, "list", "tools/list") { // (a batch, say: some SDK may answer it)
			s.guard.seen.dropSession("", false)
		}
		if bytes.Contains(line, []byte("tools/call")) || bytes.Contains(line, []byte(`tools\/call`)) {
			s.untracked("a client line that mentions tools/call is outside the strict subset: its answer is not translated")
		}
		return
	}
	if m.jsonrpc.kind != kString || !strEquals(line, m.jsonrpc, "2.0") || m.method.kind != kString {
		return
	}
	if strEquals(line, m.method, "initialize") {
		s.guard.seen.dropSession("", true)
		return
	}
	call := strEquals(line, m.method, "tools/call")
	if m.id.kind != kString && m.id.kind != kInt {
		if call && m.id.kind != absent { // (without an id, a notification: no answer)
			s.untracked("a tools/call whose id is neither a string nor an integer is outside the strict subset: its answer is not translated")
		}
		s.listAsked(line, m, nil)
		return
	}
	id := bytes.Clone(m.id.raw(line))
	if s.tracked.Load() > 0 {
		s.answered(id) // an id sent again: what waited on it was answered, read or not
	}
	switch {
	case call && (!m.paramsObject || m.name.kind != kString):
		s.untracked("a tools/call whose params.name is not a string is outside the strict subset: its answer is not translated")
	case call:
		s.record(stdioRequest{id: id, key: stdioKey(line, m), name: string(decoded(nil, line, m.name))})
	default:
		s.listAsked(line, m, id)
	}
}

// listAsked notes a tools/list (m may be another request): the caller's
// list kept before is gone, as over HTTP (Guard.observe), and the answer
// is read when the page and the id (nil: not a string or an integer) are.
func (s *Stdio) listAsked(line []byte, m message, id []byte) {
	if !strEquals(line, m.method, "tools/list") {
		return
	}
	key := stdioKey(line, m)
	cursor, ok := listCursor(line, m)
	if ok = ok && id != nil; !ok || cursor == "" {
		s.guard.seen.forget(key)
	}
	if ok {
		s.record(stdioRequest{id: id, key: key, list: true, cursor: cursor, mark: s.guard.seen.mark("")})
	}
}

// stdioKey is the caller of a request: "" in the 2025 era (the session's
// one client), a digest of its _meta as callerMeta reads it in 2026-07-28,
// where each request states its client.
func stdioKey(line []byte, m message) string {
	if m.version.kind != kString || m.meta.kind == absent {
		return ""
	}
	var scratch [32]byte
	if !mcpwire.Sessionless(string(decoded(scratch[:0], line, m.version))) {
		return ""
	}
	sum := sha256.Sum256(callerMeta(m.meta.raw(line)))
	return string(sum[:])
}

// record remembers a request until its answer, forgetting another when
// too many wait (clientLine forgot what waited on its id before); not one
// whose id and name are longer than a not-found answer the guard reads.
func (s *Stdio) record(req stdioRequest) {
	key := idKey(req.id)
	if key == "" || len(req.id)+len(req.name) > maxNotFoundBytes("") {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.waiting) >= maxTracked {
		for k := range s.waiting {
			delete(s.waiting, k) // any one
			break
		}
	}
	s.waiting[key] = req
	s.tracked.Store(int64(len(s.waiting)))
}

// answered returns and forgets the request a server answer with this id
// answers, if the guard tracks it.
func (s *Stdio) answered(id []byte) (req stdioRequest, ok bool) {
	key := idKey(id)
	if key == "" {
		return req, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if req, ok = s.waiting[key]; ok {
		delete(s.waiting, key)
		s.tracked.Store(int64(len(s.waiting)))
	}
	return req, ok
}

// forgetLists stops tracking every waiting tools/list: no answer to them
// is read, and if one waited the client may hold a list: the lists kept
// are gone.
func (s *Stdio) forgetLists() {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.waiting)
	maps.DeleteFunc(s.waiting, func(_ string, r stdioRequest) bool { return r.list })
	s.tracked.Store(int64(len(s.waiting)))
	if len(s.waiting) < n {
		s.guard.seen.dropSession("", false)
	}
}

// idKey is the key of a JSON-RPC id: "s" and the decoded string, or "i" and
// the integer literal; "" for anything else.
func idKey(id []byte) string {
	id = bytes.TrimSpace(id)
	if len(id) == 0 {
		return ""
	}
	if id[0] == '"' {
		var s string
		if json.Unmarshal(id, &s) != nil {
			return ""
		}
		return "s" + s
	}
	if id[0] == '-' || ('0' <= id[0] && id[0] <= '9') {
		return "i" + string(id)
	}
	return ""
}

// stdioWriter takes the server's output and writes it to the client, line
// by line: a whole line is looked at once (one longer than
// MaxServerLineBytes goes on in pieces as it comes), and only a not-found
// answer to a tracked call is replaced.
type stdioWriter struct {
	s   *Stdio
	out io.Writer

	mu     sync.Mutex
	buf    []byte // a line whose end has not come yet
	long   bool   // the line being written is longer than MaxServerLineBytes: passed on as it comes
	spell  spellWatch
	err    error // the first write error: every later write fails with it
	closed bool
}

var errWriterClosed = errors.New("toolguard: stdio writer closed")

func (w *stdioWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return 0, errWriterClosed
	}
	if w.err != nil {
		return 0, w.err
	}
	// p[start:i] is a run of p that goes out as it is, not yet written:
	// lines that pass go out together, in one write.
	start, i := 0, 0
	for i < len(p) {
		j := bytes.IndexByte(p[i:], '\n')
		switch {
		case w.long:
			// The rest of a long line, as it comes; one that could spell
			// list_changed drops the lists (a client reads it whole).
			if j < 0 {
				w.spell.add(p[i:])
				i = len(p)
				break
			}
			w.spell.add(p[i : i+j+1])
			i, w.long = i+j+1, false
			if w.spell.maybe {
				w.s.guard.seen.dropSession("", false)
			}
		case j < 0 && len(w.buf)+len(p)-i > w.s.opts.MaxServerLineBytes:
			// The start of a long line: what is held goes out, the rest
			// as it comes.
			w.s.longLine(append(w.buf, p[i:min(len(p), i+4<<10)]...)) // (its start: the spelling is watched below)
			if err := w.write(p[start:i], w.buf); err != nil {
				return 0, err
			}
			w.spell.reset()
			w.spell.add(w.buf)
			w.spell.add(p[i:])
			w.buf, w.long, start, i = w.buf[:0], true, i, len(p)
		case j < 0:
			if err := w.write(p[start:i]); err != nil {
				return 0, err
			}
			w.buf = append(w.buf, p[i:]...)
			start, i = len(p), len(p)
		case len(w.buf) > 0:
			// The end of a line held from an earlier write (p[start:i] is
			// empty: i is 0).
			line := append(w.buf, p[i:i+j+1]...)
			w.buf = w.buf[:0]
			if repl := w.s.serverLine(line[:len(line)-1]); repl != nil {
				line = repl
			}
			if err := w.write(line); err != nil {
				return 0, err
			}
			i += j + 1
			start = i
		default:
			end := i + j + 1
			if repl := w.s.serverLine(p[i : end-1]); repl != nil {
				if err := w.write(p[start:i], repl); err != nil {
					return 0, err
				}
				start = end
			}
			i = end
		}
	}
	if err := w.write(p[start:]); err != nil {
		return 0, err
	}
	return len(p), nil
}

// write writes each of bs to the client, in order; the first error is
// kept, and every later write fails with it.
func (w *stdioWriter) write(bs ...[]byte) error {
	for _, b := range bs {
		if len(b) == 0 {
			continue
		}
		if _, err := w.out.Write(b); err != nil {
			w.err = err
			return err
		}
	}
	return nil
}

// Close ends the server's output: an unfinished last line goes out as it
// is, and out is closed if it is an io.Closer.
func (w *stdioWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	if len(w.buf) > 0 && w.err == nil {
		_, w.err = w.out.Write(w.buf)
		w.buf = nil
	}
	err := w.err // the first error: a failed write, else Close's
	if c, ok := w.out.(io.Closer); ok {
		if cerr := c.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// longLine notes a server line too long to read, by its start, before it
// goes on: unless its first 4 KiB show a method (a request or a
// notification), it may be the list a waiting tools/list gets, and the
// lists kept are gone.
func (s *Stdio) longLine(start []byte) {
	if s.tracked.Load() == 0 {
		return
	}
	if r, _ := readEnvelope(start[:min(len(start), 4<<10)], nil, nil); r.method.kind != kString {
		s.forgetLists()
	}
}

// serverLine looks at one whole server line (without its newline) and
// returns what goes to the client in its place: nil for the line itself,
// or the guard's answer (with its newline) to a call the server did not
// find. The answer to a tracked tools/list is read as it passes. A line
// longer than MaxServerLineBytes passes unread, however it came.
func (s *Stdio) serverLine(line []byte) []byte {
	tracked := s.tracked.Load() > 0
	if len(line) > s.opts.MaxServerLineBytes {
		s.longLine(line)
		if maySpell(line, "list_changed") { // unread, as the line that comes in pieces
			s.guard.seen.dropSession("", false)
		}
		return nil
	}
	if !tracked && !maySpell(line, "list_changed") {
		return nil
	}
	r, ok := readEnvelope(line, nil, nil)
	if !ok || r.method.kind != absent {
		// The server's own request or notification, or a line outside
		// the strict subset: only a changed list is read of it. A JSON
		// line outside it may be, for some client, the reply to a
		// waiting tools/list: no later line is taken for theirs.
		if !ok && tracked && json.Valid(line) {
			s.forgetLists()
		}
		if maySpell(line, "list_changed") && names(line, r.method, ok, listChangedMethod) {
			s.guard.seen.dropSession("", false)
		}
		return nil
	}
	if !tracked || r.id.kind == absent {
		return nil
	}
	c, ok := s.answered(r.id.raw(line))
	switch {
	case !ok:
		return nil
	case c.list:
		if p, _, ok := readListReply(line, c.id); ok {
			s.guard.seen.page(c.key, "", c.cursor, c.mark, p)
		} else {
			s.guard.seen.forget(c.key) // a list, perhaps, that the guard cannot read
		}
		return nil
	}
	seen := s.guard.seen.get(c.key)
	if !isNotFoundAnswer(line, c.id, c.name, func() *seenList { return seen }) {
		return nil
	}
	rej := s.guard.translation(seen, c.id, c.name, 0, false) // no HTTP status over stdio
	if s.opts.OnTranslate != nil {
		s.opts.OnTranslate(rej)
	}
	return append(rej.appendMessage(make([]byte, 0, len(rej.listed)+256)), '\n')
}
