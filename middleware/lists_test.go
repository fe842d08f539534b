package toolguard

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// benchNames returns n sorted tool names.
func benchNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("tool_%04d_%s", i, []string{"get", "list", "search", "update"}[i%4])
	}
	return names
}

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
		if got := suggest(q, names); !slices.Equal(got, []string{want}) {
			t.Errorf("suggest(%q) = %q, want [%s]", q, got, want)
		}
	}
}

// The rejection is valid JSON that says what the options ask, for names
// short and long, plain and escaped, and ids of each kind: the message
// with the name (cut past 128 bytes), the nearest names and the way out
// (or the name alone), the list capped, the suggestions.
func TestUnknownToolSaysWhatTheOptionsAsk(t *testing.T) {
	names := append(benchNames(150), "get\"quoted\"", "naïve_tool", "x")
	list := sortedList(slices.Clone(names))
	queries := []string{"tool_0005_serch", "x_", "y", "get\"quoted", "naive_tool", "Tool_0007_GET",
		"\u2028line\x01", "\xff\xfe", strings.Repeat("a", 64), strings.Repeat("a", 65), strings.Repeat("é", 70), strings.Repeat("b", 200), ""}
	for _, opts := range []Options{{}, {HideSuggestions: true}, {HideToolList: true}, {HideToolList: true, HideSuggestions: true}, {ToolListLimit: 3}, {BareMessage: true}} {
		g := mustGuard(t, opts)
		g.opts.BareMessage = opts.BareMessage // mustGuard sets it for the other tests
		for _, q := range queries {
			for _, id := range []string{"1", `"abc"`, "-12345678901234567890"} {
				shown, near := (&seenList{sorted: list}).parts(g, q)
				msg := g.unknownTool([]byte(id), q, shown, near, 200, false).appendMessage(nil)
				var got struct {
					ID    json.RawMessage
					Error struct {
						Code    int
						Message string
						Data    *struct {
							AvailableTools          []string
							AvailableToolsTruncated bool
							Suggestions             []string
						}
					}
				}
				if err := json.Unmarshal(msg, &got); err != nil {
					t.Fatalf("%+v %q: invalid JSON %s: %v", opts, q, msg, err)
				}
				if want := suggest(q, list); !opts.HideSuggestions && !slices.Equal(near, want) {
					t.Errorf("%+v %q: nearest %q, want %q", opts, q, near, want)
				}
				want := "Unknown tool: " + string([]rune(cut(q, maxNameInMessage))) // each invalid byte U+FFFD
				if !opts.BareMessage {
					if len(near) > 0 {
						want += ". Did you mean " + near[0]
					}
					if !strings.HasPrefix(got.Error.Message, want) || !strings.HasSuffix(got.Error.Message, wayOut) {
						t.Errorf("%+v %q: message %q", opts, q, got.Error.Message)
					}
				} else if got.Error.Message != want {
					t.Errorf("%+v %q: message %q, want %q", opts, q, got.Error.Message, want)
				}
				if string(got.ID) != id || got.Error.Code != CodeInvalidParams {
					t.Errorf("%+v %q: id %s code %d", opts, q, got.ID, got.Error.Code)
				}
				d := got.Error.Data
				switch {
				case opts.HideToolList && len(near) == 0:
					if d != nil {
						t.Errorf("%+v %q: data %s", opts, q, msg)
					}
				case d == nil:
					t.Errorf("%+v %q: no data: %s", opts, q, msg)
				case !slices.Equal(d.Suggestions, near):
					t.Errorf("%+v %q: suggestions %q, want %q", opts, q, d.Suggestions, near)
				case !opts.HideToolList:
					limit := cmp.Or(opts.ToolListLimit, DefaultToolListLimit)
					if !slices.Equal(d.AvailableTools, list[:limit]) || !d.AvailableToolsTruncated {
						t.Errorf("%+v %q: list %q truncated %v", opts, q, d.AvailableTools, d.AvailableToolsTruncated)
					}
				}
			}
		}
	}
}

// cut shortens s to at most n bytes on a rune boundary, marking the cut:
// the name as the message shows it.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// shownLists is how many lists an answer could show (not gone); call with
// s.mu held.
func (s *seenLists) shownLists() int {
	n := 0
	for _, l := range s.lists {
		if l.shown() {
			n++
		}
	}
	return n
}
