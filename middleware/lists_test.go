package toolguard

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolguard/toolguard/internal/fixture"
)

// The index gives exactly the suggestions of the plain search, for many
// lists and names.
func TestNameIndexAgreesWithSuggest(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []rune("abcdeABCDE_-. Üß😀")
	word := func(n int) string {
		r := make([]rune, n)
		for i := range r {
			r[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(r)
	}
	for round := range 200 {
		names := make([]string, rng.IntN(60))
		for i := range names {
			names[i] = word(1 + rng.IntN(12))
		}
		if round%10 == 0 {
			names = append(names, word(70), word(130))
		}
		slices.Sort(names)
		names = slices.Compact(names)
		idx := newNameIndex(names)
		for range 20 {
			q := word(rng.IntN(14))
			if rng.IntN(3) == 0 && len(names) > 0 {
				q = names[rng.IntN(len(names))] + word(rng.IntN(2))
			}
			if got, want := idx.suggest(q), suggest(q, names); !slices.Equal(got, want) {
				t.Fatalf("names %q, %q: index %q, search %q", names, q, got, want)
			}
		}
	}
}

// The index and the remembered answers give exactly the suggestions of
// the plain search for lists shaped like real tool sets: hundreds of
// names sharing prefixes and lengths, queries near and far, each asked
// several times among more names than the memo has slots.
func TestNameIndexAgreesWithSuggestToolNames(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	parts := []string{"get", "list", "search", "update", "user", "file", "tool", "repo", "issue", "Create", "delete", "x"}
	seps := []string{"_", "-", ".", "", "/", ":"}
	word := func() string {
		n := 1 + rng.IntN(4)
		w := parts[rng.IntN(len(parts))]
		for range n - 1 {
			w += seps[rng.IntN(len(seps))] + parts[rng.IntN(len(parts))]
		}
		if rng.IntN(3) == 0 {
			w += fmt.Sprintf("_%d", rng.IntN(1000))
		}
		return w
	}
	edit := func(s string) string {
		b := []byte(s)
		for range rng.IntN(4) {
			if len(b) == 0 {
				break
			}
			i := rng.IntN(len(b))
			switch rng.IntN(3) {
			case 0:
				b = append(b[:i], b[i+1:]...)
			case 1:
				b[i] = "abcdefghij_019"[rng.IntN(14)]
			default:
				b = append(b[:i], append([]byte{"aeiou_9"[rng.IntN(7)]}, b[i:]...)...)
			}
		}
		return string(b)
	}
	for range 30 {
		names := make([]string, rng.IntN(1200))
		for i := range names {
			names[i] = word()
		}
		slices.Sort(names)
		names = slices.Compact(names)
		g := mustGuard(t, Options{Tools: StaticTools(names...)})
		la := g.answerFor(names)
		queries := make([]string, 150)
		for i := range queries {
			queries[i] = word()
			if len(names) > 0 && rng.IntN(2) == 0 {
				queries[i] = edit(names[rng.IntN(len(names))])
			}
		}
		for pass := range 3 {
			if pass == 1 {
				g.answerFor(names) // seen again: from now on the index
			}
			for _, q := range queries {
				want := suggest(q, names)
				if got := la.suggest(q); !slices.Equal(got, want) {
					t.Fatalf("pass %d, %q: list answer %q, search %q", pass, q, got, want)
				}
				if pass == 2 {
					idx := &la.index
					if got := idx.suggest(q); !slices.Equal(got, want) {
						t.Fatalf("%q: index %q, search %q", q, got, want)
					}
				}
			}
		}
	}
}

// FuzzNameIndex holds the index and the remembered answers to the plain
// search for any list and name: data is split at newlines into names, the
// last line being the name asked for.
//
//	go test -run '^$' -fuzz FuzzNameIndex -fuzztime 60s ./middleware
func FuzzNameIndex(f *testing.F) {
	f.Add("get_user\nlist_users\nsearch\ngetUser")
	f.Add("tool_0001\ntool_0999\ntool_9999")
	f.Add("Straße\nstrasse\nSTRASSE\n😀_x\nstrase")
	f.Fuzz(func(t *testing.T, data string) {
		lines := strings.Split(data, "\n")
		q := lines[len(lines)-1]
		names := slices.Clone(lines[:len(lines)-1])
		slices.Sort(names)
		names = slices.Compact(names)
		want := suggest(q, names)
		if got := newNameIndex(names); !slices.Equal(got.suggest(q), want) {
			t.Fatalf("names %q, %q: index %q, search %q", names, q, got.suggest(q), want)
		}
		g := mustGuard(t, Options{Tools: StaticTools(names...)})
		la := g.answerFor(names)
		for i := range 3 {
			if i == 1 {
				g.answerFor(names)
			}
			if got := la.suggest(q); !slices.Equal(got, want) {
				t.Fatalf("names %q, %q, ask %d: list answer %q, search %q", names, q, i, got, want)
			}
		}
	})
}

// A list is precomputed once and reused while the tool set returns the
// same names, and never reused for other names, even in the same slice.
func TestListAnswerReuse(t *testing.T) {
	buf := []string{"a_tool", "b_tool"}
	g := mustGuard(t, Options{Tools: ToolsFunc(func(*http.Request) ([]string, error) { return buf, nil })})
	first := g.answerFor(buf)
	if first.seen.Load() || g.answerFor(buf) != first || g.answerFor(slices.Clone(buf)) != first || !first.seen.Load() {
		t.Error("the same names were precomputed again")
	}
	// A few lists in turn all stay.
	lists := [][]string{{"x"}, {"y"}, {"z"}}
	for range 3 {
		for _, l := range lists {
			g.answerFor(l)
		}
	}
	for _, l := range lists {
		if !g.answerFor(l).seen.Load() {
			t.Errorf("list %q not kept", l)
		}
	}
	buf[1] = "c_tool" // the tool set reuses its slice for another list
	if la := g.answerFor(buf); la == first || string(la.listed) != `"availableTools":["a_tool","c_tool"]` {
		t.Errorf("stale list: %s", la.listed)
	}
	w, _ := rejection(t, g, call("1", `"c_tol"`), nil)
	if want := `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: c_tol","data":{"availableTools":["a_tool","c_tool"],"suggestions":["c_tool"]}}}`; w.Body.String() != want {
		t.Errorf("answer %s\nwant   %s", w.Body, want)
	}
}

// A tool set that reads its list again (the same names in a new slice,
// as a tool set that reads its registry again does) is compared name by name once;
// the rejections after that match the new slice by identity. A changed
// list in a slice of the same length is still told apart.
func TestListReadAgainIsMatchedByIdentity(t *testing.T) {
	g := mustGuard(t, Options{})
	old := benchNames(1000)
	la := g.answerFor(old)
	again := slices.Clone(old)
	if la.returnedAgain(again) {
		t.Fatal("a new slice matched by identity before it was compared")
	}
	if g.answerFor(again) != la {
		t.Fatal("the same names got another answer")
	}
	if !la.returnedAgain(again) {
		t.Error("the list read again is still compared name by name")
	}
	if noList.returnedAgain(old) {
		t.Error("the answer parts of no list matched a list")
	}
	changed := slices.Clone(old)
	changed[500] = "tool_0500_gone"
	if got := g.answerFor(changed); got == la || !strings.Contains(string(got.listed), "tool_0099") || slices.Contains(got.sorted, "tool_0500_search") {
		t.Error("a changed list got the old answer")
	}
}

// benchNames returns n sorted tool names.
func benchNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("tool_%04d_%s", i, []string{"get", "list", "search", "update"}[i%4])
	}
	return names
}

