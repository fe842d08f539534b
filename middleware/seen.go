// The lists the server gave each caller, read as they passed: the only
// source of data.availableTools for an answer that replaces the server's
// own not-found answer. The guard never asks for a list.

package toolguard

import (
	"hash/maphash"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/toolguard/toolguard/internal/mcpwire"
)

// DefaultListTTL is Options.ListTTL's default: how long a list the caller
// was given is kept, unless the server's ttlMs is shorter.
const DefaultListTTL = 10 * time.Minute

// Bounds of what the guard keeps of the lists it saw.
const (
	maxSeenCallers = 10000   // callers whose list is kept (or being read)
	maxSeenNames   = 1 << 20 // names kept across all callers
	maxListNames   = 10000   // names of one list; a longer list is not kept
	maxListPages   = 1000    // pages of one list; a longer list is not kept
)

// seenLists holds, per caller key, the last whole list the server gave
// that caller (every page of it, by nextCursor), and the list being read
// page by page. A list is never shown to another key.
type seenLists struct {
	ttl time.Duration
	now func() time.Time

	mu    sync.Mutex
	lists map[string]*seenList
	runs  map[string]*listRun
	names int // names held, lists and runs together

	// How many times each session (by tag) ended (initialize, DELETE) and
	// its list changed (list_changed), for the marks of lists asked before;
	// epoch changes when the map is cleared to stay bounded, so that every
	// mark taken before no longer holds.
	counts map[uint64]sessionCounts
	epoch  uint64
	seed   maphash.Seed
}

type sessionCounts struct{ ends, changes uint64 }

// A listMark is taken as a caller's tools/list passes: its answer is kept
// only if the caller's session has not ended since (an initialize or a
// DELETE before the answer came: the answer is the session before's), and
// a page continues only a list begun with the same count of list_changed
// (a page asked before one may be of the list before).
type listMark struct {
	epoch uint64
	sessionCounts
}

// A seenList is one caller's whole list.
type seenList struct {
	sorted  []string // sorted, unique
	session uint64   // the tag of the Mcp-Session-Id it was read in (of "" for none, and over stdio)
	expires time.Time
	mark    listMark // its first page's
	// gone: dropped by a list_changed or its TTL. Never shown again, but
	// its names still say the tools exist: a call of one is never
	// answered (a tool the caller was shown may fail in not-found words).
	gone bool

	mu     sync.Mutex
	listed []byte              // data.availableTools, rendered at the first answer
	near   map[string][]string // suggestions of the names asked, at most maxNear
}

// maxNear is how many names' suggestions a list keeps: a caller that
// repeats a wrong name is answered without a new search. The list never
// changes, so neither do they.
const maxNear = 16

// A listRun is a list whose pages are being read.
type listRun struct {
	names   []string
	next    string // the cursor the next page is asked with
	session uint64
	pages   int
	ttl     time.Duration // the shortest ttlMs of its pages, or the default
	mark    listMark      // its first page's
}

func newSeenLists(ttl time.Duration) *seenLists {
	return &seenLists{ttl: ttl, now: time.Now, lists: map[string]*seenList{}, runs: map[string]*listRun{},
		counts: map[uint64]sessionCounts{}, seed: maphash.MakeSeed()}
}

// tag is what the lists know a session by: a hash of the id a caller sends
// before the server checks it (two ids of one tag only keep fewer lists).
func (s *seenLists) tag(session string) uint64 { return maphash.String(s.seed, session) }

// mark returns the mark of a tools/list of the session, as it passes.
func (s *seenLists) mark(session string) listMark {
	s.mu.Lock()
	defer s.mu.Unlock()
	return listMark{s.epoch, s.counts[s.tag(session)]}
}

// page records one page of a list the server gave the caller key, in
// answer to the caller's tools/list with the given cursor ("" for the
// first page) and mark, as docs/RULES.md §5 says pages make a list.
func (s *seenLists) page(key, session, cursor string, m listMark, p mcpwire.Page) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tag := s.tag(session)
	if m.epoch != s.epoch || m.ends != s.counts[tag].ends {
		return
	}
	run, held := s.runs[key], s.lists[key]
	switch {
	case cursor == "" && (held != nil && older(m, held.mark) || run != nil && older(m, run.mark)):
		return // asked before a list_changed that a list held was asked after
	case cursor == "":
		s.dropRun(key)
		run = &listRun{session: tag, ttl: s.ttl, mark: m}
		s.runs[key] = run
	case run != nil && older(m, run.mark):
		return // a late page of the list before a list_changed: not of this one
	case run == nil || run.next != cursor || m != run.mark: // (the key holds the session)
		s.dropRun(key)
		return
	}
	run.pages++
	if run.pages > maxListPages || len(run.names)+len(p.Names) > maxListNames {
		s.dropRun(key)
		return
	}
	run.names = append(run.names, p.Names...)
	s.names += len(p.Names)
	if p.TTLMs != nil && *p.TTLMs > 0 {
		// A stated lifetime shortens the TTL; a ttlMs of 0 does not
		// (docs/RULES.md §5).
		run.ttl = min(run.ttl, time.Duration(*p.TTLMs)*time.Millisecond)
	}
	if p.NextCursor != "" {
		run.next = p.NextCursor
		s.bound(key)
		return
	}
	delete(s.runs, key)
	s.names -= len(run.names)
	s.dropList(key)
	sorted := sortedList(run.names)
	s.lists[key] = &seenList{sorted: sorted, session: run.session, expires: s.now().Add(run.ttl), mark: run.mark}
	s.names += len(sorted)
	s.bound(key)
}

