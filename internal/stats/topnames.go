package stats

import (
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// MaxNameBytes is the most of a name a TopNames keeps: a longer name is
// cut at a character boundary and ends in "…".
const MaxNameBytes = 128

// A TopNames counts names chosen by callers in bounded memory: it keeps at
// most capacity names (the space-saving algorithm of Metwally, Agrawal and
// El Abbadi, 2005). A name seen when the table is full takes the place of
// the least counted one and inherits its count as its possible error, so
// every name called more often than total/capacity times is kept. While
// fewer than capacity distinct names have been seen, every count is exact.
// It is safe for concurrent use.
type TopNames struct {
	mu       sync.Mutex
	capacity int
	entries  []NameCount
	index    map[string]int // name → its place in entries
	total    uint64
}

// A NameCount is a name and the calls it has at least.
type NameCount struct {
	Name  string
	Count uint64 // at least this many calls (exact while the table was never full)
	err   uint64 // inherited from the name it replaced
}

// NewTopNames returns a table of at most capacity names (at least 1).
func NewTopNames(capacity int) *TopNames {
	capacity = max(capacity, 1)
	return &TopNames{capacity: capacity, entries: make([]NameCount, 0, capacity), index: make(map[string]int, capacity)}
}

// Add counts one call of name.
func (t *TopNames) Add(name string) {
	name = clip(name)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.total++
	if i, ok := t.index[name]; ok {
		t.entries[i].Count++
		return
	}
	name = strings.Clone(name) // never hold the caller's larger string
	if len(t.entries) < t.capacity {
		t.index[name] = len(t.entries)
		t.entries = append(t.entries, NameCount{Name: name, Count: 1})
		return
	}
	least := 0
	for i, e := range t.entries {
		if e.Count < t.entries[least].Count {
			least = i
		}
	}
	old := t.entries[least]
	delete(t.index, old.Name)
	t.index[name] = least
	t.entries[least] = NameCount{Name: name, Count: old.Count + 1, err: old.Count}
}

// Top returns at most n names, most called first (ties by name), each
// with the calls it is sure to have had; rest is every other call, so
// that the counts and rest add up to total, the calls of all names.
func (t *TopNames) Top(n int) (top []NameCount, rest, total uint64) {
	t.mu.Lock()
	all := make([]NameCount, len(t.entries))
	for i, e := range t.entries {
		all[i] = NameCount{Name: e.Name, Count: e.Count - e.err}
	}
	total = t.total
	t.mu.Unlock()
	slices.SortFunc(all, func(a, b NameCount) int {
		switch {
		case a.Count > b.Count:
			return -1
		case a.Count < b.Count:
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	top = all[:min(n, len(all))]
	rest = total
	for _, e := range top {
		rest -= e.Count
	}
	return top, rest, total
}

// Len reports how many names the table holds.
func (t *TopNames) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.entries)
}

// clip makes name fit a label value: valid UTF-8, at most MaxNameBytes
// (and "…").
func clip(name string) string {
	if !utf8.ValidString(name) {
		name = strings.ToValidUTF8(name, "\uFFFD")
	}
	if len(name) <= MaxNameBytes {
		return name
	}
	cut := MaxNameBytes - len("…")
	for cut > 0 && !utf8.RuneStart(name[cut]) {
		cut--
	}
	return name[:cut] + "…"
}
