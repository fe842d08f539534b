package toolguard

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolguard/toolguard/mcpwire"
)

// StdioOptions configures a stdio guard ([NewStdio]). Every zero field has a
// default.
type StdioOptions struct {
	// MaxLineBytes is the longest client line the guard reads whole to see
	// whether it is a tools/call. A longer line is handed on in pieces as
	// it arrives, and is not tracked: the server's answer to it reaches the
	// client as the server wrote it. Default DefaultMaxBodyBytes (4 MiB).
	MaxLineBytes int

	// MaxServerLineBytes is the longest server line the guard reads whole
	// (a not-found answer, or the answer to one of its own tools/list
	// requests). A longer line is handed on in pieces as it arrives; an
	// answer to the guard's own request that long is dropped, and the
	// answer it was asked for goes out without data.availableTools.
	// Default 8 MiB.
	MaxServerLineBytes int

	// ListTimeout bounds how long a translated answer waits for the
	// caller's tools/list (every page of it). Past it the answer goes out
	// without data.availableTools, and OnReject's Rejection says why
	// (ListErr). Default DefaultListTimeout (2s).
	ListTimeout time.Duration

	// MaxPages bounds how many pages of one list are asked (following
	// nextCursor); a longer list is not used. Default 50.
	MaxPages int

	// ToolListLimit, HideToolList and HideSuggestions mean what they mean
	// in [Options]. With both Hide fields set the guard asks no list.
	ToolListLimit   int
	HideToolList    bool // leave data.availableTools out
	HideSuggestions bool // leave data.suggestions out

	// OnReject, if set, is told of every answer the guard writes in place
	// of the server's own not-found answer (Translated is true), before it
	// is written. ListErr is set when the answer has no
	// data.availableTools, and says why. It may be called from several
	// goroutines at once.
	OnReject func(rej *Rejection)

	// OnUntracked, if set, is told why the guard leaves something to the
	// server untouched that it would otherwise have watched: a client
	// line longer than MaxLineBytes or a tools/call line outside the
	// strict subset (the server's answer to it is not translated), or a
	// client line that leaves the stream inside an unfinished JSON value
	// (no list is asked until it ends). It may be called from several
	// goroutines at once.
	OnUntracked func(reason string)
}

// Defaults for [StdioOptions].
const (
	DefaultMaxServerLineBytes = 8 << 20
	DefaultMaxPages           = 50
)

// Bounds of what a stdio guard remembers.
const (
	maxTrackedCalls     = 1024     // calls awaiting their answer; the oldest is forgotten first
	maxTrackedCallBytes = 16 << 10 // id, name and _meta of one call; a larger call is not tracked
	maxCachedLists      = 16       // callers' lists kept (one in the 2025 era, one per _meta after)
)