// unknownToolPerRejection is the answer as it was built before lists were
// precomputed: sort check, full nearest-name search and list encoding on
// every rejection. The benchmark's baseline.
func unknownToolPerRejection(g *Guard, id []byte, name string, names []string) []byte {
	sorted := names
	if !sortedUnique(names) {
		sorted = slices.Sorted(slices.Values(names))
	}
	suggestions := suggest(name, sorted)
	b := make([]byte, 0, 256)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"error":{"code":-32602,"message":"Unknown tool: `...)
	b = appendEscaped(b, cut(name, maxNameInMessage))
	b = append(b, `","data":{`...)
	listed := sorted[:min(len(sorted), g.opts.ToolListLimit)]
	b = appendStrings(append(b, `"availableTools":`...), listed)
	if len(listed) < len(sorted) {
		b = append(b, `,"availableToolsTruncated":true`...)
	}
	if len(suggestions) > 0 {
		b = appendStrings(append(b, `,"suggestions":`...), suggestions)
	}
	return append(b, "}}}"...)
}

// BenchmarkRejectionPaired builds the same rejection both ways in each
// iteration, from precomputed list parts and per rejection as before, and
// reports each cost and their ratio (precomputed / per rejection). "repeat"
// rejects from the same list every time, as while a server's tools do not
// change; "first" from a list the guard has not seen (the cache is emptied
// each iteration), the cost a new list pays once.
//
//	go test -run '^$' -bench RejectionPaired -count 6 ./middleware
func BenchmarkRejectionPaired(b *testing.B) {
	for _, n := range []int{10, 1000} {
		for _, mode := range []string{"repeat", "first"} {
			b.Run(fmt.Sprintf("tools=%d/%s", n, mode), func(b *testing.B) {
				names := benchNames(n)
				g := mustGuard(b, Options{Tools: StaticTools(names...)})
				id, name := []byte("7"), "tool_0005_serch"
				for range 2 { // the second answer comes from the index
					if got, want := g.newUnknownTool(id, name, names, 200, false).body, unknownToolPerRejection(g, id, name, names); string(got) != string(want) {
						b.Fatalf("the two answers differ:\n%s\n%s", got, want)
					}
				}
				pre := fixture.Side{Name: "precomputed", Run: func() { g.newUnknownTool(id, name, names, 200, false) }}
				if mode == "first" {
					pre.Setup = func() {
						for i := range g.lists.entries {
							g.lists.entries[i].Store(nil)
						}
					}
				}
				fixture.Alternated(b, pre, fixture.Side{Name: "per-rejection", Run: func() { unknownToolPerRejection(g, id, name, names) }})
			})
		}
	}
}

// The bit-parallel distance is the banded one and the whole table's, for
// queries of every length it serves (up to 64 runes) and names up to twice
// as long, some with runes it does not index, some a few swaps away.
func TestPatternDistance(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	word := func(n int) []rune { return randomWord(rng, n) }
	var rows [3][2*64 + 1]int
	for range 20000 {
		a := word(1 + rng.IntN(64))
		for i, r := range a {
			if r >= utf8.RuneSelf {
				a[i] = 'c'
			}
		}
		b := word(rng.IntN(129))
		if rng.IntN(2) == 0 { // a near name
			b = append(slices.Clone(a), word(rng.IntN(3))...)
			if len(b) > 2 {
				b[rng.IntN(len(b))] = 'z'
			}
			for range rng.IntN(3) {
				if i := rng.IntN(len(b)); i+1 < len(b) {
					b[i], b[i+1] = b[i+1], b[i]
				}
			}
		}
		p := newPattern(a)
		if !p.ok {
			t.Fatalf("%q not served", string(a))
		}
		full := fullDistance(a, b)
		for k := range 5 {
			if got, want := p.distance(b, k), osaDistance(a, b, k, &rows); got != want || got != min(full, k+1) {
				t.Fatalf("%q %q k=%d: bit-parallel %d, banded %d, full %d", string(a), string(b), k, got, want, full)
			}
		}
	}
	if newPattern([]rune("Über")).ok || newPattern(nil).ok || newPattern(make([]rune, 65)).ok {
		t.Error("a query it cannot serve was accepted")
	}
}

// randomWord is n runes drawn from a small alphabet with repeats, a
// separator, a digit and a rune outside ASCII, so that random pairs are
// near as often as far.
func randomWord(rng *rand.Rand, n int) []rune {
	const alphabet = "abcab_9Ü"
	runes := []rune(alphabet)
	r := make([]rune, n)
	for i := range r {
		r[i] = runes[rng.IntN(len(runes))]
	}
	return r
}

// fullDistance is the optimal string alignment distance between a and b
// over the whole table: the reference the banded and bit-parallel
// distances are held to.
func fullDistance(a, b []rune) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// The banded distance with swaps is the whole table's, bounded, for names
// up to 128 runes, near ones (a swap, a replacement, a few runes added)
// and far ones alike.
func TestOSADistance(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	word := func(n int) []rune { return randomWord(rng, n) }
	var rows [3][2*64 + 1]int
	for range 20000 {
		a := word(1 + rng.IntN(128))
		b := word(rng.IntN(129))
		if rng.IntN(2) == 0 { // a near name
			b = slices.Clone(a)
			for range 1 + rng.IntN(3) {
				switch i := rng.IntN(len(b)); rng.IntN(3) {
				case 0:
					if i+1 < len(b) {
						b[i], b[i+1] = b[i+1], b[i]
					}
				case 1:
					b[i] = 'z'
				default:
					b = slices.Insert(b, i, 'y')
				}
			}
		}
		b = b[:min(len(b), 2*64)]
		full := fullDistance(a, b)
		for k := range 7 {
			want := min(full, k+1)
			if got := osaDistance(a, b, k, &rows); got != want {
				t.Fatalf("%q %q k=%d: banded %d, full %d", string(a), string(b), k, got, full)
			}
		}
	}
	for _, tc := range []struct {
		a, b string
		d    int
	}{
		{"echo", "ecoh", 1}, {"getweather", "getwetaher", 1}, {"ab", "ba", 1}, {"abc", "ca", 3}, {"", "ab", 2},
	} {
		if got := osaDistance([]rune(tc.a), []rune(tc.b), 3, &rows); got != tc.d {
			t.Errorf("%q %q: %d, want %d", tc.a, tc.b, got, tc.d)
		}
	}
}

// A swap of two adjacent letters is one edit: the swapped name is
// suggested even where the limit is one edit.
func TestSuggestionsForSwappedLetters(t *testing.T) {
	names := []string{"echo", "get_weather", "search_docs"}
	for q, want := range map[string]string{"ecoh": "echo", "get_wetaher": "get_weather", "saerch_docs": "search_docs"} {
		idx := newNameIndex(names)
		if got := suggest(q, names); !slices.Equal(got, []string{want}) {
			t.Errorf("suggest(%q) = %q, want [%s]", q, got, want)
		}
		if got := idx.suggest(q); !slices.Equal(got, []string{want}) {
			t.Errorf("index suggest(%q) = %q, want [%s]", q, got, want)
		}
	}
}

// unknownToolBefore is the rejection as it was written before its parts
// were remembered per name: escaped name, list and suggestions appended
// per rejection.
func unknownToolBefore(g *Guard, id []byte, name string, names []string) []byte {
	la := g.answerFor(names)
	var suggestions []string
	if !g.opts.HideSuggestions {
		suggestions = suggest(name, la.sorted)
	}
	b := append([]byte(nil), `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"error":{"code":-32602,"message":"Unknown tool: `...)
	b = appendEscaped(b, cut(name, maxNameInMessage))
	b = append(b, '"')
	if la.listed != nil || len(suggestions) > 0 {
		b = append(b, `,"data":{`...)
		b = append(b, la.listed...)
		if len(suggestions) > 0 {
			if la.listed != nil {
				b = append(b, ',')
			}
			b = appendStrings(append(b, `"suggestions":`...), suggestions)
		}
		b = append(b, '}')
	}
	return append(b, "}}"...)
}

// The rejection built from remembered parts is byte for byte the one
// built per rejection, for every option, for names short and long, plain
// and escaped, asked once and again (from the memo).
func TestUnknownToolBytes(t *testing.T) {
	names := append(benchNames(150), "get\"quoted\"", "naïve_tool", "x")
	queries := []string{"tool_0005_serch", "tool_0005_search", "x", "y", "get\"quoted", "naive_tool", "Tool_0007_GET",
		"\u2028line\x01", "\xff\xfe", strings.Repeat("a", 64), strings.Repeat("a", 65), strings.Repeat("é", 70), strings.Repeat("b", 200), ""}
	for _, opts := range []Options{{}, {HideSuggestions: true}, {HideToolList: true}, {HideToolList: true, HideSuggestions: true}, {ToolListLimit: 3}} {
		opts.Tools = StaticTools(names...)
		g := mustGuard(t, opts)
		for round := range 3 {
			for _, q := range queries {
				for _, id := range []string{"1", `"abc"`, "-12345678901234567890"} {
					got := g.newUnknownTool([]byte(id), q, names, 200, false).body
					if want := unknownToolBefore(g, []byte(id), q, names); string(got) != string(want) {
						t.Fatalf("%+v round %d, %q: got\n%s\nwant\n%s", opts, round, q, got, want)
					}
					if !json.Valid(got) {
						t.Fatalf("invalid JSON: %s", got)
					}
				}
			}
		}
	}
}

// newUnknownTool is the guard's answer to a call of name before the
// server, from the tool set's list names.
func (g *Guard) newUnknownTool(id []byte, name string, names []string, status int, sse bool) *Rejection {
	return g.unknownTool(id, name, g.answerFor(names), status, sse)
}

// answerFor returns the answer parts for names: those of a cached list with
// the same names, else new ones, kept for the next rejection. The names are
// compared with a private copy, so a tool set that reuses its slice for
// another list is never answered with the old one; comparing the same
// strings costs little (equal string headers compare without reading the
// bytes).
func (g *Guard) answerFor(names []string) *listAnswer {
	if la := g.cachedAnswer(names); la != nil {
		return la
	}
	return g.addAnswer(names)
}

// suggest returns the names nearest name: from the index once the list has
// been rejected from before (building it the first time), else by the plain
// search, so a list seen once costs no more than it did without an index.
// The answers of recent names are kept (suggestions are a function of the
// list and the name alone, and a list's answer never changes), so a caller
// repeating a wrong name costs a lookup.
func (la *listAnswer) suggest(name string) []string {
	if len(name) > maxNameLen {
		return nil // as prepareQuery: such names get no suggestions
	}
	return la.remembered(name).out
}
