package toolguard

import (
	"bytes"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/toolguard/toolguard/internal/mcpwire"
)

// JSON-RPC error codes the middleware writes.
const (
	CodeInvalidParams  = -32602 // unknown tool (the spec's example code)
	CodeHeaderMismatch = -32020 // 2026-07-28: Mcp-* header does not match the body
)

const (
	maxNameInMessage = 128 // bytes of the tool name quoted in error.message
	maxSuggestions   = 3
)

// A Rejection is the answer the middleware writes instead of passing a
// request on, or in place of the server's not-found answer, made from the
// fields as they are then: a hook (Options.OnReject) may change Code, and
// Status but in a stream the server has begun (its status has gone out).
type Rejection struct {
	Name   string // the tool name the request asked for, whole
	Code   int    // CodeInvalidParams or CodeHeaderMismatch
	Status int    // HTTP status (0 over stdio): the server's own (Translated); before the server 200, or 400 for 2026-07-28 requests
	SSE    bool   // written as one text/event-stream event instead of JSON

	// Translated reports an answer that replaces the server's own
	// not-found answer; otherwise the guard answered before the server.
	Translated bool
	// ListErr says why the answer has no data.availableTools although the
	// guard lists tools: ErrNoList.
	ListErr error

	id     []byte   // the request's id, as sent (a copy)
	asked  string   // Name as the request gave it (a hook may change Name)
	listed []byte   // data.availableTools, shared with the caller's kept list
	near   []string // the names nearest Name
	header string   // CodeHeaderMismatch's: the header that does not match
	bare   bool     // Options.BareMessage
}

// appendMessage appends the JSON-RPC message of the rejection to b, with
// its Code as it is now (a hook may have changed it).
func (j *Rejection) appendMessage(b []byte) []byte {
	b = append(append(append(b, `{"jsonrpc":"2.0","id":`...), j.id...), `,"error":{"code":`...)
	b = strconv.AppendInt(b, int64(j.Code), 10)
	if j.header != "" {
		return append(b, `,"message":"Header mismatch: `+j.header+` header is missing or does not match the request body"}}`...)
	}
	b = appendCut(append(b, `,"message":"Unknown tool: `...), j.asked, maxNameInMessage)
	if !j.bare {
		if len(j.near) > 0 {
			b = appendDidYouMean(b, j.near)
		} else {
			b = append(b, '.')
		}
		b = append(b, wayOut...)
	}
	b = append(b, '"')
	if j.listed != nil || len(j.near) > 0 {
		b = append(append(b, `,"data":{`...), j.listed...)
		if len(j.near) > 0 {
			if j.listed != nil {
				b = append(b, ',')
			}
			b = appendStrings(append(b, `"suggestions":`...), j.near)
		}
		b = append(b, '}')
	}
	return append(b, "}}"...)
}

// Write writes the rejection to w: status, Content-Type and the JSON-RPC
// error, as JSON or as one SSE event (event: message). Adapters call it
// with the rejection Check returns.
func (j *Rejection) Write(w http.ResponseWriter) error {
	if j == nil || j.id == nil {
		return errNotMade
	}
	buf := getBuffer() // (the message is made here, in a buffer used again)
	defer putBuffer(buf)
	b, end := buf.b[:0], ""
	h := w.Header()
	if j.SSE {
		// One data line: the message holds no line end (every control
		// character in it is escaped, and its id is a token the reader took).
		b, end = append(b, "event: message\ndata: "...), "\n\n"
		h["Content-Type"] = []string{"text/event-stream"}
		h["Cache-Control"] = []string{"no-cache"}
	} else {
		h["Content-Type"] = []string{"application/json"}
	}
	b = append(j.appendMessage(b), end...)
	buf.b = b
	h["Content-Length"] = []string{strconv.Itoa(len(b))}
	w.WriteHeader(j.Status)
	_, err := w.Write(b)
	return err
}

// event returns the event stream bytes that replace ev, the server's
// not-found event: ev's own fields (id, event, retry) with the rejection
// as its data. The stream's first event keeps the BOM it may start with
// (only there is a BOM a mark; on a later event it is part of a line).
func (j *Rejection) event(ev []byte, first bool) []byte {
	b := make([]byte, 0, len(ev)+len(j.listed)+256)
	if rest, ok := bytes.CutPrefix(ev, bom); ok && first {
		b, ev = append(b, bom...), rest
	}
	wroteData := false
	mcpwire.EventLines(ev, func(line []byte) {
		if len(line) == 0 {
			return
		}
		if _, ok := mcpwire.DataField(line); ok {
			if !wroteData {
				b = append(j.appendMessage(append(b, "data: "...)), '\n')
				wroteData = true
			}
			return
		}
		b = append(b, line...)
		b = append(b, '\n')
	})
	return append(b, '\n')
}

var errNotMade = errors.New("toolguard: Rejection.Write: not a rejection made by a Guard; nothing written")

// wayOut ends the default message: what the model can do next.
const wayOut = ` Call tools/list for the available tools.`

// unknownTool makes the -32602 answer to the call id of name. listed is
// data.availableTools as bytes (see listed; nil to leave it out), near
// the names nearest name. The message names the tool, the nearest names
// and the way out ("Unknown tool: X. Did you mean Y? Call tools/list for
// the available tools."), or only the tool with Options.BareMessage.
func (g *Guard) unknownTool(id []byte, name string, listed []byte, near []string, status int, sse bool) *Rejection {
	return &Rejection{Name: name, Code: CodeInvalidParams, Status: status, SSE: sse, id: id, asked: name, listed: listed, near: near, bare: g.opts.BareMessage}
}

