package toolguard

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/toolguard/toolguard/internal/mcpwire"
)

// maxNotFoundBytes bounds the answers the guard reads as a possible
// not-found answer: a larger answer is never one.
func maxNotFoundBytes(name string) int { return 8<<10 + 8*len(name) }

// listState is what the caller's list says of a name.
type listState uint8

const (
	listUnseen listState = iota // no list seen for the caller
	listAbsent                  // seen, without the name
	listHas                     // seen, with the name: a tool that exists
)

// answerKind is the kind of a reply to a call.
type answerKind uint8

const (
	kindError   answerKind = iota + 1 // a JSON-RPC error
	kindIsError                       // a result with isError: true
	kindResult                        // any other result
)

// An answer is what the guard reads of a reply to a call: its kind and
// the texts that may say the tool is unknown (an error's message and its
// data when a string; a result's one text content, and when that text is
// a JSON object, its error, message and detail strings).
type answer struct {
	kind  answerKind
	code  int64 // an error's code
	texts []string
}

// readCallAnswer reads msg, a reply to the call with id, for notFound; ok is
// false when it cannot be a not-found answer to a call of name at all.
// absent, when not nil, says whether the caller's list shows the name
// absent: only then can a result without isError be one, so the result of
// a known call is never decoded.
func readCallAnswer(msg, id []byte, name string, absent func() bool) (answer, bool) {
	if len(msg) > maxNotFoundBytes(name) || !bytes.Contains(msg, []byte(`"id"`)) {
		return answer{}, false
	}
	hasError := bytes.Contains(msg, []byte(`"error"`)) || bytes.Contains(msg, []byte(`"isError"`))
	if !hasError && (!mayName(msg, name) || absent != nil && !absent()) {
		// A result that does not hold the name cannot say it is unknown,
		// nor one for a name the caller's list does not show absent.
		return answer{}, false
	}
	replyID, a, ok := readCallReply(msg)
	return a, ok && mcpwire.SameID(replyID, id)
}

// isNotFoundAnswer reports whether msg is the server's not-found answer to
// the call of name with id, given list, the list the server gave the
// caller (nil: none seen). The list is looked at only for an answer that
// says a tool is unknown.
func isNotFoundAnswer(msg, id []byte, name string, list func() *seenList) bool {
	state := func() listState { return list().state(name) }
	a, ok := readCallAnswer(msg, id, name, func() bool { return state() == listAbsent })
	return ok && a.notFound(name, state)
}

// mayName reports whether msg may hold name in a string: as it is, or
// escaped (a name with characters JSON escapes, or msg with escapes).
func mayName(msg []byte, name string) bool {
	return bytes.Contains(msg, []byte(name)) || bytes.IndexByte(msg, '\\') >= 0
}

// notFound reports whether the answer is the server's not-found answer to
// a call of name, by what its texts say (the grammar, which every SDK's
// answer of docs/RULES.md §2 meets), as the caller's list allows (docs/RULES.md §2, "The caller's list is the safety check"):
// never for a name it shows, whose handler may write the same. list says
// what the list says of name, and is called only once a text says a tool
// is unknown.
func (a answer) notFound(name string, list func() listState) bool {
	for _, t := range a.texts {
		m := matchNotFound(t, name)
		if m == saysNothing {
			continue // the list is read only for an answer that says a tool is unknown
		}
		switch ls := list(); {
		case ls == listHas:
			return false
		case a.kind == kindResult:
			if m == saysNamedWhole && ls == listAbsent {
				return true
			}
		case m == saysNamed || m == saysNamedWhole:
			return true
		case m == saysBare && ls == listAbsent:
			return true
		}
	}
	return false
}

// Keys of a reply to a call below its top level, for the strict scanner.
var (
	errorKeys   = []string{"code", "message", "data"}
	outcomeKeys = []string{"isError", "content"}
	contentKeys = []string{"type", "text"}
)

// readCallReply reads b, a reply to a call, in the strict subset
// (docs/RULES.md §2): jsonrpc "2.0", an id, and either an error object (an
// integer code, a string message, any data: its texts are the message and
// the data when a string) or a result object (isError true or false; its
// text is that of a content array of one text item, and the strings of
// that text when it is a JSON object), and no other member. ok is false for
// anything else, which clients read apart: a key twice or in another letter
// case, a method (a request), both error and result, another member (the
// TypeScript SDK refuses it).
func readCallReply(b []byte) (id []byte, a answer, ok bool) {
	var sp replySpans
	r, ok := readEnvelope(b, func(s *scanner) bool { return s.outcome(&sp) }, func(s *scanner) bool { return s.errorObject(&sp) })
	if !ok || !r.version || r.id.kind == absent || r.method.kind != absent || r.other {
		return nil, answer{}, false
	}
	a, ok = sp.answer(b, r)
	return r.id.raw(b), a, ok
}