// older reports whether a page asked at m was asked before a list_changed
// that a page asked at than (a list's held, or a run's) was asked after.
func older(m, than listMark) bool {
	return than.epoch == m.epoch && m.changes < than.changes
}

// get returns the caller's list, or nil when none was seen or it has
// expired.
func (s *seenLists) get(key string) *seenList {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.lists[key]
	if l != nil && !l.gone && !s.now().Before(l.expires) {
		l = l.retired()
		s.lists[key] = l
	}
	return l
}

// retired is l gone: a new value, as l may be read without the lock.
func (l *seenList) retired() *seenList {
	return &seenList{sorted: l.sorted, session: l.session, mark: l.mark, gone: true}
}

// shown reports whether l is a list an answer shows.
func (l *seenList) shown() bool { return l != nil && !l.gone }

// dropSession drops every list read in the session, and no list asked
// before is kept: the server said its tools changed (the lists are gone,
// their names kept), or (ended) the session was deleted or initialized
// again (the lists are forgotten).
func (s *seenLists) dropSession(session string, ended bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tag := s.tag(session)
	for k, l := range s.lists {
		switch {
		case l.session != tag:
		case ended:
			s.dropList(k)
		case !l.gone:
			s.lists[k] = l.retired()
		}
	}
	for k, r := range s.runs {
		if r.session == tag {
			s.dropRun(k)
		}
	}
	if len(s.counts) >= maxSeenCallers {
		clear(s.counts)
		s.epoch++
	}
	c := s.counts[tag]
	if ended {
		c.ends++
	} else {
		c.changes++
	}
	s.counts[tag] = c
}

// forget drops what is kept for the key: a list being read, and its list,
// which is gone (its names still guard their calls).
func (s *seenLists) forget(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropRun(key)
	if l := s.lists[key]; l != nil && !l.gone {
		s.lists[key] = l.retired()
	}
}

func (s *seenLists) dropList(key string) {
	if l, ok := s.lists[key]; ok {
		s.names -= len(l.sorted)
		delete(s.lists, key)
	}
}

func (s *seenLists) dropRun(key string) {
	if r, ok := s.runs[key]; ok {
		s.names -= len(r.names)
		delete(s.runs, key)
	}
}

// bound forgets other callers' lists, expired ones first, until what is
// held is within the bounds.
func (s *seenLists) bound(keep string) {
	over := func() bool {
		return len(s.lists)+len(s.runs) > maxSeenCallers || s.names > maxSeenNames
	}
	if !over() {
		return
	}
	now := s.now()
	for k, l := range s.lists {
		if !over() {
			return
		}
		if k != keep && (l.gone || !now.Before(l.expires)) {
			s.dropList(k)
		}
	}
	for k := range s.runs {
		if !over() {
			return
		}
		if k != keep {
			s.dropRun(k)
		}
	}
	for k := range s.lists {
		if !over() {
			return
		}
		if k != keep {
			s.dropList(k)
		}
	}
}

// state says what the list says of name (nil: no list seen).
func (l *seenList) state(name string) listState {
	if l == nil {
		return listUnseen
	}
	if _, found := slices.BinarySearch(l.sorted, name); found {
		return listHas
	}
	if l.gone {
		return listUnseen
	}
	return listAbsent
}

// parts returns what an answer of g to a call of name (not in the list:
// a name it shows is never answered) shows of l: data.availableTools,
// rendered at the first answer, and the names nearest name, remembered for
// the last names asked (the list never changes, so neither do they); nil
// for no list, and for what the options hide.
func (l *seenList) parts(g *Guard, name string) (listed []byte, near []string) {
	if !l.shown() || !g.showsList() {
		return nil, nil
	}
	l.mu.Lock()
	if l.listed == nil {
		l.listed = g.listed(l.sorted)
	}
	listed = l.listed
	near, ok := l.near[name]
	l.mu.Unlock()
	if ok || g.opts.HideSuggestions || len(name) > maxNameLen {
		return listed, near
	}
	near = suggest(name, l.sorted)
	l.mu.Lock()
	if l.near == nil || len(l.near) >= maxNear {
		l.near = make(map[string][]string, maxNear)
	}
	l.near[strings.Clone(name)] = near
	l.mu.Unlock()
	return listed, near
}
