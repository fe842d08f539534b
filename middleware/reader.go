package toolguard

import (
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxDepth bounds the nesting of arrays and objects the reader accepts.
// go-sdk rejects messages nested deeper than 1000 levels and encoding/json
// deeper than 10000; a body deeper than maxDepth is outside the strict subset
// and passed through, so the kit never answers what an SDK would refuse.
const maxDepth = 500

// kind is the JSON type of a member the reader captured.
type kind uint8

const (
	absent kind = iota
	kString
	kInt // an integer literal that fits in an int64
	kOther
)

// span locates a captured value in the body. For a string, it covers the
// token including its quotes.
type span struct {
	kind       kind
	start, end int
	escaped    bool // a string containing backslash escapes
}

func (s span) raw(b []byte) []byte { return b[s.start:s.end] }

// message is what the strict reader takes from a body. Its fields mean
// something only when strict is true.
type message struct {
	strict bool

	jsonrpc span
	id      span
	method  span
	params  span // the params value (an object when paramsObject), or absent
	name    span // params.name
	version span // params._meta["io.modelcontextprotocol/protocolVersion"]
	meta    span // params._meta, an object (kOther), or absent

	paramsObject bool
}

const metaVersionKey = "io.modelcontextprotocol/protocolVersion"

// Keys the reader looks for, per level. A key equal to one of them under
// case folding (or with invisible characters added) makes the body ambiguous:
// decoders disagree on which member they read. In params, after the six
// read here, the others mcp-go v1.6 refuses so (docs/RULES.md §4).
var (
	topKeys    = []string{"jsonrpc", "id", "method", "params", "result", "error"}
	paramsKeys = []string{"name", "_meta", "arguments", "task", "inputResponses", "requestState",
		"uri", "cursor", "protocolVersion", "capabilities", "clientInfo", "level", "ref", "argument", "requestId",
		"progressToken", "taskId", "reason", "context", "notifications", "progress", "total", "message"}
	metaKeys = []string{metaVersionKey, "progressToken"} // progressToken: see docs/RULES.md §4
)

// readMessage scans b once and reports what a JSON-RPC request in the strict
// subset carries. It never allocates on bodies without escaped keys.
func readMessage(b []byte) message {
	s := scanner{b: b}
	var m message
	s.ws()
	if !s.topObject(&m) {
		return message{}
	}
	s.ws()
	if s.i != len(b) {
		return message{}
	}
	m.strict = true
	return m
}

type scanner struct {
	b     []byte
	i     int
	depth int
}

func (s *scanner) ws() { s.i = skipWS(s.b, s.i) }

// skipWS returns the index of the first byte from i that is not JSON space.
func skipWS(b []byte, i int) int {
	for i < len(b) && b[i] <= ' ' { // (a byte above the space ends it at once)
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// members walks an object at s.i. For each key it calls visit
// with the index of the key among keys (-1 for any other key); visit scans
// the value and reports success. A duplicate or ambiguous key among keys fails.
func (s *scanner) members(keys []string, visit func(k int) bool) bool {
	var seen uint32 // (keys has at most 32)
	return s.elements('{', func() bool {
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			return false
		}
		key, ok := s.str()
		if !ok {
			return false
		}
		k, ok := classifyKey(s.b, key, keys)
		if !ok {
			return false
		}
		if k >= 0 {
			if seen&(1<<k) != 0 {
				return false // duplicate: decoders differ on which one wins
			}
			seen |= 1 << k
		}
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return false
		}
		s.i++
		s.ws()
		return visit(k)
	})
}

// spans walks an object at s.i as members does, capturing the value of
// keys[k] into dst[k] and stepping over any other.
func (s *scanner) spans(keys []string, dst ...*span) bool {
	return s.members(keys, func(k int) bool {
		if k >= 0 && k < len(dst) {
			return s.capture(dst[k])
		}
		return s.value()
	})
}

// elements walks an array or object, whose opening bracket, open ('[' or
// '{'), must be at s.i, up to its closing one. For each element (an
// object's is a member, key and value) it calls element, which scans it
// and reports success; between them it steps over a comma.
func (s *scanner) elements(open byte, element func() bool) bool {
	if s.i >= len(s.b) || s.b[s.i] != open || !s.enter() {
		return false
	}
	end := open + 2 // ']' is '[' + 2, '}' is '{' + 2
	s.i++
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == end {
		s.i++
		s.depth--
		return true
	}
	for {
		if !element() {
			return false
		}
		s.ws()
		if s.i >= len(s.b) {
			return false
		}
		switch s.b[s.i] {
		case ',':
			s.i++
			s.ws()
		case end:
			s.i++
			s.depth--
			return true
		default:
			return false
		}
	}
}

func (s *scanner) topObject(m *message) bool {
	return s.members(topKeys, func(k int) bool {
		switch k {
		case 0:
			return s.capture(&m.jsonrpc)
		case 1:
			return s.capture(&m.id)
		case 2:
			return s.capture(&m.method)
		case 3:
			if s.i < len(s.b) && s.b[s.i] == '{' {
				start := s.i
				m.paramsObject = true
				ok := s.paramsObject(m)
				m.params = span{kind: kOther, start: start, end: s.i}
				return ok
			}
			return s.capture(&m.params)
		case 4, 5:
			return false // a request carrying result or error is read as a response by some SDKs
		}
		return false // any other member: the TypeScript SDKs refuse the request
	})
}

// paramsObject reads params, within the strict subset (docs/RULES.md §4).
func (s *scanner) paramsObject(m *message) bool {
	return s.members(paramsKeys, func(k int) bool {
		switch k {
		case 0:
			return s.capture(&m.name)
		case 1:
			start := s.i
			ok := s.members(metaKeys, func(k int) bool {
				switch k {
				case 0:
					return s.capture(&m.version)
				case 1:
					var sp span
					return s.capture(&sp) && (sp.kind == kString || sp.kind == kInt && jsSafeInteger(sp.raw(s.b)))
				}
				return s.value()
			})
			m.meta = span{kind: kOther, start: start, end: s.i}
			return ok
		case 2:
			return s.i < len(s.b) && s.b[s.i] == '{' && s.value()
		case 3, 4:
			// A task-augmented call (servers without task support refuse
			// it before the lookup, and they disagree on its ttl), or a
			// retry with answers to a server's input requests (decoded by
			// type first): left to the server.
			return false
		case 5:
			var sp span
			return s.capture(&sp) && sp.kind == kString
		}
		return s.value()
	})
}

// cursorKeys are the members listCursor reads.
var cursorKeys = []string{"cursor"}

// listCursor returns the cursor a tools/list m asks with, as servers read
// it: "" for none (absent, or null). ok is false when it is spelled twice
// or in another letter case (encoding/json takes "Cursor" too, and the
// last of two; the TypeScript SDKs read "cursor" alone), or is neither a
// string nor null.
func listCursor(body []byte, m message) (cursor string, ok bool) {
	if !m.paramsObject {
		return "", true
	}
	s := scanner{b: body, i: m.params.start}
	var sp span
	ok = s.members(cursorKeys, func(k int) bool {
		if k == 0 {
			return s.capture(&sp) && (sp.kind == kString || string(sp.raw(body)) == "null")
		}
		return s.value()
	})
	if !ok || sp.kind != kString {
		return "", ok
	}
	return string(decoded(nil, body, sp)), true
}

// envelopeKeys are the members of a JSON-RPC message readEnvelope reads.
var envelopeKeys = []string{"jsonrpc", "id", "result", "error", "method"}

// An envelope is what readEnvelope takes from a JSON-RPC message: a reply
// when it has no method. other: a member none of envelopeKeys.
type envelope struct {
	id, method                 span // absent when it has none
	version                    bool // jsonrpc is "2.0"
	hasResult, hasError, other bool
}

// readEnvelope reads b, one JSON-RPC message in the strict subset, with
// result and errorObject reading its result and error members (nil:
// stepped over as any value); ok is false for anything else.
func readEnvelope(b []byte, result, errorObject func(*scanner) bool) (r envelope, ok bool) {
	s := scanner{b: b}
	s.ws()
	ok = s.members(envelopeKeys, func(k int) bool {
		switch k {
		case 0:
			var sp span
			ok := s.capture(&sp)
			r.version = ok && sp.kind == kString && strEquals(b, sp, "2.0")
			return ok
		case 1:
			return s.capture(&r.id)
		case 2:
			if r.hasResult = true; result != nil {
				return result(&s)
			}
		case 3:
			if r.hasError = true; errorObject != nil {
				return errorObject(&s)
			}
		case 4:
			return s.capture(&r.method)
		default:
			r.other = true
		}
		return s.value()
	})
	s.ws()
	return r, ok && s.i == len(b)
}

// capture scans a value and records where it is and what kind it is.
func (s *scanner) capture(sp *span) bool {
	start := s.i
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		v, ok := s.str()
		*sp = v
		return ok
	case c == '-' || (c >= '0' && c <= '9'):
		end, isInt, ok := scanNumber(s.b, s.i)
		if !ok {
			return false
		}
		s.i = end
		*sp = span{kind: kOther, start: start, end: s.i}
		if isInt && fitsInt64(s.b[start:s.i]) {
			sp.kind = kInt
		}
		return true
	}
	if !s.value() {
		return false
	}
	*sp = span{kind: kOther, start: start, end: s.i}
	return true
}