// replySpans locates what readCallReply reads of a reply's error or result.
type replySpans struct {
	code, message, data, text span
	isError                   bool
}

// answer makes the answer of the reply in b, an error or a result.
func (r *replySpans) answer(b []byte, m envelope) (answer, bool) {
	var a answer
	var scratch [256]byte
	switch {
	case m.hasError && !m.hasResult && r.code.kind == kInt && jsSafeInteger(r.code.raw(b)) && r.message.kind == kString:
		a = answer{kind: kindError, texts: []string{string(decoded(scratch[:0], b, r.message))}}
		a.code, _ = strconv.ParseInt(string(r.code.raw(b)), 10, 64) // kInt: it fits
		if r.data.kind == kString {
			a.texts = append(a.texts, string(decoded(scratch[:0], b, r.data)))
		}
	case m.hasResult && !m.hasError && r.text.kind == kString:
		a = answer{kind: kindResult, texts: []string{string(decoded(scratch[:0], b, r.text))}}
		if r.isError {
			a.kind = kindIsError
		}
		a.texts = append(a.texts, jsonTexts(a.texts[0])...)
	default:
		return answer{}, false
	}
	return a, true
}

// errorObject reads an error object for readCallReply.
func (s *scanner) errorObject(r *replySpans) bool {
	return s.spans(errorKeys, &r.code, &r.message, &r.data)
}

// outcome reads a result object for readCallReply: isError, and the text
// of its content when that is one item of type "text".
func (s *scanner) outcome(r *replySpans) bool {
	return s.members(outcomeKeys, func(k int) bool {
		switch k {
		case 0:
			r.isError = s.lit("true")
			return r.isError || s.lit("false")
		case 1:
			items := 0
			ok := s.lit("null") || s.elements('[', func() bool {
				var typ, txt span
				items++
				ok := s.spans(contentKeys, &typ, &txt)
				if ok && typ.kind == kString && strEquals(s.b, typ, "text") {
					r.text = txt
				}
				return ok
			})
			if items != 1 {
				r.text = span{}
			}
			return ok
		}
		return s.value()
	})
}

// jsonTexts returns, for a text that is a JSON object, the strings of its
// error and message members (and those of an error object): servers that
// answer with JSON in a text content ({"error":"Unknown tool: X"}).
func jsonTexts(text string) []string {
	text = strings.TrimSpace(text)
	if !strings.HasPrefix(text, "{") {
		return nil
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(text), &obj) != nil {
		return nil
	}
	var out []string
	for _, k := range [...]string{"error", "message", "detail"} {
		raw, ok := obj[k]
		if !ok {
			continue
		}
		var str string
		if json.Unmarshal(raw, &str) == nil {
			out = append(out, str)
			continue
		}
		var inner struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(raw, &inner) == nil && inner.Message != "" {
			out = append(out, inner.Message)
		}
	}
	return out
}

// A saying is what a text says of the called tool.
type saying uint8

const (
	saysNothing    saying = iota
	saysBare              // "Unknown tool", "Tool not found": no tool named
	saysNamed             // names the tool as unknown, then more (an explanation, the list)
	saysNamedWhole        // names the tool as unknown, and nothing more
)

// matchNotFound reads a text by the grammar of docs/RULES.md §2.
func matchNotFound(text, name string) saying {
	t := stripPrefixes(text)
	if bare(t) {
		return saysBare
	}
	rest, ok, noun := phrase(t, name)
	if !ok {
		return saysNothing
	}
	if !noun {
		// "X not found" names no tool: it may be a tool's own error
		// about a thing named like it ("document not found: id 42" from
		// the tool document); "Tool X is not available" may name one the
		// server has. Each counts only as a bare saying does.
		return saysBare
	}
	switch trimmed := strings.TrimSpace(rest); {
	case trimmed == "" || trimmed == "." || trimmed == "!":
		return saysNamedWhole
	case strings.TrimLeft(rest, " \t")[0] == '\n' || strings.TrimLeft(rest, " \t")[0] == '\r':
		return saysNamed // diagnostics on the next lines
	default:
		if r, _ := utf8.DecodeRuneInString(trimmed); strings.ContainsRune(".:;,!(-–—", r) {
			return saysNamed
		}
	}
	return saysNothing
}

