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
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolguard/toolguard/internal/mcpwire"
)

// StdioOptions configures a stdio guard ([NewStdio]). Every zero field has a
// default.
type StdioOptions struct {
	// Tools, if set, is a hint asked before the server: Lookup answering
	// Present or Unsure lets a call through at once, without asking the
	// server. A rejection is always confirmed by a tools/list asked on the
	// stream after the call arrived, whatever Tools says: over stdio only
	// the server knows what the session it carries may call. The request
	// the tool set is given is synthetic: method POST, URL "stdio:", the
	// line as its body, Content-Type application/json and no other header.
	// Tool sets that read the caller from headers (Discover,
	// toolguardmcpgo, toolguardgosdk) do not apply over stdio.
	Tools ToolSet

	// MaxLineBytes is the longest client line the guard reads whole. A
	// longer line passes through, streamed, never held whole. Default
	// DefaultMaxBodyBytes (4 MiB).
	MaxLineBytes int

	// MaxListBytes is the longest server line the guard reads whole to find
	// the answers to its own tools/list requests. Longer lines are
	// forwarded as they come. Default 8 MiB.
	MaxListBytes int

	// MaxWait bounds how long a tools/call is held while the guard waits
	// for the server's tools/list; past it the call passes through and the
	// late answer is dropped when it comes. Default 2s.
	MaxWait time.Duration

	// MaxPages bounds how many nextCursor pages are followed; a longer list
	// is "cannot tell". Default 50.
	MaxPages int

	// ToolListLimit, HideToolList, HideSuggestions and SafeIntegerIDs mean
	// what they mean in [Options].
	ToolListLimit   int
	HideToolList    bool
	HideSuggestions bool
	SafeIntegerIDs  bool

	// OnReject, if set, is told of every rejection, before it is written.
	OnReject func(rej *Rejection)

	// OnInactive, if set, is told why the guard leaves tools/call lines
	// to the server: once per session when a 2025-era call comes before
	// the handshake is done, and once when the guard stops answering for
	// the rest of the stream (a line that is not certainly one JSON-RPC
	// message, or longer than MaxLineBytes).
	OnInactive func(reason string)
}

// A Stdio guards one MCP stdio stream: the client's messages on one side
// (in, out) and the server on the other ([Stdio.Reader], [Stdio.Writer]).
//
// A client line that is a single tools/call for a tool the server does not
// have is answered on out with the same JSON-RPC -32602 error as over HTTP
// and never reaches the server. Every other line reaches the server byte for
// byte and in order, and every line of the server reaches out byte for byte
// and in order, except the answers to the guard's own requests. The guard's
// own writes go to out between whole lines of the server's.
//
// To know the tools, the guard asks the server on the same stream, as the
// caller: a tools/list after the client's initialize handshake (2025 era),
// or carrying the call's own params._meta (2026-07-28, without its
// progressToken). Its request ids are strings with a random prefix the
// client never sees; neither the requests nor their answers reach the
// client. The list is kept until the server announces
// notifications/tools/list_changed or answers a new initialize, and only
// ever lets known names through at once: a rejection is always confirmed
// by a list asked after the call arrived, while the call and everything
// after it wait (at most MaxWait).
//
// It answers only a line that is one JSON object in the strict subset
// (as over HTTP) followed directly by "\n" or "\r\n". Once a line is not
// certainly one JSON-RPC request, notification or response (blank lines
// aside), or is longer than MaxLineBytes, it answers nothing more on the
// stream: go-sdk decodes the stream rather than lines, and after such a
// line it has ended the session or reads the next line as part of a
// value. It answers a 2025-era call only once the handshake is done: the
// server has answered the client's initialize successfully and the client
// has sent notifications/initialized, in either order (a client may send
// it before the answer has come).
//
// A Stdio is for one stream. Its Reader is read by one goroutine at a time;
// its Writer may be written concurrently.
type Stdio struct {
	opts   StdioOptions
	guard  *Guard // builds rejections
	prefix []byte // "toolguard-<random>-", the prefix of every own request id
	seq    atomic.Int64

	fetches, rejections atomic.Int64
	waiting             atomic.Int64 // len(waiters), read without the lock

	rd stdioReader
	wr stdioWriter

	mu      sync.Mutex
	hs      handshake
	lists   map[string]map[string]struct{} // known names per caller (_meta), "" for the 2025 session
	waiters map[string]chan []byte         // own request id → its answer line
	outDone chan struct{}                  // closed when the server's output is closed
}

