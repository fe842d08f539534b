// The stdio guard, the server's side: what the client reads.

package toolguard

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"sync"
)

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
		out, rej := w.s.serverLine(line)
		if rej != nil && w.s.opts.OnReject != nil {
			// OnReject is user code: not under the lock (it may take its
			// time, or write to the guard itself). This is a line's end,
			// so another writer may write whole lines meanwhile.
			w.mu.Unlock()
			w.s.tell(rej)
			w.mu.Lock()
			w.awaitLineEnd() // another writer's long line
			if w.streaming || w.closed {
				return 0, errWriterClosed // closed meanwhile, inside that line
			}
		}
		if out != nil {
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

// awaitLineEnd waits, w.mu held, until no server line is being handed on
// in pieces, or the output is closing.
func (w *stdioWriter) awaitLineEnd() {
	for w.streaming && !w.closing {
		w.cond.Wait()
	}
}

// writeOwn writes one line of the guard's between two server lines.
func (w *stdioWriter) writeOwn(line []byte) {
	w.mu.Lock()
	w.awaitLineEnd()
	// out closed or broken: nobody reads it any more.
	lost := w.streaming && !w.closed && w.err == nil
	if !w.streaming && !w.closed && w.err == nil {
		w.write(line)
	}
	w.mu.Unlock()
	if lost {
		w.s.untracked("the server's output ended inside a line: an answer of the guard's could not be written")
	}
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
// server did not find, with its Rejection for OnReject. It starts a
// translation that has to wait for a list.
func (s *Stdio) serverLine(line []byte) ([]byte, *Rejection) {
	if s.fetches.Load() > 0 && bytes.Contains(line, s.prefix) {
		if id, own := s.ownAnswer(line); own {
			s.deliver(id, slices.Clone(line))
			return nil, nil
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
		return line, nil
	}
	id := replyID(line)
	if id == nil {
		return line, nil
	}
	c := s.answered(id)
	if c == nil || !IsNotFound(line, c.id, c.name) {
		return line, nil
	}
	if c.inside && !s.valueEnded.Load() && !s.readsLines.Load() {
		// The server answered a line that came inside an unfinished value,
		// which has not ended: it reads lines. A request of the guard's
		// waiting for the value to end may go now.
		s.readsLines.Store(true)
		s.wakeReader()
	}
	if !s.needsList() {
		return s.answer(c, nil, nil)
	}
	if names, ok := s.cachedList(c.key); ok {
		return s.answer(c, names, nil)
	}
	s.translating.Add(1)
	go s.translate(c)
	return nil, nil
}

// answerKeys are the members replyID looks for.
var answerKeys = []string{"id", "method"}

// replyID returns the raw id of a JSON-RPC response line (one without a
// method) in the strict subset, or nil. It only picks the answer's call:
// IsNotFound then reads the line whole and checks the id again. A line
// outside the subset is not translated.
func replyID(line []byte) []byte {
	s := scanner{b: line}
	s.ws()
	if s.i >= len(line) || line[s.i] != '{' {
		return nil
	}
	var id span
	ok := s.members(answerKeys, func(k int) bool {
		switch k {
		case 0:
			return s.capture(&id)
		case 1:
			return false // a request or notification of the server's
		}
		return s.value()
	})
	if !ok || id.kind == absent {
		return nil
	}
	return id.raw(line)
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