// A Stdio guards one MCP stdio stream: the client's side (in, out) and the
// server's ([Stdio.Reader], [Stdio.Writer]). The server decides; the guard
// translates.
//
// Every client line reaches the server at once, byte for byte and in
// order: the guard hands a line on as soon as its newline has arrived
// (a line longer than MaxLineBytes in pieces, as they arrive), and never
// answers a call itself. Every server line reaches the client byte for
// byte and in order, except two kinds:
//
//   - The server's own not-found answer (see [IsNotFound]) to a tools/call
//     the guard saw: a client line that is one tools/call in the strict
//     subset (as over HTTP), with a string or integer id and a string name.
//     It is replaced by the same -32602 answer as over HTTP ("Unknown
//     tool: X", data.availableTools, data.suggestions), one line. To fill
//     data the guard asks the server for the caller's tools/list on the
//     same stream: in the 2025 era in the client's session, in 2026-07-28
//     carrying the call's own params._meta (without its progressToken).
//     Meanwhile every other server line keeps reaching the client; past
//     ListTimeout the answer goes out without data.availableTools. A list
//     is kept, for data only, until the server announces
//     notifications/tools/list_changed or the client sends initialize.
//   - The answers to the guard's own tools/list requests. Their ids are
//     strings with a random prefix the client never sees ("toolguard-…-"),
//     so they cannot collide with the client's; neither the requests nor
//     their answers reach the client.
//
// The guard's own writes never land inside a partial server line: a
// server line is handed on once whole (one longer than MaxServerLineBytes
// in pieces, and the guard's answers wait for its end), and the guard's
// requests reach the server between whole client lines.
//
// A line the guard cannot read (not JSON, outside the strict subset,
// longer than MaxLineBytes) only means that line is not tracked: the
// server's answer to it reaches the client untouched. Where the guard
// cannot read the stream as the server does: it reads lines, while
// go-sdk's IOTransport decodes a stream of JSON values, so after a client
// line that is not one whole JSON value, go-sdk reads the next lines as the
// rest of that value (or ends the session at a syntax error), where the
// guard reads them as lines and records the calls it finds there.
// Translating stays safe then, because a translation needs the server's
// own not-found answer naming the same id and the same tool name: a server
// that read another message than the guard did either answers another id,
// names another tool, or answers nothing, and its answer passes through.
// The one thing the guard must not do then is put its own request inside a
// value the server is still reading: it follows the JSON nesting of the
// client's bytes across lines, and while the stream is inside an
// unfinished value it sends no request (answers in that time go out
// without data.availableTools).
//
// A Stdio is for one stream. Its Reader is read by one goroutine at a time;
// its Writer may be written concurrently.
type Stdio struct {
	opts   StdioOptions
	guard  *Guard // builds answers
	prefix []byte // "toolguard-<random>-", the prefix of every own request id
	seq    atomic.Int64

	fetches, rejections atomic.Int64
	tracked             atomic.Int64 // len(calls), read without the lock

	rd stdioReader
	wr stdioWriter

	injectReady chan struct{} // signalled when a request is queued
	closing     chan struct{} // closed when the server's output ends
	translating sync.WaitGroup

	mu       sync.Mutex
	calls    map[string]*stdioCall // id key → the call
	order    []stdioCallRef        // calls by age, for forgetting the oldest
	callSeq  uint64
	lists    map[string][]string   // caller key → the names of its list (sorted, unique)
	gen      uint64                // bumped whenever the lists are dropped
	inflight map[string]*listFetch // caller key → the fetch under way
	queue    []ownRequest          // requests waiting to reach the server
	waiters  map[string]chan []byte
}

// stdioCall is a tools/call the guard saw go to the server.
type stdioCall struct {
	id   []byte // as sent
	name string
	meta []byte // the _meta for the caller's list (2026-07-28), nil in the 2025 era
	key  string // the caller: "" in the 2025 era, the _meta after
	seq  uint64 // order of recording, to forget the oldest
}

type stdioCallRef struct {
	key string
	seq uint64
}

// ownRequest is a request of the guard's waiting to reach the server.
type ownRequest struct {
	id   string
	line []byte
}

// listFetch is one caller's list being asked; later translations for the
// same caller wait for it instead of asking again.
type listFetch struct {
	done  chan struct{}
	names []string
	err   error
}