// listed returns the data.availableTools member of an answer that shows
// list (sorted), cut to Options.ToolListLimit and marked when cut; nil
// with Options.HideToolList, or no list.
func (g *Guard) listed(list []string) []byte {
	if list == nil || g.opts.HideToolList {
		return nil
	}
	shown := list[:min(len(list), g.opts.ToolListLimit)]
	b := appendStrings(append(make([]byte, 0, 32+16*len(shown)), `"availableTools":`...), shown)
	if len(shown) < len(list) {
		b = append(b, `,"availableToolsTruncated":true`...)
	}
	return b
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

// sortedList returns names sorted and unique, in a slice of its own: an
// empty list, not nil, for a server without tools (it is shown as any
// other).
func sortedList(names []string) []string {
	if len(names) == 0 {
		return []string{}
	}
	return slices.Compact(slices.Sorted(slices.Values(names)))
}

func appendStrings(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = appendEscaped(b, s)
		b = append(b, '"')
	}
	return append(b, ']')
}

const hexDigits = "0123456789abcdef"

// appendEscaped appends s as the inside of a JSON string. Control
// characters, quotes, backslashes, U+2028 and U+2029 are escaped; invalid
// UTF-8 becomes U+FFFD.
func appendEscaped(b []byte, s string) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c < 0x20 || c == 0x7f:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return b
}

// appendCut appends s, escaped as appendEscaped does, shortened to at
// most n bytes on a rune boundary and the cut marked.
func appendCut(b []byte, s string, n int) []byte {
	if len(s) <= n {
		return appendEscaped(b, s)
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return append(appendEscaped(b, s[:n]), "…"...)
}

// suggest returns up to maxSuggestions names near name: first those that
// differ only in case and separators, then those a few edits away (a rune
// inserted, removed or replaced, or two adjacent runes swapped), ties in
// list order. names is sorted. It is the plain banded search over every
// name (a kept list remembers its answers: seenList.parts).
func suggest(name string, names []string) []string {
	if len(name) > maxNameLen {
		return nil
	}
	var sc scratch
	want := normalize(name, sc.want[:0])
	if len(want) == 0 {
		return nil
	}
	limit := max(1, min(3, len(want)/3))
	var cands []cand
	for i, n := range names {
		if len(n) > 2*maxNameLen || len(n) < len(want)-limit {
			continue // normalizing never lengthens a name
		}
		if d := osaDistance(want, normalize(n, sc.got[:0]), limit, &sc.osa); d <= limit {
			cands = append(cands, cand{n, d, i})
		}
	}
	return best(cands)
}

// maxNameLen is the longest name (in bytes) that gets suggestions; names
// in the list up to twice as long are compared. It bounds the work.
const maxNameLen = 64

type cand struct {
	name      string
	dist, pos int // edit distance; position in the sorted list, which orders ties
}

// best returns the nearest candidates: by distance, then list order.
func best(cands []cand) []string {
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

// scratch holds the buffers of one suggest call, on the stack.
type scratch struct {
	want, got [2 * 64]rune
	osa       [3][2*64 + 1]int
}

// normalize lower-cases s and drops separators into dst, so get_user,
// getUser and get-user compare equal.
func normalize(s string, dst []rune) []rune {
	for _, r := range s {
		switch r {
		case '_', '-', '.', ' ', '/', ':':
			continue
		}
		if r < utf8.RuneSelf {
			if 'A' <= r && r <= 'Z' {
				r += 'a' - 'A'
			}
		} else {
			r = unicode.ToLower(r)
		}
		dst = append(dst, r)
	}
	return dst
}

// osaDistance is the optimal string alignment distance between a and b
// (a rune inserted, removed or replaced, or two adjacent runes swapped,
// each one edit, no rune edited twice) when it is at most k, and k+1
// otherwise. It fills only the band of cells within k of the diagonal,
// keeping the last three rows, and stops once a whole row exceeds k (a
// swap reaches back two rows, but a cell within k reached by a swap has
// one within k in the row between: two replacements reach it too). a and
// b are at most 2*64 runes.
func osaDistance(a, b []rune, k int, rows *[3][2*64 + 1]int) int {
	if max(len(a)-len(b), len(b)-len(a)) > k {
		return k + 1
	}
	const far = 1 << 20
	back, prev, cur := rows[0][:], rows[1][:], rows[2][:]
	for j := 0; j <= min(len(b), k+1); j++ {
		prev[j] = j
		if j > k {
			prev[j] = far
		}
	}
	for i := 1; i <= len(a); i++ {
		lo, hi := max(1, i-k), min(len(b), i+k)
		// The cells just outside the band, read by the next rows.
		switch {
		case lo > 1:
			cur[lo-1] = far
		case i <= k:
			cur[0] = i
		default:
			cur[0] = far
		}
		if hi < len(b) {
			cur[hi+1] = far
		}
		best := cur[lo-1]
		for j := lo; j <= hi; j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d = min(d, back[j-2]+1)
			}
			cur[j] = d
			best = min(best, d)
		}
		if best > k {
			return k + 1
		}
		back, prev, cur = prev, cur, back
	}
	if prev[len(b)] > k {
		return k + 1
	}
	return prev[len(b)]
}