// stripPrefixes cuts what servers put before the message (docs/RULES.md
// §2), as often as they come.
func stripPrefixes(t string) string {
	for {
		t = strings.TrimSpace(t)
		u := strings.TrimLeftFunc(t, emphasis)
		switch {
		case strings.HasPrefix(t, "#"):
			i := strings.IndexByte(t, '\n')
			if i < 0 {
				return strings.TrimSpace(strings.TrimLeft(t, "# "))
			}
			t = t[i+1:]
			continue
		case u != t:
			t = u
			continue
		}
		if rest, ok := cutFold(t, "mcp error "); ok {
			code, after, found := strings.Cut(rest, ":")
			if _, err := strconv.Atoi(strings.TrimSpace(code)); !found || err != nil {
				return t
			}
			t = after
			continue
		}
		if rest, ok := cutLabel(t); ok {
			t = rest
			continue
		}
		// "Error:", "Error -", "**Error**:", or a JavaScript error's name ("McpError: ...").
		if i := strings.IndexAny(t, ": "); i > 0 && strings.HasSuffix(strings.ToLower(strings.TrimRight(t[:i], "*_")), "error") {
			if rest := strings.TrimLeft(t[i:], "*_ "); strings.HasPrefix(rest, ":") || strings.HasPrefix(rest, "- ") {
				t = strings.TrimPrefix(strings.TrimPrefix(rest, ":"), "- ")
				continue
			}
		}
		if rest, ok := cutErrorWords(t); ok {
			t = rest
			continue
		}
		return t
	}
}

// cutLabel cuts a label and what follows it up to a colon ("Failed to call
// tool X:"), or a JSON-RPC error's message before the server's (php-mcp/server).
func cutLabel(t string) (string, bool) {
	for _, p := range [...]string{"failed to call tool", "tool execution failed", "method not found", "invalid params", "resource not found", "not found"} {
		if rest, ok := cutFold(t, p); ok && (rest == "" || rest[0] == ' ' || rest[0] == ':') {
			head, after, found := strings.Cut(rest, ":")
			return after, found && !strings.ContainsAny(strings.TrimSpace(head), " \n") // at most a name
		}
	}
	return t, false
}

// cutErrorWords cuts a few words that start or end with the word Error,
// and a colon ("Error executing tool X:", "Linear API error:").
func cutErrorWords(t string) (string, bool) {
	head, rest, ok := strings.Cut(t, ":") // (t is trimmed)
	first, _, _ := strings.Cut(head, " ")
	words := strings.Count(head, " ") + 1
	return rest, ok && words > 1 && words <= 6 && !strings.Contains(head, "\n") &&
		(strings.EqualFold(first, "error") || len(head) > 6 && strings.EqualFold(head[len(head)-6:], " error"))
}

// emphasis reports a rune servers put before a message: markdown
// emphasis, or a symbol (❌).
func emphasis(r rune) bool { return r == '*' || r == '_' || unicode.In(r, unicode.So, unicode.Mn) }

// bare reports whether t says only that a tool is unknown, naming none.
func bare(t string) bool {
	t = strings.TrimRight(strings.TrimSpace(t), ".!")
	for _, b := range [...]string{"unknown tool", "tool not found", "no such tool", "unknown tool name", "tool does not exist", "invalid tool", "tool not available"} {
		if strings.EqualFold(t, b) {
			return true
		}
	}
	return false
}

// Phrases that name a tool as unknown: the name comes after one of
// namedAfter ("Unknown tool: X"), or between "tool " and one of
// namedBefore ("Tool X not found").
var (
	namedAfter = [...]string{
		"unknown tool name", "unknown tool", "tool not found", "no such tool", "no tool named", "no tool called",
		"invalid tool name", "invalid tool", "could not find tool", "couldn't find tool", "cannot find tool", "未知的工具", "未知工具", "找不到工具",
		"can't find tool", "unable to find tool", "tool does not exist", "unsupported tool", "unrecognized tool name",
		"unrecognized tool", "unrecognised tool name", "unrecognised tool", "tool not registered", "missing tool",
		"tool not available", "tool not implemented", // (these two may speak of a tool the server has)
		"unknown method", // (of a tool named after a method it calls upstream too)
	}
	namedBefore = [...]string{
		" not found", " was not found", " is not found", " could not be found", " cannot be found",
		" does not exist", " doesn't exist", " is unknown", " is not registered", " not registered",
		" is not a known tool", " is not a valid tool",
	}
	// Phrases that may speak of a tool the server has but cannot run now
	// ("Tool screenshot is not available: no display is attached";
	// @dangahagan/weather-mcp answers every name it does not run "is not
	// enabled"): unknown only to a caller whose list lacks the name.
	namedUnavailable = [...]string{
		" is not enabled", " is disabled", " is not available", " not available", " is not supported", " not supported",
	}
)