// NewStdio returns a guard for the stream whose client side reads from in
// and writes to out. Give the server [Stdio.Reader] and [Stdio.Writer]
// instead of in and out:
//
//	g, err := toolguard.NewStdio(os.Stdin, os.Stdout, toolguard.StdioOptions{})
//	server.NewStdioServer(s).Listen(ctx, g.Reader(), g.Writer())         // mcp-go
//	s.Run(ctx, &mcp.IOTransport{Reader: g.Reader(), Writer: g.Writer()}) // go-sdk
func NewStdio(in io.Reader, out io.Writer, opts StdioOptions) (*Stdio, error) {
	if in == nil || out == nil {
		return nil, errors.New("toolguard: NewStdio needs a reader and a writer")
	}
	for _, f := range []struct {
		name     string
		negative bool
	}{
		{"MaxLineBytes", opts.MaxLineBytes < 0}, {"MaxServerLineBytes", opts.MaxServerLineBytes < 0},
		{"ListTimeout", opts.ListTimeout < 0}, {"MaxPages", opts.MaxPages < 0},
	} {
		if f.negative {
			return nil, fmt.Errorf("toolguard: StdioOptions.%s must not be negative", f.name)
		}
	}
	if opts.ToolListLimit < 0 {
		return nil, errors.New("toolguard: StdioOptions.ToolListLimit must not be negative (use HideToolList to leave the list out)")
	}
	if opts.MaxLineBytes == 0 {
		opts.MaxLineBytes = DefaultMaxBodyBytes
	}
	if opts.MaxServerLineBytes == 0 {
		opts.MaxServerLineBytes = DefaultMaxServerLineBytes
	}
	if opts.ListTimeout == 0 {
		opts.ListTimeout = DefaultListTimeout
	}
	if opts.MaxPages == 0 {
		opts.MaxPages = DefaultMaxPages
	}
	if opts.ToolListLimit == 0 {
		opts.ToolListLimit = DefaultToolListLimit
	}
	var random [8]byte
	if _, err := rand.Read(random[:]); err != nil {
		return nil, err
	}
	s := &Stdio{
		opts: opts,
		guard: &Guard{opts: Options{
			ToolListLimit:   opts.ToolListLimit,
			HideToolList:    opts.HideToolList,
			HideSuggestions: opts.HideSuggestions,
		}},
		prefix:      []byte("toolguard-" + hex.EncodeToString(random[:]) + "-"),
		injectReady: make(chan struct{}, 1),
		closing:     make(chan struct{}),
		calls:       map[string]*stdioCall{},
		lists:       map[string][]string{},
		inflight:    map[string]*listFetch{},
		waiters:     map[string]chan []byte{},
	}
	s.rd = stdioReader{s: s, in: in, chunks: make(chan chunk), closed: make(chan struct{}), atBoundary: true}
	s.wr = stdioWriter{s: s, out: out}
	s.wr.cond.L = &s.wr.mu
	return s, nil
}

// Reader returns what the server reads: the client's lines, and between
// them the guard's own tools/list requests. Close closes in when it is an
// io.Closer.
func (s *Stdio) Reader() io.ReadCloser { return &s.rd }

// Writer returns what the server writes to: its lines reach out, less the
// answers to the guard's own requests and with its not-found answers
// translated. Close writes the answers still waiting for a list (without
// it), forwards an unfinished last line, and closes out when it is an
// io.Closer.
func (s *Stdio) Writer() io.WriteCloser { return &s.wr }

// Fetches reports how many tools/list requests the guard has sent.
func (s *Stdio) Fetches() int64 { return s.fetches.Load() }

// Rejections reports how many not-found answers the guard has translated.
func (s *Stdio) Rejections() int64 { return s.rejections.Load() }

func (s *Stdio) untracked(reason string) {
	if s.opts.OnUntracked != nil {
		s.opts.OnUntracked(reason)
	}
}

// ---- the client's side: what the server reads ----

// A chunk is what the pump read from the client: a whole line, or a piece
// of a line longer than MaxLineBytes, or the error that ended the input.
type chunk struct {
	b        []byte
	ends     bool // b ends a line
	boundary bool // after b the client's stream is between JSON values
	err      error
}

type stdioReader struct {
	s      *Stdio
	in     io.Reader
	chunks chan chunk
	start  sync.Once

	pending    []byte
	midLine    bool // the last bytes handed on did not end a line
	atBoundary bool // after them the stream is between JSON values
	err        error

	closeOnce sync.Once
	closed    chan struct{}
}

func (r *stdioReader) Read(p []byte) (int, error) {
	r.start.Do(func() { go r.pump() })
	for {
		if len(r.pending) > 0 {
			n := copy(p, r.pending)
			r.pending = r.pending[n:]
			return n, nil
		}
		if r.err != nil {
			return 0, r.err
		}
		var ready chan struct{}
		if !r.midLine && r.atBoundary {
			if req := r.s.takeRequest(); req != nil {
				r.pending = req
				continue
			}
			ready = r.s.injectReady
		}
		select {
		case c := <-r.chunks:
			if c.err != nil {
				r.err = c.err
				continue
			}
			r.pending, r.midLine, r.atBoundary = c.b, !c.ends, c.boundary
		case <-ready:
		case <-r.closed:
			return 0, errReaderClosed
		}
	}
}