func (s *scanner) enter() bool {
	s.depth++
	return s.depth <= maxDepth
}

// value scans any JSON value at s.i.
func (s *scanner) value() bool {
	end, ok := skipValue(s.b, s.i, s.depth)
	s.i = end
	return ok
}

// str scans a string token at s.i (which holds '"').
func (s *scanner) str() (span, bool) {
	start := s.i
	end, escaped, ok := scanString(s.b, s.i)
	s.i = end
	return span{kind: kString, start: start, end: end, escaped: escaped}, ok
}

// skipValue scans the JSON value at i, which lies inside depth arrays and
// objects, and returns the index after it. It applies every rule of the
// strict subset: maxDepth, strings (escapes, surrogates, UTF-8, control
// bytes) and numbers in the float64 range. Arrays and objects recurse, one
// call a level; strings, the long part of large arguments, are read eight
// bytes at a time (scanString).
func skipValue(b []byte, i, depth int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch b[i] {
	case '"':
		end, _, ok := scanString(b, i)
		return end, ok
	case '{', '[':
		if depth >= maxDepth {
			return i, false
		}
		return skipContainer(b, i, depth+1)
	case 't':
		return literal(b, i, "true")
	case 'f':
		return literal(b, i, "false")
	case 'n':
		return literal(b, i, "null")
	}
	if c := b[i]; c >= '0' && c <= '9' && i+1 < len(b) && !numberByte[b[i+1]] {
		return i + 1, true // a one-digit number, the commonest
	}
	end, _, ok := scanNumber(b, i)
	return end, ok
}