// handshake is the 2025-era handshake of the current session, a set of
// bits: both make it done, in either order. A client initialize request
// starts a new session and clears them.
type handshake uint8

const (
	hsNone        handshake = 0
	hsAnswered    handshake = 1 << 0 // the server answered initialize successfully
	hsInitialized handshake = 1 << 1 // the client sent notifications/initialized
	hsReady                 = hsAnswered | hsInitialized
)

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
		{"MaxLineBytes", opts.MaxLineBytes < 0}, {"MaxListBytes", opts.MaxListBytes < 0},
		{"MaxWait", opts.MaxWait < 0}, {"MaxPages", opts.MaxPages < 0},
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
	if opts.MaxListBytes == 0 {
		opts.MaxListBytes = 8 << 20
	}
	if opts.MaxWait == 0 {
		opts.MaxWait = 2 * time.Second
	}
	if opts.MaxPages == 0 {
		opts.MaxPages = 50
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
		prefix:  []byte("toolguard-" + hex.EncodeToString(random[:]) + "-"),
		lists:   map[string]map[string]struct{}{},
		waiters: map[string]chan []byte{},
		outDone: make(chan struct{}),
	}
	s.rd = stdioReader{s: s, in: in, br: bufio.NewReaderSize(in, 64<<10), closed: make(chan struct{})}
	s.wr = stdioWriter{s: s, out: out}
	s.wr.cond.L = &s.wr.mu
	return s, nil
}

// Reader returns what the server reads: the client's lines, less the calls
// the guard answered, plus the guard's own tools/list requests. Close
// closes in when it is an io.Closer.
func (s *Stdio) Reader() io.ReadCloser { return &s.rd }

// Writer returns what the server writes to: its lines reach out, less the
// answers to the guard's own requests. Close forwards an unfinished last
// line and closes out when it is an io.Closer.
func (s *Stdio) Writer() io.WriteCloser { return &s.wr }

// Fetches reports how many tools/list requests the guard has sent.
func (s *Stdio) Fetches() int64 { return s.fetches.Load() }

// Rejections reports how many calls the guard has answered.
func (s *Stdio) Rejections() int64 { return s.rejections.Load() }

// ---- the client's side: what the server reads ----

type stdioReader struct {
	s  *Stdio
	in io.Reader
	br *bufio.Reader

	pending   []byte // bytes to hand to the server next
	long      []byte // a line longer than the bufio buffer, gathered
	streaming bool   // handing on the rest of a line longer than MaxLineBytes
	err       error  // the error that ended in, returned once pending is empty
	hold      *hold  // a tools/call waiting for the server's list
	// lost is set once a line was not certainly one JSON-RPC message that
	// every server reads and goes on (or was too long to tell): a server
	// that decodes the stream rather than lines (go-sdk) has then ended the
	// session, or reads the next line as part of a value, so the guard
	// answers nothing more on this stream.
	lost bool
	// toldEarly: OnInactive was told of a call before the handshake, in
	// this session.
	toldEarly bool

	closeOnce sync.Once
	closed    chan struct{}
}

// hold is a tools/call held back while the server is asked for its list.
type hold struct {
	line     []byte
	id       []byte // the raw id, echoed in a rejection
	name     string
	modern   bool
	key      string // the caller: "" in the 2025 era, the _meta otherwise
	meta     []byte // the _meta to send, nil in the 2025 era
	names    []string
	pages    int
	reqID    string
	answer   chan []byte
	deadline time.Time
}

func (r *stdioReader) Read(p []byte) (int, error) {
	for {
		if len(r.pending) > 0 {
			n := copy(p, r.pending)
			r.pending = r.pending[n:]
			return n, nil
		}
		if r.hold != nil {
			r.wait()
			continue
		}
		if r.err != nil {
			return 0, r.err
		}
		select {
		case <-r.closed:
			return 0, errReaderClosed
		default:
		}
		frag, err := r.br.ReadSlice('\n')
		if r.streaming {
			r.pending = frag
			r.streaming = err == bufio.ErrBufferFull
			if err != nil && err != bufio.ErrBufferFull {
				r.err = err
			}
			continue
		}
		if err == bufio.ErrBufferFull {
			r.long = append(r.long, frag...)
			if len(r.long) > r.s.opts.MaxLineBytes {
				r.pending, r.streaming = r.long, true
				r.long = r.long[:0:0]
				r.lose(errLineTooLong)
			}
			continue
		}
		line := frag
		if len(r.long) > 0 {
			line = append(r.long, frag...)
			r.long = nil // handed on as pending: never reused
		}
		if err != nil {
			r.err = err
			r.pending = line // an unfinished last line: no server reads it as a message
			continue
		}
		r.line(line)
	}
}