var errReaderClosed = errors.New("toolguard: stdio reader closed")

// Close stops Read and closes in when it is an io.Closer.
func (r *stdioReader) Close() error {
	r.closeOnce.Do(func() { close(r.closed) })
	if c, ok := r.in.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// pump reads the client's input line by line and hands each line to Read
// as soon as it is whole, recording the tools/calls among them first.
func (r *stdioReader) pump() {
	s := r.s
	br := bufio.NewReaderSize(r.in, 64<<10)
	var (
		long      []byte // a line longer than the buffer, gathered
		streaming bool   // handing on a line longer than MaxLineBytes
		nest      nesting
	)
	send := func(c chunk) bool {
		select {
		case r.chunks <- c:
			return true
		case <-r.closed:
			return false
		}
	}
	for {
		frag, err := br.ReadSlice('\n')
		switch {
		case streaming:
			nest.feed(frag)
			if !send(chunk{b: bytes.Clone(frag), ends: err == nil, boundary: nest.between()}) {
				return
			}
			streaming = err == bufio.ErrBufferFull
			if err != nil && err != bufio.ErrBufferFull {
				send(chunk{err: err})
				return
			}
			continue
		case err == bufio.ErrBufferFull:
			long = append(long, frag...)
			if len(long) > s.opts.MaxLineBytes {
				s.untracked("a client line is longer than MaxLineBytes: handed on unread, and its answer is not translated")
				nest.feed(long)
				if !send(chunk{b: long, boundary: nest.between()}) {
					return
				}
				long, streaming = nil, true
			}
			continue
		}
		line := append(long, frag...) // a copy: frag is the reader's buffer
		long = nil
		if err != nil {
			// An unfinished last line: no server reads it as a message.
			if len(line) > 0 {
				nest.feed(line)
				if !send(chunk{b: line, boundary: nest.between()}) {
					return
				}
			}
			send(chunk{err: err})
			return
		}
		if len(line) > s.opts.MaxLineBytes {
			s.untracked("a client line is longer than MaxLineBytes: handed on unread, and its answer is not translated")
			nest.feed(line)
		} else {
			s.clientLine(line, &nest)
		}
		if !send(chunk{b: line, ends: true, boundary: nest.between()}) {
			return
		}
	}
}

// clientLine notes one whole client line before it reaches the server: a
// tools/call is recorded, an initialize drops the cached lists, and the
// nesting of JSON values across lines is followed.
func (s *Stdio) clientLine(line []byte, nest *nesting) {
	m := readMessage(line)
	wasBetween := nest.between()
	if !m.strict || !wasBetween {
		// One whole JSON object leaves the nesting as it was; anything
		// else, or anything inside an unfinished value, is followed.
		nest.feed(line)
		if wasBetween && !nest.between() {
			s.untracked("a client line leaves the stream inside an unfinished JSON value (a server that decodes the stream, as go-sdk does, reads the next lines as its rest): the guard asks no list until it ends")
		}
	}
	if !m.strict {
		if bytes.Contains(line, []byte("tools/call")) || bytes.Contains(line, []byte(`tools\/call`)) {
			s.untracked("a client line that mentions tools/call is outside the strict subset: its answer is not translated")
		}
		return
	}
	if m.jsonrpc.kind != kString || !strEquals(line, m.jsonrpc, "2.0") || m.method.kind != kString {
		return
	}
	if strEquals(line, m.method, "initialize") {
		s.dropLists()
		return
	}
	if (m.id.kind != kString && m.id.kind != kInt) || !strEquals(line, m.method, "tools/call") ||
		!m.paramsObject || m.name.kind != kString {
		return
	}
	c := &stdioCall{id: bytes.Clone(m.id.raw(line)), name: string(decoded(nil, line, m.name))}
	if m.version.kind == kString {
		var scratch [32]byte
		if mcpwire.IsModern(string(decoded(scratch[:0], line, m.version))) && m.meta.kind != absent {
			c.meta = forwardedMeta(m.meta.raw(line))
			c.key = string(c.meta)
		}
	}
	if len(c.id)+len(c.name)+len(c.meta) > maxTrackedCallBytes {
		s.untracked("a tools/call is larger than the guard tracks (id, name and _meta over 16 KiB): its answer is not translated")
		return
	}
	s.record(idKey(c.id), c)
}

// record remembers a call until its answer, forgetting the oldest call
// when too many wait.
func (s *Stdio) record(key string, c *stdioCall) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.callSeq++
	c.seq = s.callSeq
	s.calls[key] = c
	s.order = append(s.order, stdioCallRef{key, c.seq})
	for len(s.calls) > maxTrackedCalls {
		old := s.order[0]
		s.order = s.order[1:]
		if oc, ok := s.calls[old.key]; ok && oc.seq == old.seq {
			delete(s.calls, old.key)
		}
	}
	if len(s.order) > 4*maxTrackedCalls {
		// Drop the references of calls already answered.
		live := s.order[:0]
		for _, ref := range s.order {
			if oc, ok := s.calls[ref.key]; ok && oc.seq == ref.seq {
				live = append(live, ref)
			}
		}
		s.order = slices.Clip(live)
	}
	s.tracked.Store(int64(len(s.calls)))
}