var numberByte = [256]bool{'0': true, '1': true, '2': true, '3': true, '4': true, '5': true, '6': true, '7': true, '8': true, '9': true, '.': true, 'e': true, 'E': true}

// skipContainer scans the array or object whose bracket is at i; its
// elements lie inside depth containers.
func skipContainer(b []byte, i, depth int) (int, bool) {
	obj, end := b[i] == '{', byte(']')
	if obj {
		end = '}'
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == end {
		return i + 1, true
	}
	for {
		var ok bool
		if obj {
			if i >= len(b) || b[i] != '"' {
				return i, false
			}
			if i, _, ok = scanString(b, i); !ok {
				return i, false
			}
			if i = skipWS(b, i); i >= len(b) || b[i] != ':' {
				return i, false
			}
			i = skipWS(b, i+1)
		}
		if i, ok = skipValue(b, i, depth); !ok {
			return i, false
		}
		if i = skipWS(b, i); i >= len(b) {
			return i, false
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case end:
			return i + 1, true
		default:
			return i, false
		}
	}
}

// literal scans the literal lit (true, false or null) at i.
func literal(b []byte, i int, lit string) (int, bool) {
	if len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit {
		return i + len(lit), true
	}
	return i, false
}

// scanNumber scans a JSON number at i and reports whether it is an integer
// literal. A number outside the float64 range is outside the strict subset:
// the decoders behind the kit fail on it.
func scanNumber(b []byte, i int) (end int, isInt, ok bool) {
	start := i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		return i, false, false
	}
	isInt = true
	if i < len(b) && b[i] == '.' {
		if i, ok = someDigits(b, i+1); !ok {
			return i, false, false
		}
		isInt = false
	}
	exp := i < len(b) && b[i]|0x20 == 'e'
	if exp {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i, ok = someDigits(b, i); !ok {
			return i, false, false
		}
		isInt = false
	}
	// Short integer and decimal literals are always in range.
	if exp || i-start > 15 {
		if _, err := strconv.ParseFloat(string(b[start:i]), 64); err != nil {
			return i, false, false
		}
	}
	return i, isInt, true
}

// digits returns the index after the run of decimal digits at i.
func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// someDigits is digits for a run that must not be empty.
func someDigits(b []byte, i int) (int, bool) {
	end := digits(b, i)
	return end, end > i
}

func fitsInt64(b []byte) bool {
	if len(b) < 19 {
		return true
	}
	_, err := strconv.ParseInt(string(b), 10, 64)
	return err == nil
}

// strSafe marks bytes that need no attention inside a string.
var strSafe = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// special flags, in the top bit of each byte of the little-endian word x,
// the bytes a string scan must stop at: '"', '\\', control bytes below
// 0x20 and non-ASCII bytes. Each byte is tested on its low seven bits, so
// no carry crosses into the next byte and every flag is exact. Flipping
// bit 1 maps '"' (0x22) to 0x20 and the bytes below 0x20 among themselves,
// so one comparison finds both.
func special(x uint64) uint64 {
	lo := x &^ msb
	text := (lo ^ lsb*0x02) + lsb*(0x80-0x21)  // top bit set: lo >= 0x20 and lo != '"'
	notBackslash := (lo ^ lsb*'\\') + lsb*0x7f // top bit set: lo != '\\'
	return (^(text & notBackslash) | x) & msb
}