// phrase finds, at the start of t, a phrase naming name as an unknown
// tool, and returns what follows it; noun reports that the phrase says
// the name is a tool's, not just a name (or a method's), and that the
// tool is unknown, not just turned off.
func phrase(t, name string) (rest string, ok, noun bool) {
	for _, p := range namedAfter {
		if r, ok := cutFold(t, p); ok {
			if r, ok = nameAfter(r, p, name); ok {
				return r, true, p != "tool not available" && p != "tool not implemented" && p != "unknown method"
			}
		}
	}
	if rest, ok := strings.CutPrefix(t, "missing tool, toolName="); ok && rest == name {
		return "", true, true // ThinkInAIXYZ/go-mcp
	}
	// "Tool X not found", or the name alone: "X not found", "'X' is not a
	// known tool". "Method X not found" (@notionhq/notion-mcp-server) names
	// no tool: a tool named after an upstream JSON-RPC method may fail so.
	r := t
	for _, n := range [...]string{"the tool ", "tool ", "method "} {
		if s, ok := cutFold(t, n); ok {
			r, noun = s, n != "method "
			break
		}
	}
	r, ok = cutQuoted(r, name)
	if !ok {
		return "", false, false
	}
	for _, p := range namedBefore {
		if s, ok := cutFold(r, p); ok {
			return s, true, noun || strings.Contains(p, "tool")
		}
	}
	for _, p := range namedUnavailable {
		if s, ok := cutFold(r, p); ok {
			return s, true, false
		}
	}
	return "", false, false
}

// nameAfter cuts name from r, what follows the phrase p of namedAfter:
// after a separator, if any, and after "Unknown tool", a few words up to a
// colon ("Unknown tool for this Gradio app: X"; one clause).
func nameAfter(r, p, name string) (string, bool) {
	if head, _, ok := strings.Cut(r, ":"); ok && p == "unknown tool" && strings.HasPrefix(head, " for ") && !strings.ContainsAny(head, ".,;\n") && strings.Count(head, " ") < 7 {
		r = r[len(head):]
	}
	r = strings.TrimLeft(r, " ")
	for _, sep := range [...]string{":", "：", "=", "-", "named", "called"} {
		if s, ok := cutFold(r, sep); ok {
			r = strings.TrimLeft(s, " ")
			break
		}
	}
	return cutQuoted(r, name)
}

// cutFold cuts prefix from s, ignoring ASCII letter case. The first bytes
// are compared first, case bit set: most calls fail there.
func cutFold(s, prefix string) (string, bool) {
	if len(s) < len(prefix) || len(prefix) > 0 && s[0]|0x20 != prefix[0]|0x20 || !strings.EqualFold(s[:len(prefix)], prefix) {
		return s, false
	}
	return s[len(prefix):], true
}

// cutQuoted cuts name from the start of s: bare, in single, double, back
// or typographic quotes, in brackets (laravel/mcp, @twilio-alpha/mcp's
// "Tool (X) not found"), or Go-quoted. A bare name must end there (not go
// on as a longer name).
func cutQuoted(s, name string) (string, bool) {
	for _, q := range [...][2]string{{`"`, `"`}, {"'", "'"}, {"`", "`"}, {"“", "”"}, {"‘", "’"}, {"«", "»"}, {"[", "]"}, {"(", ")"}, {"<", ">"}} {
		if r, ok := strings.CutPrefix(s, q[0]); ok && strings.HasPrefix(r, name) && strings.HasPrefix(r[len(name):], q[1]) {
			return r[len(name)+len(q[1]):], true
		}
	}
	if strings.HasPrefix(s, `"`) { // Go-quoted (go-sdk's %q)
		if rest, ok := strings.CutPrefix(s, strconv.Quote(name)); ok {
			return rest, true
		}
	}
	if rest, ok := strings.CutPrefix(s, name); ok && name != "" && (rest == "" || !nameRune(rest)) {
		return rest, true
	}
	return s, false
}

// nameRune reports whether s starts with a rune that could go on a tool
// name (a letter, digit, _, - or a dot followed by one of those).
func nameRune(s string) bool {
	c := s[0]
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-' && len(s) > 1 && s[1] != ' ', c >= 0x80:
		return true
	case c == '.' && len(s) > 1:
		d := s[1]
		return d >= 'a' && d <= 'z' || d >= 'A' && d <= 'Z' || d >= '0' && d <= '9' || d == '_'
	}
	return false
}