var errReaderClosed = errors.New("toolguard: stdio reader closed")

func (r *stdioReader) Close() error {
	r.closeOnce.Do(func() { close(r.closed) })
	if c, ok := r.in.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// line decides one whole client line (its newline included): it becomes
// pending, or a hold, or a rejection written on out.
func (r *stdioReader) line(line []byte) {
	s := r.s
	r.pending = line
	if len(line) > s.opts.MaxLineBytes {
		r.lose(errLineTooLong)
		return
	}
	if r.lost {
		return
	}
	c := readStdioCall(line)
	if !c.message && !blank(line) && !responseLine(line) {
		r.lose("a client line is not certainly one JSON-RPC message (a server that decodes the stream, as go-sdk does, ends the session or misreads what follows)")
		return
	}
	switch {
	case c.initialize:
		s.mu.Lock()
		s.hs = hsNone // a new session: its own handshake
		s.mu.Unlock()
		r.toldEarly = false
		return
	case c.initialized:
		s.mu.Lock()
		s.hs |= hsInitialized
		s.mu.Unlock()
		return
	case !c.call:
		return
	}
	if s.opts.SafeIntegerIDs && c.intID && !jsSafeInteger(c.id) {
		return
	}
	var meta []byte
	key := ""
	if c.modern {
		// The call's own _meta, as over HTTP (see forwardedMeta); the
		// caller is known by its bytes.
		if meta = forwardedMeta(paramsMeta(line)); meta == nil {
			return
		}
		key = string(meta)
	} else {
		s.mu.Lock()
		ready := s.hs == hsReady
		s.mu.Unlock()
		if !ready {
			// The handshake is not done: the server may refuse the call
			// before any lookup.
			if !r.toldEarly && s.opts.OnInactive != nil {
				r.toldEarly = true
				s.opts.OnInactive("a tools/call came before the initialize handshake was done (the server's initialize answer and the client's notifications/initialized): it is left to the server")
			}
			return
		}
	}
	s.mu.Lock()
	_, known := s.lists[key][string(c.name)]
	s.mu.Unlock()
	if known {
		return
	}
	name := string(c.name)
	if s.opts.Tools != nil && s.opts.Tools.Lookup(syntheticRequest(line), name) != Absent {
		return
	}
	h := &hold{line: line, id: c.id, name: name, modern: c.modern, meta: meta, key: key}
	h.deadline = time.Now().Add(s.opts.MaxWait)
	r.pending = s.ask(h, "")
	r.hold = h
}

const errLineTooLong = "a client line is longer than MaxLineBytes (a line the guard cannot read whole: it cannot tell where the next message starts)"

// lose makes the guard answer nothing more on the stream, and says why
// once.
func (r *stdioReader) lose(reason string) {
	if r.lost {
		return
	}
	r.lost = true
	if r.s.opts.OnInactive != nil {
		r.s.opts.OnInactive(reason + "; no more answers on this stream")
	}
}

// wait waits for the answer to the held call's current tools/list request
// and then releases the call, rejects it, or asks for the next page.
func (r *stdioReader) wait() {
	s, h := r.s, r.hold
	timer := time.NewTimer(time.Until(h.deadline))
	defer timer.Stop()
	var answer []byte
	select {
	case answer = <-h.answer:
	case <-timer.C:
	case <-s.outDone:
	case <-r.closed:
	}
	names, cursor, ok := listPage(answer, h.reqID)
	if !ok {
		r.release()
		return
	}
	h.names = append(h.names, names...)
	if cursor != "" {
		if h.pages++; h.pages >= s.opts.MaxPages {
			r.release()
			return
		}
		r.pending = s.ask(h, cursor)
		return
	}
	slices.Sort(h.names)
	list := slices.Compact(h.names)
	set := make(map[string]struct{}, len(list))
	for _, n := range list {
		set[n] = struct{}{}
	}
	s.mu.Lock()
	if len(s.lists) >= 64 {
		clear(s.lists)
	}
	s.lists[h.key] = set
	s.mu.Unlock()
	if _, ok := set[h.name]; ok {
		r.release()
		return
	}
	r.hold = nil
	rej := s.guard.newUnknownTool(h.id, h.name, list, 0, false) // no HTTP status over stdio
	if s.opts.OnReject != nil {
		s.opts.OnReject(rej)
	}
	s.rejections.Add(1)
	s.wr.answer(append(append(make([]byte, 0, len(rej.body)+1), rej.body...), '\n'))
}

// release hands the held call on to the server.
func (r *stdioReader) release() {
	r.pending = r.hold.line
	r.hold = nil
}

// ask registers a tools/list request for the held call and returns its line.
func (s *Stdio) ask(h *hold, cursor string) []byte {
	id := string(s.prefix) + strconv.FormatInt(s.seq.Add(1), 10)
	h.reqID, h.answer = id, make(chan []byte, 1)
	s.mu.Lock()
	s.waiters[id] = h.answer
	s.waiting.Add(1)
	s.mu.Unlock()
	s.fetches.Add(1)
	return append(mcpwire.ListRequest(id, cursor, h.meta), '\n')
}

// listPage reads one tools/list answer to the request id: the names, the
// next cursor, and ok false for anything but a complete page.
func listPage(answer []byte, id string) (names []string, cursor string, ok bool) {
	if answer == nil {
		return nil, "", false
	}
	page, err := decodeListReply(answer, false, id) // names only, as Discover reads
	if err != nil {
		return nil, "", false
	}
	return page.Names, page.NextCursor, true
}

// stdioCall is what the guard needs of one client line.
type stdioCall struct {
	// message: a request or notification inside the strict subset, ending
	// the line, that every SDK decodes as one (jsonrpc "2.0", a string
	// method, an id absent, a string or an integer).
	message     bool
	initialize  bool // an initialize request
	initialized bool // a notifications/initialized notification
	call        bool // a tools/call the guard may answer
	id          []byte
	intID       bool
	name        []byte // decoded; may share the line's bytes
	modern      bool   // its _meta names protocol 2026-07-28 or later
}

// readStdioCall reads a client line with the strict reader. call is true
// only for a request the guard may answer: a single tools/call inside the
// strict subset, with a string or integer id, params an object, a string
// name, and a _meta protocol version either absent or a 2026-07-28 one.
func readStdioCall(line []byte) stdioCall {
	var c stdioCall
	m := readMessage(line)
	if !m.strict || !endsLine(line) || m.jsonrpc.kind != kString || !strEquals(line, m.jsonrpc, "2.0") ||
		m.method.kind != kString || (m.id.kind != absent && m.id.kind != kString && m.id.kind != kInt) {
		return c
	}
	c.message = true
	if m.id.kind == absent {
		c.initialized = strEquals(line, m.method, "notifications/initialized")
		return c
	}
	if strEquals(line, m.method, "initialize") {
		c.initialize = true
		return c
	}
	if (m.id.kind != kString && m.id.kind != kInt) || !strEquals(line, m.method, "tools/call") ||
		!m.paramsObject || m.name.kind != kString {
		return c
	}
	switch m.version.kind {
	case absent:
	case kString:
		var scratch [32]byte
		if !mcpwire.IsModern(string(decoded(scratch[:0], line, m.version))) {
			return c // a version the guard cannot place: the server's to answer
		}
		c.modern = true
	default:
		return c
	}
	c.name = decoded(nil, line, m.name)
	c.id, c.intID, c.call = m.id.raw(line), m.id.kind == kInt, true
	return c
}

// endsLine reports whether the line's JSON value ends right before its
// "\n" or "\r\n". go-sdk refuses anything else after a value (a space, say)
// and ends the session, where line-based servers read the message.
func endsLine(line []byte) bool {
	line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
	return len(line) > 0 && (line[len(line)-1] == '}' || line[len(line)-1] == ']')
}

func blank(line []byte) bool { return len(bytes.Trim(line, " \t\r\n")) == 0 }

// responseLine reports whether a line is certainly one JSON-RPC response
// (the client's answer to a server request) that every SDK decodes as one:
// an object of jsonrpc "2.0", a string or integer id, and one of result and
// error, no other member and no member twice, ending right before the
// line's end.
func responseLine(line []byte) bool {
	if !endsLine(line) || len(line) > 1<<20 {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		key, ok := t.(string)
		if err != nil || !ok || seen[key] {
			return false
		}
		seen[key] = true
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return false
		}
		switch key {
		case "jsonrpc":
			if string(v) != `"2.0"` {
				return false
			}
		case "id":
			if len(v) == 0 || (v[0] != '"' && bytes.ContainsAny(v, ".eE")) || v[0] == '{' || v[0] == '[' || v[0] == 'n' || v[0] == 't' || v[0] == 'f' {
				return false
			}
		case "result", "error":
		default:
			return false
		}
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return false
	}
	if _, err := dec.Token(); err != io.EOF {
		return false
	}
	return seen["jsonrpc"] && seen["id"] && seen["result"] != seen["error"]
}