// answered returns and forgets the call a server answer with this id
// answers, if the guard tracks it.
func (s *Stdio) answered(id []byte) *stdioCall {
	key := idKey(id)
	if key == "" {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.calls[key]
	if ok {
		delete(s.calls, key)
		s.tracked.Store(int64(len(s.calls)))
	}
	return c
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

// nesting follows the JSON nesting of a byte stream across lines, as a
// decoder of a stream of values reads it: between values, or inside one.
// It does not validate: a syntax error ends such a decoder's stream, after
// which nothing the guard sends can be misread.
type nesting struct {
	depth    int
	inString bool
	escaped  bool
}

func (n *nesting) feed(b []byte) {
	for _, c := range b {
		if n.inString {
			switch {
			case n.escaped:
				n.escaped = false
			case c == '\\':
				n.escaped = true
			case c == '"':
				n.inString = false
			case c == '\n':
				// A raw newline in a string: a syntax error to a stream
				// decoder, the end of a line to the others.
				*n = nesting{}
			}
			continue
		}
		switch c {
		case '"':
			n.inString = true
		case '{', '[':
			n.depth++
		case '}', ']':
			if n.depth > 0 {
				n.depth--
			}
		}
	}
}

func (n *nesting) between() bool { return n.depth == 0 && !n.inString }

// ---- the guard's own requests ----

// takeRequest returns the next request of the guard's to hand to the
// server, or nil.
func (s *Stdio) takeRequest() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) == 0 {
		return nil
	}
	req := s.queue[0]
	s.queue = s.queue[1:]
	return req.line
}

// ask queues a tools/list request for the caller and returns the channel
// its answer comes on, and its id.
func (s *Stdio) ask(cursor string, meta []byte) (string, chan []byte) {
	id := string(s.prefix) + strconv.FormatInt(s.seq.Add(1), 10)
	ch := make(chan []byte, 1)
	line := append(mcpwire.ListRequest(id, cursor, meta), '\n')
	s.fetches.Add(1) // before the server can answer: serverLine looks for answers only once there were requests
	s.mu.Lock()
	s.waiters[id] = ch
	s.queue = append(s.queue, ownRequest{id, line})
	s.mu.Unlock()
	select {
	case s.injectReady <- struct{}{}:
	default:
	}
	return id, ch
}

