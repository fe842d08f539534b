package toolguard

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
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
	// without data (no availableTools, and no suggestions, which are drawn
	// from the list), and OnReject's Rejection says why (ListErr); a list
	// that comes later is not kept. Default DefaultListTimeout (2s).
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
	// goroutines at once, and holds up only the line it is told of: the
	// guard holds no lock while it runs, so it may write to the guard.
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
//     Meanwhile every other server line keeps reaching the client (so the
//     answer comes after them, and answers waiting for one list go out in
//     no set order); past ListTimeout the answer goes out without data. A list that came in
//     time is kept, for data only, until the server announces
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
// unfinished value it sends no request (answers in that time wait for the
// value to end, at most ListTimeout, and then go out without
// data.availableTools). Until the server shows that it reads lines: when
// it answers not found to a call whose line came inside the unfinished
// value, and no value the guard did not read whole has ended in the
// client's bytes (so that value has not ended, and nothing else could
// be what was answered), the server read that line as a message of its
// own, as the TypeScript and Python SDKs read every line, and no stream
// decoder could. From then on the guard sends its requests after any whole
// client line.
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

	// valueEnded: a client JSON value has ended that the guard did not
	// read as one whole line (a value over lines, a line it cannot read),
	// or one it read but could not record: a stream decoder may answer it
	// at any time, so no answer proves the server reads lines. readsLines:
	// the server showed that it reads every line as a message (see the
	// type's comment).
	valueEnded, readsLines atomic.Bool

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

	inside bool // its line came inside an unfinished JSON value
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
