// The stdio guard, the client's side: what the server reads.

package toolguard

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"sync"

	"github.com/toolguard/toolguard/mcpwire"
)

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
		if !r.midLine && (r.atBoundary || r.s.readsLines.Load()) {
			if req := r.s.takeRequest(); req != nil {
				r.pending = req
				continue
			}
		}
		select {
		case c := <-r.chunks:
			if c.err != nil {
				r.err = c.err
				continue
			}
			r.pending, r.midLine, r.atBoundary = c.b, !c.ends, c.boundary
		case <-r.s.injectReady:
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
		ends      uint64 // nest.ends when the last chunk was sent
	)
	send := func(c chunk) bool {
		if nest.ends != ends {
			ends = nest.ends
			s.valueEnded.Store(true) // before the server can read it
		}
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
		if wasBetween && !nest.between() && !s.readsLines.Load() {
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
	c := &stdioCall{id: bytes.Clone(m.id.raw(line)), name: string(decoded(nil, line, m.name)), inside: !wasBetween}
	if m.version.kind == kString {
		var scratch [32]byte
		if mcpwire.Sessionless(string(decoded(scratch[:0], line, m.version))) && m.meta.kind != absent {
			c.meta = forwardedMeta(m.meta.raw(line))
			c.key = string(c.meta)
		}
	}
	if len(c.id)+len(c.name)+len(c.meta) > maxTrackedCallBytes {
		s.valueEnded.Store(true) // a call the server may answer, unrecorded
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
	if _, ok := s.calls[key]; ok {
		c.inside = false // an answer to this id may be the earlier call's: it proves nothing
	}
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
	ends     uint64 // values that have ended
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
				if n.depth == 0 {
					n.ends++
				}
			case c == '\n':
				// A raw newline in a string: a syntax error to a stream
				// decoder, the end of a line to the others.
				*n = nesting{ends: n.ends}
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
				if n.depth == 0 {
					n.ends++
				}
			}
		}
	}
}

func (n *nesting) between() bool { return n.depth == 0 && !n.inString }