// forget drops a request that was not answered in time: from the queue if
// it has not reached the server, and from the waiters. A late answer is
// still dropped by its prefix.
func (s *Stdio) forget(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.waiters, id)
	s.queue = slices.DeleteFunc(s.queue, func(r ownRequest) bool { return r.id == id })
}

// dropLists forgets every cached list (the tools changed, or a new session
// began); fetches under way finish for their own answers but are not kept.
func (s *Stdio) dropLists() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gen++
	clear(s.lists)
	clear(s.inflight)
}

// cachedList returns the cached list of the caller, if any.
func (s *Stdio) cachedList(key string) ([]string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	names, ok := s.lists[key]
	return names, ok
}

// callerList returns the names the caller of c can list, asking the
// server (at most ListTimeout) unless they are cached; a fetch under way
// for the same caller is shared.
func (s *Stdio) callerList(c *stdioCall) ([]string, error) {
	s.mu.Lock()
	if names, ok := s.lists[c.key]; ok {
		s.mu.Unlock()
		return names, nil
	}
	f, running := s.inflight[c.key]
	if running {
		s.mu.Unlock()
		<-f.done
		return f.names, f.err
	}
	f = &listFetch{done: make(chan struct{})}
	s.inflight[c.key] = f
	gen := s.gen
	s.mu.Unlock()

	f.names, f.err = s.fetch(c.meta)
	s.mu.Lock()
	if s.inflight[c.key] == f {
		delete(s.inflight, c.key)
	}
	if f.err == nil && s.gen == gen {
		if len(s.lists) >= maxCachedLists {
			clear(s.lists)
		}
		s.lists[c.key] = f.names
	}
	s.mu.Unlock()
	close(f.done)
	return f.names, f.err
}

// fetch asks the server for a list, page by page, within ListTimeout.
func (s *Stdio) fetch(meta []byte) ([]string, error) {
	timer := time.NewTimer(s.opts.ListTimeout)
	defer timer.Stop()
	var names []string
	cursor := ""
	for page := 0; ; page++ {
		if page == s.opts.MaxPages {
			return nil, fmt.Errorf("toolguard: the tool list has more than MaxPages (%d) pages", s.opts.MaxPages)
		}
		id, ch := s.ask(cursor, meta)
		var answer []byte
		select {
		case answer = <-ch:
		case <-timer.C:
			s.forget(id)
			return nil, fmt.Errorf("toolguard: no tool list within ListTimeout (%v)", s.opts.ListTimeout)
		case <-s.closing:
			s.forget(id)
			return nil, errors.New("toolguard: the server's output ended before its tool list")
		}
		if answer == nil {
			return nil, fmt.Errorf("toolguard: the tool list answer is longer than MaxServerLineBytes (%d)", s.opts.MaxServerLineBytes)
		}
		p, err := decodeListReply(answer, false, id)
		if err != nil {
			return nil, fmt.Errorf("toolguard: the server's tools/list answer: %w", err)
		}
		names = append(names, p.Names...)
		if p.NextCursor == "" {
			slices.Sort(names)
			return slices.Compact(names), nil
		}
		cursor = p.NextCursor
	}
}

// needsList reports whether answers show anything of a list.
func (s *Stdio) needsList() bool { return !s.opts.HideToolList || !s.opts.HideSuggestions }

// answer builds the guard's answer to c, whose server answered not found,
// from names (nil with listErr when there is no list), and tells OnReject.
func (s *Stdio) answer(c *stdioCall, names []string, listErr error) []byte {
	var la *listAnswer
	if listErr != nil || names == nil {
		la = &listAnswer{hideSuggestions: true}
	} else {
		la = s.guard.answerFor(names)
	}
	rej := s.guard.unknownTool(c.id, c.name, la, 0, false) // no HTTP status over stdio
	rej.Translated = true
	rej.ListErr = listErr
	if s.opts.OnReject != nil {
		s.opts.OnReject(rej)
	}
	s.rejections.Add(1)
	return append(append(make([]byte, 0, len(rej.body)+1), rej.body...), '\n')
}

