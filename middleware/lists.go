package toolguard

import (
	"slices"
	"sync"
	"sync/atomic"
)

// A listAnswer is what rejections need from one tool list, built once per
// list and reused while the tool set returns the same names: the sorted
// names, the data.availableTools member as bytes (capped, escaped), and,
// from the second rejection on, an index of nearest names.
type listAnswer struct {
	names  []string // a copy of the list it was built from, to compare
	sorted []string
	listed []byte // `"availableTools":[...]` (and the truncation flag), nil with HideToolList

	seen      atomic.Bool // answered from before: worth an index
	indexOnce sync.Once
	index     nameIndex
}

// listCacheSize is how many lists a guard keeps answers for: enough for a
// few kinds of caller seen in turn (with and without a capability, say).
const listCacheSize = 4

// listCache holds the answers of the last lists rejected from.
type listCache struct {
	entries [listCacheSize]atomic.Pointer[listAnswer]
	next    atomic.Uint32
}

// answerFor returns the answer parts for names: those of a cached list with
// the same names, else new ones, kept for the next rejection. The names are
// compared with a private copy, so a tool set that reuses its slice for
// another list is never answered with the old one; comparing the same
// strings costs little (equal string headers compare without reading the
// bytes).
func (g *Guard) answerFor(names []string) *listAnswer {
	for i := range g.lists.entries {
		if la := g.lists.entries[i].Load(); la != nil && slices.Equal(la.names, names) {
			la.seen.Store(true)
			return la
		}
	}
	la := g.buildAnswer(names)
	g.lists.entries[g.lists.next.Add(1)%listCacheSize].Store(la)
	return la
}

func (g *Guard) buildAnswer(names []string) *listAnswer {
	own := slices.Clone(names) // the tool set may reuse its slice
	sorted := own
	if !sortedUnique(own) {
		sorted = slices.Clone(own)
		slices.Sort(sorted)
		sorted = slices.Compact(sorted)
	}
	la := &listAnswer{names: own, sorted: sorted}
	if !g.opts.HideToolList {
		listed := sorted[:min(len(sorted), g.opts.ToolListLimit)]
		la.listed = appendStrings(append([]byte(nil), `"availableTools":`...), listed)
		if len(listed) < len(sorted) {
			la.listed = append(la.listed, `,"availableToolsTruncated":true`...)
		}
	}
	return la
}

// suggest returns the names nearest name: from the index once the list has
// been rejected from before (building it the first time), else by the plain
// search, so a list seen once costs no more than it did without an index.
func (la *listAnswer) suggest(name string) []string {
	if !la.seen.Load() {
		return suggest(name, la.sorted)
	}
	la.indexOnce.Do(func() { la.index = newNameIndex(la.sorted) })
	return la.index.suggest(name)
}

// A nameIndex holds the names of a sorted list normalized (lower case, no
// separators) and bucketed by normalized length, so that suggestions only
// look at names whose length is within the edit limit.
type nameIndex struct {
	byLen [2*maxNameLen + 1][]indexedName
}

type indexedName struct {
	name string
	norm []rune
	pos  int // position in the sorted list, which orders ties
}

func newNameIndex(sorted []string) nameIndex {
	var idx nameIndex
	var buf [2 * maxNameLen]rune
	for i, n := range sorted {
		if len(n) > 2*maxNameLen {
			continue // as suggest: beyond this no name is near
		}
		norm := normalize(n, buf[:0])
		idx.byLen[len(norm)] = append(idx.byLen[len(norm)], indexedName{name: n, norm: slices.Clone(norm), pos: i})
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
	var cands []cand
	for l := max(0, len(want)-limit); l <= min(2*maxNameLen, len(want)+limit); l++ {
		for _, in := range idx.byLen[l] {
			if bagDistance(&bag, len(want), in.norm) > limit {
				continue
			}
			if d := boundedDistance(want, in.norm, limit, &sc.row); d <= limit {
				cands = append(cands, cand{in.name, d, in.pos})
			}
		}
	}
	return best(cands)
}

// boundedDistance is the Levenshtein distance between a and b when it is
// at most k, and k+1 otherwise. It fills only the band of cells within k of
// the diagonal and stops as soon as a whole row exceeds k. row is scratch
// of at least len(b)+1 cells; a and b are at most 2*64 runes.
func boundedDistance(a, b []rune, k int, row *[2*64 + 1]int) int {
	if abs(len(a)-len(b)) > k {
		return k + 1
	}
	const far = 1 << 20
	for j := 0; j <= len(b); j++ {
		if j <= k {
			row[j] = j
		} else {
			row[j] = far
		}
	}
	for i := 1; i <= len(a); i++ {
		lo, hi := max(1, i-k), min(len(b), i+k)
		prev := row[lo-1] // the diagonal cell of the row above
		if lo == 1 {
			prev = row[0]
			row[0] = i
			if i > k {
				row[0] = far
			}
		} else {
			row[lo-1] = far
		}
		best := row[lo-1]
		for j := lo; j <= hi; j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur := min(row[j]+1, row[j-1]+1, prev+cost)
			prev, row[j] = row[j], cur
			best = min(best, cur)
		}
		if hi < len(b) {
			row[hi+1] = far
		}
		if best > k {
			return k + 1
		}
	}
	if row[len(b)] > k {
		return k + 1
	}
	return row[len(b)]
}
