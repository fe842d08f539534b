package toolguard

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// decodedCall is what a decoder reads from a request body.
type decodedCall struct {
	jsonrpc, method, name string
	id                    string // raw bytes
	hasParams             bool
}

// foldingDecoder decodes like encoding/json into a struct, as mcp-go does:
// keys match case-insensitively and the last duplicate wins.
func foldingDecoder(b []byte) (decodedCall, error) {
	var msg struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(b, &msg); err != nil {
		return decodedCall{}, err
	}
	d := decodedCall{jsonrpc: msg.JSONRPC, method: msg.Method, id: string(msg.ID)}
	if len(msg.Params) > 0 && msg.Params[0] == '{' {
		var p struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(msg.Params, &p); err != nil {
			return decodedCall{}, err
		}
		d.name, d.hasParams = p.Name, true
	}
	return d, nil
}

// exactDecoder decodes with case-sensitive keys, the last duplicate winning,
// as go-sdk's decoder matches keys.
func exactDecoder(b []byte) (decodedCall, error) {
	var msg map[string]json.RawMessage
	if err := json.Unmarshal(b, &msg); err != nil {
		return decodedCall{}, err
	}
	var d decodedCall
	str := func(raw json.RawMessage) (string, error) {
		var s string
		if raw == nil {
			return "", nil
		}
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	var err error
	if d.jsonrpc, err = str(msg["jsonrpc"]); err != nil {
		return d, err
	}
	if d.method, err = str(msg["method"]); err != nil {
		return d, err
	}
	d.id = string(msg["id"])
	if p := msg["params"]; len(p) > 0 && p[0] == '{' {
		var pm map[string]json.RawMessage
		if err := json.Unmarshal(p, &pm); err != nil {
			return d, err
		}
		if d.name, err = str(pm["name"]); err != nil {
			return d, err
		}
		d.hasParams = true
	}
	return d, nil
}

// agree checks that when the reader says a body is strict, both decoders
// read the same jsonrpc, id, method and params.name from it.
func agree(b []byte) error {
	m := readMessage(b)
	if !m.strict {
		return nil
	}
	mine := decodedCall{hasParams: m.paramsObject}
	if m.jsonrpc.kind == kString {
		mine.jsonrpc = string(decoded(nil, b, m.jsonrpc))
	}
	if m.method.kind == kString {
		mine.method = string(decoded(nil, b, m.method))
	}
	if m.id.kind != absent {
		mine.id = string(m.id.raw(b))
	}
	if m.name.kind == kString {
		mine.name = string(decoded(nil, b, m.name))
	}
	for _, dec := range []struct {
		name string
		fn   func([]byte) (decodedCall, error)
	}{{"folding", foldingDecoder}, {"exact", exactDecoder}} {
		got, err := dec.fn(b)
		if err != nil {
			// The decoder refuses a field's type (method: 1, say): the reader
			// must not have captured that field as a string.
			if m.jsonrpc.kind == kString && m.method.kind == kString && (!m.paramsObject || m.name.kind == kString) {
				return fmt.Errorf("reader says strict with string fields, %s decoder fails: %v", dec.name, err)
			}
			continue
		}
		if m.jsonrpc.kind == kString && got.jsonrpc != mine.jsonrpc ||
			m.method.kind == kString && got.method != mine.method ||
			m.id.kind != absent && got.id != mine.id ||
			m.name.kind == kString && got.name != mine.name ||
			got.hasParams != mine.hasParams {
			return fmt.Errorf("%s decoder reads %+v, reader %+v", dec.name, got, mine)
		}
	}
	return nil
}

func TestReaderStrictSubset(t *testing.T) {
	const ok = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}}}`
	deep := strings.Repeat("[", maxDepth+5) + strings.Repeat("]", maxDepth+5)
	tests := []struct {
		name   string
		body   string
		strict bool
	}{
		{"plain", ok, true},
		{"whitespace around", " \n\t" + ok + "\r\n ", true},
		{"escaped method value", `{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{"name":"\u0078"}}`, true},
		{"surrogate pair in name", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"\ud83d\ude00"}}`, true},
		{"unrelated duplicate keys deeper", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":1,"a":2}}}`, true},
		{"escaped key equal to name", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"\u006eame":"x"}}`, true},
		{"a cursor in a call's params", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","cursor":"c"}}`, true},

		// The known ambiguous inputs of docs/RULES.md §2.
		{"duplicate name", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","name":"b"}}`, false},
		{"duplicate method", `{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call","params":{"name":"a"}}`, false},
		{"duplicate params", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"},"params":{"arguments":{}}}`, false},
		{"NAME alone", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"NAME":"a"}}`, false},
		{"Name alone", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"Name":"a"}}`, false},
		{"name plus NAME", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","NAME":"b"}}`, false},
		{"paramſ", `{"jsonrpc":"2.0","id":1,"method":"tools/call","paramſ":{"name":"a"}}`, false},
		{"Kelvin sign in name key", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","\u212Aey":1,"na\u004De":"b"}}`, false},
		{"name with NUL suffix", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name\u0000":"b"}}`, false},
		{"name with zero-width suffix", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","name\u200b":"b"}}`, false},
		{"name with DEL suffix", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\x7f\":\"b\"}}", false},
		{"invalid UTF-8 in name", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"a\xff\"}}", false},
		{"lone high surrogate", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"\ud800"}}`, false},
		{"lone low surrogate", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"\udc00x"}}`, false},
		{"leading BOM", "\ufeff" + ok, false},
		{"trailing garbage", ok + "x", false},
		{"second object", ok + ok, false},
		{"batch", "[" + ok + "]", false},
		{"name then name null", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","name":null}}`, false},
		{"id 1e400", `{"jsonrpc":"2.0","id":1e400,"method":"tools/call","params":{"name":"a"}}`, false},
		{"unparseable number in arguments", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"n":1e999}}}`, false},
		{"bad number in arguments", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"n":01}}}`, false},
		{"very deep arguments", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"d":` + deep + `}}}`, false},
		{"arguments not an object", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":[1]}}`, false},
		{"arguments null", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":null}}`, false},
		{"_meta not an object", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","_meta":5}}`, false},
		{"Arguments", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","Arguments":{}}}`, false},
		// Other params members mcp-go v1.6 refuses (-32600) twice or in
		// another letter case, before its lookup.
		{"Cursor", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","Cursor":"c"}}`, false},
		{"reason twice", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","reason":1,"reason":2}}`, false},
		{"progreſs", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","progreſs":1}}`, false},
		{"escaped URI", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","\u0055RI":"u"}}`, false},
		{"taskID", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","taskID":"t"}}`, false},
		{"Message", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","Message":"m"}}`, false},
		{"result key", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"},"result":{}}`, false},
		{"Error key", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"},"Error":{}}`, false},
		{"ID key", `{"jsonrpc":"2.0","ID":1,"method":"tools/call","params":{"name":"a"}}`, false},
		{"raw control char", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"a\tb\"}}", false},
		{"bad escape", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a\x"}}`, false},
		{"unterminated", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}`, false},
		{"empty", ``, false},
		{"trailing comma", `{"jsonrpc":"2.0","id":1,}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := readMessage([]byte(tt.body))
			if m.strict != tt.strict {
				t.Errorf("strict = %v, want %v", m.strict, tt.strict)
			}
			if err := agree([]byte(tt.body)); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestReaderCaptures(t *testing.T) {
	tests := []struct {
		body            string
		id              string
		idKind          kind
		name            string
		params, hasName bool
		methodToolsCall bool
		jsonrpc2        bool
	}{
		{`{"jsonrpc":"2.0","id":"a\"b","method":"tools/call","params":{"name":"x"}}`, `"a\"b"`, kString, "x", true, true, true, true},
		{`{"jsonrpc":"2.0","id":9223372036854775807,"method":"tools/call","params":{"name":"x"}}`, `9223372036854775807`, kInt, "x", true, true, true, true},
		{`{"jsonrpc":"2.0","id":9223372036854775808,"method":"tools/call","params":{"name":"x"}}`, `9223372036854775808`, kOther, "x", true, true, true, true},
		{`{"jsonrpc":"2.0","id":-5,"method":"tools/call","params":{"name":"x"}}`, `-5`, kInt, "x", true, true, true, true},
		{`{"jsonrpc":"2.0","id":1.5,"method":"tools/call","params":{"name":"x"}}`, `1.5`, kOther, "x", true, true, true, true},
		{`{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"x"}}`, `null`, kOther, "x", true, true, true, true},
		{`{"method":"tools/call","params":null,"jsonrpc":"2.0","id":7}`, `7`, kInt, "", false, false, true, true},
		{`{"method":"tools/call","params":{"name":123},"jsonrpc":"2.0","id":7}`, `7`, kInt, "", true, false, true, true},
		{`{"params":{"arguments":{"name":"inner"},"name":"outer"},"method":"tools/\u0063all","jsonrpc":"2.0","id":7}`, `7`, kInt, "outer", true, true, true, true},
		{`{"jsonrpc":"1.0","id":1,"method":"tools/list"}`, `1`, kInt, "", false, false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.body, func(t *testing.T) {
			b := []byte(tt.body)
			m := readMessage(b)
			if !m.strict {
				t.Fatal("not strict")
			}
			if got := string(m.id.raw(b)); got != tt.id || m.id.kind != tt.idKind {
				t.Errorf("id = %s (kind %d), want %s (kind %d)", got, m.id.kind, tt.id, tt.idKind)
			}
			if m.paramsObject != tt.params {
				t.Errorf("paramsObject = %v", m.paramsObject)
			}
			if (m.name.kind == kString) != tt.hasName || tt.hasName && string(decoded(nil, b, m.name)) != tt.name {
				t.Errorf("name = %+v", m.name)
			}
			if strEquals(b, m.method, "tools/call") != tt.methodToolsCall {
				t.Errorf("method = %s", m.method.raw(b))
			}
			if strEquals(b, m.jsonrpc, "2.0") != tt.jsonrpc2 {
				t.Errorf("jsonrpc = %s", m.jsonrpc.raw(b))
			}
			if err := agree(b); err != nil {
				t.Error(err)
			}
		})
	}
}

func FuzzReader(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"x","NAME":"y"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"\u006eame":"x","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","paramſ":{"name":"a"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a\ud83d\ude00","arguments":[1,2.5e3,true,null,"x"]}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"tools/call"}]`,
		`{"Method":"tools/call","method":"x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := agree(b); err != nil {
			t.Fatal(err)
		}
		m := readMessage(b)
		if m.strict && !json.Valid(b) {
			t.Fatalf("reader accepts invalid JSON %q", b)
		}
		if m.strict {
			// The guard takes params._meta from the reader's span: it
			// must be what encoding/json reads.
			var got []byte
			if m.meta.kind != absent {
				got = m.meta.raw(b)
			}
			var v struct {
				Params struct {
					Meta json.RawMessage `json:"_meta"`
				} `json:"params"`
			}
			if json.Unmarshal(b, &v) == nil && m.paramsObject && string(v.Params.Meta) != "null" && !bytes.Equal(got, v.Params.Meta) {
				t.Fatalf("meta span %q, encoding/json %q in %q", got, v.Params.Meta, b)
			}
		}
		if err := sameSkip(b); err != nil {
			t.Fatal(err)
		}
		// Followed by more bytes, the value goes through the word-at-a-time
		// paths, which stop short of the last bytes of b.
		if err := sameSkip(append(b[:len(b):len(b)], skipPad...)); err != nil {
			t.Fatal(err)
		}
	})
}

// skipPad, after a value, lets skipValue read it word at a time.
var skipPad = []byte(strings.Repeat(" ", 24))

// refSkip reads one JSON value under the rules skipValue applies, the plain
// way: recursive, one byte at a time (arrays and objects element by element,
// with the scanner's elements). It is the reference the fast scanner is
// checked against.
type refSkip struct{ scanner }

var refNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`)

func (r *refSkip) ws() {
	for r.i < len(r.b) && strings.IndexByte(" \t\n\r", r.b[r.i]) >= 0 {
		r.i++
	}
}

func (r *refSkip) value() bool {
	if r.i >= len(r.b) {
		return false
	}
	switch c := r.b[r.i]; c {
	case '{', '[':
		return r.elements(c, func() bool {
			if c == '{' {
				if r.i >= len(r.b) || r.b[r.i] != '"' || !r.str() {
					return false
				}
				r.ws()
				if r.i >= len(r.b) || r.b[r.i] != ':' {
					return false
				}
				r.i++
				r.ws()
			}
			return r.value()
		})
	case '"':
		return r.str()
	case 't', 'f', 'n':
		for _, lit := range []string{"true", "false", "null"} {
			if strings.HasPrefix(string(r.b[r.i:]), lit) {
				r.i += len(lit)
				return true
			}
		}
		return false
	}
	g := refNumber.FindSubmatch(r.b[r.i:])
	if g == nil {
		return false
	}
	num, frac, exp := g[0], g[2], g[3]
	if n := r.i + len(num); n < len(r.b) {
		// A fraction or exponent begun but without digits.
		if c := r.b[n]; c == '.' && frac == nil && exp == nil || (c == 'e' || c == 'E') && exp == nil {
			return false
		}
	}
	if _, err := strconv.ParseFloat(string(num), 64); err != nil {
		return false
	}
	r.i += len(num)
	return true
}

func (r *refSkip) str() bool {
	for r.i++; r.i < len(r.b); {
		switch c := r.b[r.i]; {
		case c == '"':
			r.i++
			return true
		case c == '\\':
			n, ok := escape(r.b, r.i)
			if !ok {
				return false
			}
			r.i = n
		case c < 0x20:
			return false
		default:
			ch, size := utf8.DecodeRune(r.b[r.i:])
			if ch == utf8.RuneError && size == 1 {
				return false
			}
			r.i += size
		}
	}
	return false
}

// sameSkip checks that skipValue and the reference accept the same value
// at the start of b and end it at the same byte.
func sameSkip(b []byte) error {
	ref := refSkip{scanner{b: b}}
	wantOK := ref.value()
	end, ok := skipValue(b, 0, 0)
	if ok != wantOK || ok && end != ref.i {
		return fmt.Errorf("skipValue(%q) = %d, %v; reference %d, %v", b, end, ok, ref.i, wantOK)
	}
	return nil
}

func TestSkipValue(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for _, v := range []string{
		`{}`, `[]`, `{"a":1}`, ` {"a" : [1, 2.5e3, -0, true, false, null, "x"] , "b":{}}`, `[{"a":[{}]},[]]`,
		`"plain ascii longer than eight bytes"`, `"caf\u00e9 \"q\" \\ \/ \b\f\n\r\t"`, `"\ud83d\ude00"`, `"\ud800"`, `"\udc00"`,
		"\"caf\u00e9 raw\"", "\"\xff\"", "\"a\x01b\"", "\"tab\tin\"", "\"1234567\x7f\"", "\"12345678\x80\"",
		`"unterminated`, `"a\"`, `"\x"`, `"\u12"`, `01`, `1.`, `1e`, `-`, `1e400`, `123456789012345678901234567890`,
		`0.0.`, `1.5e3.`, `1e5e`, `-01`, `-`, `[1,]`, `{"a":1,}`, `{"a"}`, `{1:2}`, `[1 2]`, `tru`, `nul`, `falsey`, `{"a":1}}`, `[`, `{`, `]`, `}`,
		// Keys walk leaves to scanString, strings and escapes across
		// word boundaries, numbers walk leaves to scanNumber.
		`{"k\u00e9y":1}`, "{\"k\u00e9y\":1}", `{"a\"b":1}`, "{\"a\x01\":1}", "{\"a\xff\":1}", `{"abc`, `{"abc"`, `{"abc":`,
		`{"abcdefghijklmnopqrstuvwxyz":1}`, `{ "a" : 1 , "b" : [ ] , "c" : { } }`, `{"a":1 ,"b":2}`, `[ ]`, `{ }`,
		`["abcdefgh\"ijklmnop"]`, `["1234567\n9"]`, `["123456\u00e9xx"]`, `["1234567\ud83d\ude00x"]`, `["12345678\ud83d"]`,
		`["1234567\u00e"]`, `["1234567\u"]`, `["1234567\"]`, `["1234567\`, "[\"1234567\xe9\"]", "[\"1234567\xc3\xa9x\"]",
		`["abcdefghijklmnopqrstuvwxyz0123456789\/\b\f\n\r\t\\\"abcdefghijklmno"]`,
		`-`, `-a`, `[-]`, `[-0]`, `[01]`, `[-01]`, `[1.]`, `[1.e5]`, `[1.5E+3]`, `[12345678901234567]`, `[1e400]`, `[-1e400]`,
		`[0.1234567890123456789]`, `[1234567890123456789012]`, `[-.5]`, `[.5]`, `[1,-2,0.5,-0.0]`, `[tru]`, `[nul]`, `[fals]`, `[true1]`,
		deep(maxDepth), deep(maxDepth + 1), `{"a":` + deep(maxDepth-1) + `}`, `{"a":` + deep(maxDepth) + `}`,
	} {
		if err := sameSkip([]byte(v)); err != nil {
			t.Error(err)
		}
		if err := sameSkip(append([]byte(v), skipPad...)); err != nil {
			t.Error(err)
		}
	}
	if _, ok := skipValue([]byte(deep(maxDepth)), 0, 0); !ok {
		t.Errorf("depth %d refused", maxDepth)
	}
	if _, ok := skipValue([]byte(deep(maxDepth+1)), 0, 0); ok {
		t.Errorf("depth %d accepted", maxDepth+1)
	}
}

// TestSpecialWord checks the word-at-a-time test against a byte-at-a-time
// one: every byte value at every position of a word, among plain bytes.
func TestSpecialWord(t *testing.T) {
	for c := range 256 {
		for pos := range 8 {
			for _, fill := range []byte{'a', ' ', '~', 0x7f, 0x21, 0x5d} {
				var w [8]byte
				for k := range w {
					w[k] = fill
				}
				w[pos] = byte(c)
				m := special(binary.LittleEndian.Uint64(w[:]))
				for k := range 8 {
					want := !strSafe[w[k]]
					if got := m&(0x80<<(8*k)) != 0; got != want {
						t.Fatalf("word %q: byte %d flagged %v, want %v", w, k, got, want)
					}
				}
			}
		}
	}
}