// translate writes the answer to c once the caller's list has come (or
// has not, within ListTimeout).
func (s *Stdio) translate(c *stdioCall) {
	defer s.translating.Done()
	names, err := s.callerList(c)
	s.wr.writeOwn(s.answer(c, names, err))
}

// ---- the server's side: what the server writes ----

type stdioWriter struct {
	s   *Stdio
	out io.Writer

	mu        sync.Mutex
	cond      sync.Cond // signalled when a long line ends or the output ends
	buf       []byte    // an unfinished server line
	streaming bool      // handing on a line longer than MaxServerLineBytes: out is mid-line
	dropping  bool      // dropping a long answer to the guard's own request
	closing   bool      // Close was called: the server writes no more
	closed    bool
	err       error // the first error out returned
}

var errWriterClosed = errors.New("toolguard: stdio writer closed")

func (w *stdioWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closing {
		return 0, errWriterClosed
	}
	if w.err != nil {
		return 0, w.err
	}
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if w.streaming || w.dropping {
			end := len(p)
			if i >= 0 {
				end = i + 1
			}
			if w.streaming {
				if err := w.write(p[:end]); err != nil {
					return 0, err
				}
			}
			if i >= 0 {
				w.streaming, w.dropping = false, false
				w.cond.Broadcast()
			}
			p = p[end:]
			continue
		}
		if i < 0 {
			if len(w.buf)+len(p) > w.s.opts.MaxServerLineBytes {
				head := append(w.buf, p...)
				w.buf = w.buf[:0]
				if id, own := w.s.ownAnswerStart(head); own {
					w.s.deliver(id, nil)
					w.dropping = true
					return n, nil
				}
				if err := w.write(head); err != nil {
					return 0, err
				}
				w.streaming = true
				return n, nil
			}
			w.buf = append(w.buf, p...)
			return n, nil
		}
		line := p[:i+1]
		if len(w.buf) > 0 {
			line = append(w.buf, line...)
			w.buf = w.buf[:0]
		}
		p = p[i+1:]
		if len(line) > w.s.opts.MaxServerLineBytes {
			// Too long to read, although it came whole: as one in pieces.
			if id, own := w.s.ownAnswerStart(line); own {
				w.s.deliver(id, nil)
				continue
			}
			if err := w.write(line); err != nil {
				return 0, err
			}
			continue
		}
		if out := w.s.serverLine(line); out != nil {
			if err := w.write(out); err != nil {
				return 0, err
			}
		}
		if cap(w.buf) > 1<<20 {
			w.buf = nil
		}
	}
	return n, nil
}

func (w *stdioWriter) write(b []byte) error {
	_, err := w.out.Write(b)
	if err != nil && w.err == nil {
		w.err = err
	}
	return err
}

// writeOwn writes one line of the guard's between two server lines.
func (w *stdioWriter) writeOwn(line []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.streaming && !w.closing {
		w.cond.Wait()
	}
	if w.closed || w.err != nil {
		return // out is closed or broken: nobody reads it any more
	}
	if w.streaming {
		w.s.untracked("the server's output ended inside a line: an answer of the guard's could not be written")
		return
	}
	w.write(line)
}

