package toolguard

import (
	"slices"
	"sync/atomic"
)

// A listAnswer is what rejections need from one tool list, built once per
// list and reused while the tool set returns the same list: the sorted
// names, the data.availableTools member as bytes (capped, escaped), and the
// index of nearest names.
type listAnswer struct {
	names []string // a copy of the list it was built from, to compare

	listed []byte // `"availableTools":[...]` (and the truncation flag), nil with HideToolList
	index  nameIndex
}

// answerFor returns the precomputed answer parts for names, from the last
// list when it has the same names, else built now and kept for the next
// rejection. The names are compared with a private copy, so a tool set that
// reuses its slice for another list is never answered with the old one;
// comparing the same strings costs little (equal string headers compare
// without reading the bytes).
func (g *Guard) answerFor(names []string) *listAnswer {
	if la := g.lastList.Load(); la != nil && slices.Equal(la.names, names) {
		return la
	}
	la := g.buildAnswer(names)
	g.lastList.Store(la)
	return la
}

func (g *Guard) buildAnswer(names []string) *listAnswer {
	sorted := names
	if !sortedUnique(names) {
		sorted = slices.Clone(names)
		slices.Sort(sorted)
		sorted = slices.Compact(sorted)
	}
	la := &listAnswer{names: slices.Clone(names)}
	if !g.opts.HideToolList {
		listed := sorted[:min(len(sorted), g.opts.ToolListLimit)]
		la.listed = appendStrings(append([]byte(nil), `"availableTools":`...), listed)
		if len(listed) < len(sorted) {
			la.listed = append(la.listed, `,"availableToolsTruncated":true`...)
		}
	}
	if !g.opts.HideSuggestions {
		la.index = newNameIndex(sorted)
	}
	return la
}

// lastListCache is the guard's one-entry cache of list answers.
type lastListCache = atomic.Pointer[listAnswer]

// A nameIndex holds the names of a sorted list normalized (lower case, no
// separators) and bucketed by normalized length, so that suggestions only
// look at names whose length is within the edit limit.
type nameIndex struct {
	byLen [2*64 + 1][]indexedName
}

type indexedName struct {
	name string
	norm []rune
	pos  int // position in the sorted list, which orders ties
}

func newNameIndex(sorted []string) nameIndex {
	var idx nameIndex
	var buf [2 * 64]rune
	for i, n := range sorted {
		if len(n) > 2*64 {
			continue // as suggest: beyond this no name is near
		}
		norm := normalize(n, buf[:0])
		if len(norm) > 2*64 {
			continue
		}
		idx.byLen[len(norm)] = append(idx.byLen[len(norm)], indexedName{name: n, norm: slices.Clone(norm), pos: i})
	}
	return idx
}

// suggest returns what suggest(name, sorted) returns for the list the
// index was built from.
func (idx *nameIndex) suggest(name string) []string {
	const maxLen = 64
	if len(name) > maxLen {
		return nil
	}
	var sc scratch
	want := normalize(name, sc.want[:0])
	if len(want) == 0 {
		return nil
	}
	limit := max(1, min(3, len(want)/3))
	var wantBag [256]int16
	for _, c := range want {
		wantBag[byte(c)]++
	}
	type cand struct {
		name      string
		dist, pos int
	}
	var cands []cand
	for l := max(0, len(want)-limit); l <= min(2*64, len(want)+limit); l++ {
		for _, in := range idx.byLen[l] {
			if bagDistance(&wantBag, len(want), in.norm) > limit {
				continue
			}
			if d := boundedDistance(want, in.norm, limit, &sc.row); d <= limit {
				cands = append(cands, cand{in.name, d, in.pos})
			}
		}
	}
	slices.SortFunc(cands, func(a, b cand) int {
		if a.dist != b.dist {
			return a.dist - b.dist
		}
		return a.pos - b.pos
	})
	out := make([]string, 0, min(len(cands), maxSuggestions))
	for _, c := range cands[:min(len(cands), maxSuggestions)] {
		out = append(out, c.name)
	}
	return out
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
