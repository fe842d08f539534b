// The stdio guard's own requests: the caller's tools/list on the stream, and the answer made from it.

package toolguard

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/toolguard/toolguard/mcpwire"
)

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
	s.wakeReader()
	return id, ch
}

// wakeReader tells a Read waiting for the client that a request of the
// guard's may go.
func (s *Stdio) wakeReader() {
	select {
	case s.injectReady <- struct{}{}:
	default:
	}
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
			return nil, fmt.Errorf("%w (%v)", ErrListTimeout, s.opts.ListTimeout)
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
			return sortedList(names), nil
		}
		cursor = p.NextCursor
	}
}

// needsList reports whether answers show anything of a list.
func (s *Stdio) needsList() bool { return !s.opts.HideToolList || !s.opts.HideSuggestions }

// answer builds the guard's answer to c, whose server answered not found,
// from names (nil with listErr when there is no list), and the Rejection
// to tell OnReject of (see tell).
func (s *Stdio) answer(c *stdioCall, names []string, listErr error) ([]byte, *Rejection) {
	la := noList
	if listErr == nil && names != nil {
		la = s.guard.answerFor(names)
	}
	rej := s.guard.unknownTool(c.id, c.name, la, 0, false) // no HTTP status over stdio
	rej.Translated = true
	rej.ListErr = listErr
	s.rejections.Add(1)
	return append(append(make([]byte, 0, len(rej.body)+1), rej.body...), '\n'), rej
}

// tell tells OnReject of rej, before its answer is written. It is called
// with no lock held: OnReject may take its time, or write to the guard.
func (s *Stdio) tell(rej *Rejection) {
	if s.opts.OnReject != nil {
		s.opts.OnReject(rej)
	}
}

// translate writes the answer to c once the caller's list has come (or
// has not, within ListTimeout).
func (s *Stdio) translate(c *stdioCall) {
	defer s.translating.Done()
	names, err := s.callerList(c)
	line, rej := s.answer(c, names, err)
	s.tell(rej)
	s.wr.writeOwn(line)
}