// Close ends the server's output: answers still waiting for a list are
// written without it, then an unfinished last line as it is, and out is
// closed if it is an io.Closer.
func (w *stdioWriter) Close() error {
	w.mu.Lock()
	if w.closing {
		w.mu.Unlock()
		return nil
	}
	w.closing = true
	w.cond.Broadcast()
	w.mu.Unlock()
	close(w.s.closing)
	w.s.translating.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	if len(w.buf) > 0 && w.err == nil {
		w.write(w.buf)
		w.buf = nil
	}
	if c, ok := w.out.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

var (
	listChanged   = []byte(`notifications/tools/list_changed`)
	errorMember   = []byte(`"error"`)
	isErrorMember = []byte(`"isError"`)
)

// maxExaminedLine is the longest server line that can be a not-found
// answer to a tracked call.
var maxExaminedLine = maxNotFoundBytes(string(make([]byte, maxTrackedCallBytes)))

// serverLine looks at one whole server line (with w.mu held) and returns
// what goes to the client in its place: the line itself, nothing (an
// answer to the guard's own request), or the guard's answer to a call the
// server did not find. It starts a translation that has to wait for a list.
func (s *Stdio) serverLine(line []byte) []byte {
	if s.fetches.Load() > 0 && bytes.Contains(line, s.prefix) {
		if id, own := s.ownAnswer(line); own {
			s.deliver(id, slices.Clone(line))
			return nil
		}
	}
	if bytes.Contains(line, listChanged) {
		var msg struct {
			Method string `json:"method"`
		}
		if json.Unmarshal(line, &msg) == nil && msg.Method == "notifications/tools/list_changed" {
			s.dropLists()
		}
	}
	if s.tracked.Load() == 0 || len(line) > maxExaminedLine ||
		(!bytes.Contains(line, errorMember) && !bytes.Contains(line, isErrorMember)) {
		return line
	}
	id := replyID(line)
	if id == nil {
		return line
	}
	c := s.answered(id)
	if c == nil || !IsNotFound(line, c.id, c.name) {
		return line
	}
	if !s.needsList() {
		return s.answer(c, nil, nil)
	}
	if names, ok := s.cachedList(c.key); ok {
		return s.answer(c, names, nil)
	}
	s.translating.Add(1)
	go s.translate(c)
	return nil
}

// replyID returns the raw id of a JSON-RPC response line (one without a
// method), or nil. It only picks the answer's call: IsNotFound then reads
// the line with encoding/json and checks the id again.
func replyID(line []byte) []byte {
	b := line
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil
	}
	var id []byte
	for i = skipWS(b, i+1); i < len(b) && b[i] == '"'; {
		kend, ok := skipValue(b, i, 1)
		if !ok {
			return nil
		}
		key := b[i:kend]
		j := skipWS(b, kend)
		if j >= len(b) || b[j] != ':' {
			return nil
		}
		v := skipWS(b, j+1)
		vend, ok := skipValue(b, v, 1)
		if !ok {
			return nil
		}
		switch {
		case keyEquals(key, "method"):
			return nil
		case keyEquals(key, "id"):
			id = b[v:vend]
		}
		if i = skipWS(b, vend); i >= len(b) || b[i] != ',' {
			break
		}
		i = skipWS(b, i+1)
	}
	return id
}

// ownAnswer reports whether a whole server line is an answer to one of
// the guard's own requests (a response whose id has the guard's prefix),
// and its id.
func (s *Stdio) ownAnswer(line []byte) (string, bool) {
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method json.RawMessage `json:"method"`
	}
	var id string
	if json.Unmarshal(line, &msg) != nil || msg.Method != nil || json.Unmarshal(msg.ID, &id) != nil ||
		!strings.HasPrefix(id, string(s.prefix)) {
		return "", false
	}
	return id, true
}

// ownAnswerStart reports whether the start of a server line too long to
// read whole is an answer to one of the guard's own requests: its members
// up to the id say so (every SDK writes the id before the result).
func (s *Stdio) ownAnswerStart(head []byte) (string, bool) {
	if !bytes.Contains(head, s.prefix) {
		return "", false
	}
	dec := json.NewDecoder(bytes.NewReader(head))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return "", false
	}
	for dec.More() {
		t, err := dec.Token()
		key, ok := t.(string)
		if err != nil || !ok || key == "method" {
			return "", false
		}
		if key == "id" {
			var id string
			if dec.Decode(&id) != nil || !strings.HasPrefix(id, string(s.prefix)) {
				return "", false
			}
			return id, true
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return "", false
		}
	}
	return "", false
}

// deliver hands the answer to the guard's request id to its waiter, if it
// still waits (nil: the answer was too long to read).
func (s *Stdio) deliver(id string, answer []byte) {
	s.mu.Lock()
	ch, ok := s.waiters[id]
	delete(s.waiters, id)
	s.mu.Unlock()
	if ok {
		ch <- answer
	}
}