// scanString scans a string token at i (which holds '"'), checking escapes,
// UTF-8 and surrogate pairs, and returns the index after its closing quote
// and whether it holds backslash escapes. Runs of plain ASCII are skipped
// eight bytes at a time; UTF-8 is decoded only where a byte is not ASCII.
func scanString(b []byte, i int) (end int, escaped, ok bool) {
	i++ // past the opening quote
	for {
		// Most strings (keys) end within their first eight bytes: that
		// word is read here, without the call.
		if i+8 > len(b) {
			i = plainRun(b, i)
		} else if m := special(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			i += bits.TrailingZeros64(m) >> 3
		} else {
			i = plainRun(b, i+8)
		}
		if i >= len(b) {
			return i, escaped, false
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, escaped, true
		case c == '\\':
			escaped = true
			n, ok := escape(b, i)
			if !ok {
				return i, escaped, false
			}
			i = n
		case c < 0x20:
			return i, escaped, false
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				return i, escaped, false
			}
			i += size
		}
	}
}

// plainRun returns the index of the first byte at or after i that a
// string scan stops at (see special), or len(b): eight bytes at a time,
// then one by one.
func plainRun(b []byte, i int) int {
	for ; i+8 <= len(b); i += 8 {
		if m := special(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for i < len(b) && strSafe[b[i]] {
		i++
	}
	return i
}

// escape checks the escape sequence at b[i] == '\\' and returns the index
// after it. A \u escape of a surrogate must be a valid pair.
func escape(b []byte, i int) (int, bool) {
	if i+1 >= len(b) {
		return 0, false
	}
	switch b[i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return i + 2, true
	case 'u':
		r, ok := hex4(b, i+2)
		if !ok {
			return 0, false
		}
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return 0, false // lone low surrogate
		case r >= 0xD800 && r <= 0xDBFF:
			if i+7 >= len(b) || b[i+6] != '\\' || b[i+7] != 'u' {
				return 0, false
			}
			lo, ok := hex4(b, i+8)
			if !ok || lo < 0xDC00 || lo > 0xDFFF {
				return 0, false
			}
			return i + 12, true
		}
		return i + 6, true
	}
	return 0, false
}

func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// strEquals reports whether the string at sp decodes to want.
func strEquals(body []byte, sp span, want string) bool {
	if !sp.escaped {
		return string(body[sp.start+1:sp.end-1]) == want
	}
	var scratch [64]byte
	return string(decoded(scratch[:0], body, sp)) == want
}

// decoded returns the string at sp, decoded as encoding/json decodes it,
// using dst when it can.
func decoded(dst, body []byte, sp span) []byte {
	if !sp.escaped {
		return body[sp.start+1 : sp.end-1]
	}
	var s string
	_ = json.Unmarshal(sp.raw(body), &s) // a token the reader accepted: it decodes
	return append(dst, s...)
}

// classifyKey returns the index of key among keys, or -1 for an unrelated
// key. ok is false when the key is ambiguous: not one of keys, but equal to
// one of them under Unicode case folding once invisible characters are
// dropped (NAME, paramſ, name\u0000, ...).
func classifyKey(b []byte, sp span, keys []string) (k int, ok bool) {
	var buf [64]byte
	raw, dec := b[sp.start+1:sp.end-1], decoded(buf[:0], b, sp)
	for j, key := range keys {
		if string(dec) == key {
			return j, true
		}
	}
	plain := !sp.escaped
	for i := 0; plain && i < len(raw); i++ {
		plain = raw[i] < utf8.RuneSelf && raw[i] != 0x7f && raw[i] != ' '
	}
	if plain {
		for _, key := range keys {
			if len(raw) == len(key) && strings.EqualFold(string(raw), key) {
				return -1, false
			}
		}
		return -1, true
	}
	vis := visible(dec)
	for _, key := range keys {
		if strings.EqualFold(vis, key) {
			return -1, false
		}
	}
	return -1, true
}

// visible drops the code points a reader cannot see: control and format
// characters, combining marks, spaces and invalid bytes.
func visible(b []byte) string {
	out := make([]byte, 0, len(b))
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		b = b[n:]
		if r == utf8.RuneError || unicode.In(r, unicode.Cc, unicode.Cf, unicode.Mn, unicode.Me, unicode.Z) ||
			unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) {
			continue
		}
		out = utf8.AppendRune(out, r)
	}
	return string(out)
}
