package toolguard

import (
	"hash/maphash"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// A listAnswer is what rejections need from one tool list, built once per
// list and reused while the tool set returns the same names: the sorted
// names, the data.availableTools member as bytes (capped, escaped), and,
// from the second rejection on, an index of nearest names.
type listAnswer struct {
	names  []string                 // a copy of the list it was built from, to compare
	src    atomic.Pointer[[]string] // the list as the tool set last returned it
	sorted []string
	listed []byte // `"availableTools":[...]` (and the truncation flag), nil with HideToolList

	hideSuggestions bool // Options.HideSuggestions of the guard it belongs to

	seen      atomic.Bool // answered from before: worth an index
	indexOnce sync.Once
	index     nameIndex
	memo      [memoSize]atomic.Pointer[memoized] // recent names' suggestions
}

// listCacheSize is how many lists a guard keeps answers for: enough for a
// few kinds of caller seen in turn (with and without a capability, say).
const listCacheSize = 4

// listCache holds the answers of the last lists rejected from.
type listCache struct {
	entries [listCacheSize]atomic.Pointer[listAnswer]
	next    atomic.Uint32
}

// cachedAnswer returns the cached answer parts for names, or nil.
func (g *Guard) cachedAnswer(names []string) *listAnswer {
	for i := range g.lists.entries {
		la := g.lists.entries[i].Load()
		if la == nil {
			continue
		}
		if !la.returnedAgain(names) {
			if !sameNames(la.names, names) {
				continue
			}
			// The same names in another slice (a tool set that read its
			// list again): the next rejection matches this slice by
			// identity instead of comparing every name.
			src := names
			la.src.Store(&src)
		}
		if !la.seen.Load() {
			la.seen.Store(true)
		}
		return la
	}
	return nil
}

// addAnswer builds the answer parts for names and keeps them for the next
// rejection.
func (g *Guard) addAnswer(names []string) *listAnswer {
	la := g.buildAnswer(names)
	g.lists.entries[g.lists.next.Add(1)%listCacheSize].Store(la)
	return la
}

// sameNames reports whether a and b hold the same strings in order.
func sameNames(a, b []string) bool { return slices.Equal(a, b) }

// returnedAgain reports whether names is the very slice the tool set last
// returned for la (the same backing array and length), still with the
// same first and last names as la's copy: a tool set that returns the
// list it returned before (StaticTools' slice) is matched without
// comparing every name. ToolSet.List's contract forbids changing a list
// after returning it.
func (la *listAnswer) returnedAgain(names []string) bool {
	p := la.src.Load()
	if p == nil {
		return false // an answer built for no list (noList)
	}
	n, src := len(names), *p
	return n > 0 && n == len(src) && &names[0] == &src[0] && names[0] == la.names[0] && names[n-1] == la.names[n-1]
}

// sortedList is the names of a tools/list read whole, sorted and unique: an
// empty list, not nil, for a server without tools (it is kept and shown
// as any other).
func sortedList(names []string) []string {
	if names == nil {
		return []string{}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

func (g *Guard) buildAnswer(names []string) *listAnswer {
	own := slices.Clone(names) // the tool set may reuse its slice
	sorted := own
	if !sortedUnique(own) {
		sorted = slices.Clone(own)
		slices.Sort(sorted)
		sorted = slices.Compact(sorted)
	}
	la := &listAnswer{names: own, sorted: sorted, hideSuggestions: g.opts.HideSuggestions}
	la.src.Store(&names)
	if !g.opts.HideToolList {
		listed := sorted[:min(len(sorted), g.opts.ToolListLimit)]
		la.listed = appendStrings(append([]byte(nil), `"availableTools":`...), listed)
		if len(listed) < len(sorted) {
			la.listed = append(la.listed, `,"availableToolsTruncated":true`...)
		}
	}
	return la
}

// remembered returns the memo of name (at most maxNameLen bytes), made
// now if the slot of its hash holds another name.
func (la *listAnswer) remembered(name string) *memoized {
	slot := &la.memo[maphash.String(memoSeed, name)%memoSize]
	if m := slot.Load(); m != nil && m.name == name {
		return m
	}
	var out []string
	if !la.seen.Load() {
		out = suggest(name, la.sorted)
	} else {
		la.indexOnce.Do(func() { la.index = newNameIndex(la.sorted) })
		out = la.index.suggest(name)
	}
	m := &memoized{name: strings.Clone(name), out: out}
	m.escaped = appendEscaped(nil, name) // short names are never cut
	if len(out) > 0 {
		m.suggestions = appendStrings(append([]byte(nil), `"suggestions":`...), out)
		m.didYouMean = appendDidYouMean(nil, out)
	}
	slot.Store(m)
	return m
}

// memoSize is how many names' suggestions a list keeps (direct-mapped: a
// name takes the slot of its hash, replacing the one there).
const memoSize = 64

var memoSeed = maphash.MakeSeed()

// memoized is the answer of suggest for one name, and its parts of a
// rejection as bytes. No field changes once stored.
type memoized struct {
	name        string
	out         []string
	escaped     []byte // name escaped for the message
	suggestions []byte // `"suggestions":[...]`, nil when out is empty
	didYouMean  []byte // `. Did you mean a or b?`, escaped for the message; nil when out is empty
}

// appendDidYouMean appends the sentence of the message that names the
// nearest names: ". Did you mean a, b or c?", each name escaped for a
// JSON string.
func appendDidYouMean(b []byte, names []string) []byte {
	b = append(b, ". Did you mean "...)
	for i, n := range names {
		switch {
		case i == 0:
		case i == len(names)-1:
			b = append(b, " or "...)
		default:
			b = append(b, ", "...)
		}
		b = appendEscaped(b, n)
	}
	return append(b, '?')
}

// A nameIndex holds the names of a sorted list normalized (lower case, no
// separators) and bucketed by normalized length, so that suggestions only
// look at names whose length is within the edit limit. Each bucket also
// holds, per name, the counts of its runes by low byte, so that the bag
// distance is a sum over a few precomputed pairs.
type nameIndex struct {
	byLen [2*maxNameLen + 1]lenBucket
}

type lenBucket struct {
	names []indexedName
	// The byte counts of names[i] are keys[off[i]:off[i+1]] and
	// counts[off[i]:off[i+1]]: each low byte once, with its count.
	keys   []byte
	counts []int16
	off    []int32
}

type indexedName struct {
	name string
	norm []rune
	pos  int // position in the sorted list, which orders ties
}

func newNameIndex(sorted []string) nameIndex {
	var idx nameIndex
	var buf [2 * maxNameLen]rune
	for i := range idx.byLen {
		idx.byLen[i].off = []int32{0}
	}
	for i, n := range sorted {
		if len(n) > 2*maxNameLen {
			continue // as suggest: beyond this no name is near
		}
		norm := normalize(n, buf[:0])
		b := &idx.byLen[len(norm)]
		b.names = append(b.names, indexedName{name: n, norm: slices.Clone(norm), pos: i})
		var count [256]int16
		for _, r := range norm {
			count[byte(r)]++
		}
		for _, r := range norm {
			if c := count[byte(r)]; c > 0 {
				b.keys = append(b.keys, byte(r))
				b.counts = append(b.counts, c)
				count[byte(r)] = 0
			}
		}
		b.off = append(b.off, int32(len(b.keys)))
	}
	return idx
}

// suggest returns what suggest(name, sorted) returns for the list the
// index was built from.
func (idx *nameIndex) suggest(name string) []string {
	var sc scratch
	var bag [256]int16
	want, limit, ok := prepareQuery(name, &sc, &bag)
	if !ok {
		return nil
	}
	pat := newPattern(want)
	var cands []cand
	for l := max(0, len(want)-limit); l <= min(2*maxNameLen, len(want)+limit); l++ {
		b := &idx.byLen[l]
		// A name passes the bag filter when it shares at least need
		// runes (by low byte) with want: bagDistance is
		// max(l, len(want)) minus the shared count.
		need := int32(max(l, len(want)) - limit)
		for i := range b.names {
			shared := int32(0)
			keys, counts := b.keys[b.off[i]:b.off[i+1]], b.counts[b.off[i]:b.off[i+1]]
			for j, k := range keys {
				shared += int32(min(bag[k], counts[j]))
			}
			if shared < need {
				continue
			}
			in := &b.names[i]
			var d int
			if pat.ok {
				d = pat.distance(in.norm, limit)
			} else {
				d = osaDistance(want, in.norm, limit, &sc.osa)
			}
			if d <= limit {
				cands = append(cands, cand{in.name, d, in.pos})
			}
		}
	}
	return best(cands)
}

// A pattern is a query prepared for the bit-parallel edit distance of
// Myers (1999), in the formulation of Hyyrö (2003) that counts a swap of
// two adjacent runes as one edit: one bit per query rune, one step per rune
// of the other name. It serves ASCII queries of at most 64 runes (ok);
// others use osaDistance.
type pattern struct {
	peq [utf8.RuneSelf]uint64 // bit i set where the query's rune i is c
	m   int
	ok  bool
}

func newPattern(want []rune) (p pattern) {
	if len(want) == 0 || len(want) > 64 {
		return p
	}
	for i, r := range want {
		if r >= utf8.RuneSelf {
			return pattern{}
		}
		p.peq[r] |= 1 << i
	}
	p.m, p.ok = len(want), true
	return p
}

// distance is osaDistance(query, b, k): the distance when it is at most
// k, else k+1. It tracks the last column of the dynamic programming table
// as bit vectors of vertical deltas (vp, vn: +1, -1) and the diagonal
// zero deltas d0, whose last value and the last match vector tell where a
// swap ends; it stops once the distance can no longer come back within k
// (it falls by at most one per remaining rune).
func (p *pattern) distance(b []rune, k int) int {
	vp, vn := ^uint64(0), uint64(0)
	var d0, lastEq uint64
	score := p.m
	top := uint64(1) << (p.m - 1)
	for j, r := range b {
		var eq uint64
		if r < utf8.RuneSelf {
			eq = p.peq[r]
		}
		swap := ((^d0 & eq) << 1) & lastEq
		d0 = (((eq & vp) + vp) ^ vp) | eq | vn | swap
		hp := vn | ^(d0 | vp)
		hn := d0 & vp
		if hp&top != 0 {
			score++
		} else if hn&top != 0 {
			score--
		}
		hp = hp<<1 | 1 // the top row grows by one per rune
		hn <<= 1
		vp = hn | ^(d0 | hp)
		vn = hp & d0
		lastEq = eq
		if score-(len(b)-1-j) > k {
			return k + 1
		}
	}
	if score > k {
		return k + 1
	}
	return score
}