func syntheticRequest(line []byte) *http.Request {
	r, _ := http.NewRequest(http.MethodPost, "stdio:", bytes.NewReader(line))
	r.Header.Set("Content-Type", "application/json")
	return r
}

// ---- the server's side: what the server writes ----

type stdioWriter struct {
	s   *Stdio
	out io.Writer

	mu        sync.Mutex
	cond      sync.Cond // signalled when a long line ends or the writer closes
	buf       []byte    // an unfinished server line
	streaming bool      // forwarding a line longer than MaxListBytes: out is mid-line
	closed    bool
	err       error // the first error out returned
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
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if w.streaming {
			end := len(p)
			if i >= 0 {
				end = i + 1
				w.streaming = false
				w.cond.Broadcast()
			}
			if err := w.write(p[:end]); err != nil {
				return 0, err
			}
			p = p[end:]
			continue
		}
		if i < 0 {
			if len(w.buf)+len(p) > w.s.opts.MaxListBytes {
				if err := w.write(append(w.buf, p...)); err != nil {
					return 0, err
				}
				w.buf, w.streaming = w.buf[:0], true
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
		if w.s.serverLine(line) {
			if err := w.write(line); err != nil {
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

// answer writes one line of the guard's own between two server lines.
func (w *stdioWriter) answer(line []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.streaming && !w.closed {
		w.cond.Wait()
	}
	if w.closed || w.err != nil {
		return // out is closed or broken: nobody reads it any more
	}
	w.write(line)
}

// Close forwards an unfinished last line as it is, closes out if it is an
// io.Closer, and releases any call held for the server's list.
func (w *stdioWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	w.cond.Broadcast()
	close(w.s.outDone)
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
	listChanged = []byte(`notifications/tools/list_changed`)
	serverInfo  = []byte(`serverInfo`)
)

// serverLine looks at one whole server line and reports whether it goes to
// the client: answers to the guard's own requests do not. It notes
// initialize answers and list_changed announcements.
func (s *Stdio) serverLine(line []byte) (forward bool) {
	if s.waiting.Load() > 0 && bytes.Contains(line, s.prefix) {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method json.RawMessage `json:"method"`
		}
		var id string
		if json.Unmarshal(line, &msg) == nil && msg.Method == nil && json.Unmarshal(msg.ID, &id) == nil {
			s.mu.Lock()
			ch, ok := s.waiters[id]
			if ok {
				delete(s.waiters, id)
				s.waiting.Add(-1)
			}
			s.mu.Unlock()
			if ok {
				ch <- slices.Clone(line)
				return false
			}
		}
	}
	if bytes.Contains(line, listChanged) {
		var msg struct {
			Method string `json:"method"`
		}
		if json.Unmarshal(line, &msg) == nil && msg.Method == "notifications/tools/list_changed" {
			s.mu.Lock()
			clear(s.lists)
			s.mu.Unlock()
		}
	}
	if bytes.Contains(line, serverInfo) {
		var msg struct {
			Method json.RawMessage `json:"method"`
			Result *struct {
				ProtocolVersion *string         `json:"protocolVersion"`
				ServerInfo      json.RawMessage `json:"serverInfo"`
			} `json:"result"`
		}
		if json.Unmarshal(line, &msg) == nil && msg.Method == nil && msg.Result != nil &&
			msg.Result.ProtocolVersion != nil && len(msg.Result.ServerInfo) > 0 {
			s.mu.Lock()
			s.hs |= hsAnswered
			clear(s.lists) // a new session: what was known belongs to the old one
			s.mu.Unlock()
		}
	}
	return true
}
